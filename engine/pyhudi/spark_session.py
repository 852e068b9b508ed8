"""Spark sessions with pyhudi activated."""

from __future__ import annotations

import os
import socket
import sys

from pyspark import SparkContext
from pyspark.sql import SparkSession

from pyhudi.spark import metastore
from pyhudi.storage.object_store import environment_from_spark_conf


def activate(spark: SparkSession) -> SparkSession:
    """Register the `hudi` Python data source in a session the caller built."""
    from pyhudi.reader.datasource import HudiDataSource
    spark.dataSource.register(HudiDataSource)
    return spark


def session(master: str = "local[*]", warehouse_dir: str | None = None, app_name: str = "pyhudi",
            hive: bool = True, metastore_url: str | None = None, remote: str | None = None,
            **spark_conf) -> SparkSession:
    """A local Spark session with pyhudi activated; with `remote` (or SPARK_REMOTE) `sc://host:port`, a Spark
    Connect session to that server instead (`spark_conf` then holds runtime settings only; the server's own
    settings are its operator's).

    The Spark SQL warehouse and the embedded Derby metastore live in `warehouse_dir` (default: ./spark-warehouse),
    so tables registered in the catalog survive between sessions. Derby serves one process: with `metastore_url`
    (or PYHUDI_METASTORE_URL) `postgresql://user:password@host:port/db`, the catalog is a Hive metastore in
    PostgreSQL that several processes share (pyhudi/spark/metastore.py). Extra Spark settings are passed as keyword
    arguments with Spark's names, e.g. `session(**{"spark.sql.shuffle.partitions": "4"})`.

    Every setting that changes what a query or a write gives keeps Spark's default (the session time zone is the
    JVM's, `spark.sql.sources.partitionOverwriteMode` is STATIC, ...): the same SQL gives what Spark + Hudi give.
    The session changes only what cannot change results: no UI or console progress bar, 8 shuffle partitions
    (Spark's 200 are too many for a local session), Arrow transfer between the JVM and Python over a Unix domain
    socket, and the warehouse and metastore location.
    """
    # S3A's endpoint and credentials (spark.hadoop.fs.s3a.*) reach pyhudi's own I/O as the AWS environment: here,
    # and in the executors through spark.executorEnv (set before they start)
    s3a_environment = environment_from_spark_conf(spark_conf)
    os.environ.update(s3a_environment)
    remote = remote or os.environ.get("SPARK_REMOTE")
    if remote:
        builder = SparkSession.builder.remote(remote).appName(app_name)
        for key, value in spark_conf.items():
            builder = builder.config(key, value)
        return activate(builder.getOrCreate())
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    warehouse = os.path.abspath(warehouse_dir or "spark-warehouse")
    os.makedirs(warehouse, exist_ok=True)
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.sql.warehouse.dir", warehouse)
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if hasattr(socket, "AF_UNIX") and sys.platform != "win32":
        # Python workers talk to the JVM over a Unix domain socket (Spark 4.1+, SPARK-51688) instead of local
        # TCP: every Python task over TCP paid ~40-60 ms of latency (a 2-task mapInArrow job of one row each took
        # 0.17 s against 0.05 s without Python; 0.105 s over the socket). A pyhudi write runs one such job, a
        # merge-on-read scan two.
        builder = builder.config("spark.python.unix.domain.socket.enabled", "true")
    metastore_url = metastore_url or os.environ.get(metastore.METASTORE_URL_ENV)
    if metastore_url:
        catalog = metastore.postgres_settings(metastore_url)
    else:
        catalog = metastore.derby_settings(warehouse)
        if hive and SparkContext._active_spark_context is None:
            metastore.check_derby_free(warehouse)
    executor_env = {f"spark.executorEnv.{name}": value for name, value in s3a_environment.items()}
    for key, value in {**catalog, **executor_env, **spark_conf}.items():
        builder = builder.config(key, value)
    if hive:
        builder = builder.enableHiveSupport()
    spark = builder.getOrCreate()
    if metastore_url:
        metastore.prepare_postgres_schema(spark, catalog)
    _quiet(spark, _NOISY_LOGGERS)
    return activate(spark)


# Spark first tries to store a data source table's schema the Hive way, which the metastore refuses for `USING hudi`
# tables; Spark then keeps the schema in table properties (it works), but Hive logs an ERROR line for each attempt.
_NOISY_LOGGERS = ("org.apache.hadoop.hive.metastore.HiveAlterHandler",)


def _quiet(spark: SparkSession, loggers) -> None:
    jvm = spark.sparkContext._jvm
    for name in loggers:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, jvm.org.apache.logging.log4j.Level.OFF)

