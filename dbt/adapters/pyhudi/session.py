"""The in-process Spark session dbt runs on, and how a statement reaches the pyhudi SQL layer.

One SparkSession per process: an already running one (a notebook, a test suite, a second `dbtRunner.invoke`) is
reused, otherwise `pyhudi.session(...)` starts it from the profile. dbt shares it with its caller, like dbt-spark's
session mode (a `newSession()` would not see the Python data source `hudi`: Spark keeps those per session).
Per-model Hudi settings (overwrite mode, write operation) therefore never go to the session (`SET` would race
between dbt threads): a materialization starts its statement with `/* pyhudi.options {...} */`, and the cursor
hands those options to `pyhudi.sql` for that one statement.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import threading
from typing import Optional

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtRuntimeError

logger = AdapterLogger("pyhudi")

_lock = threading.Lock()
_activated: set = set()     # the sessions (JVM ids, Connect session ids) where `hudi` is registered

# SQL settings dbt needs on the session (dbt-spark's session mode leaves these gaps open).
DBT_SQL_CONF = {
    # seeds insert `cast(%s as date)`-style literals into declared columns; Spark 4's ANSI store assignment
    # rejects some of those casts in INSERT ... VALUES.
    "spark.sql.storeAssignmentPolicy": "LEGACY",
}


def _running_session():
    """The process's SparkSession if one is running (any thread), else None."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    sc = SparkContext._active_spark_context
    if sc is not None and getattr(sc, "_jsc", None) is not None:
        return SparkSession.builder.getOrCreate()
    return None


def spark_session(master: str, warehouse: str, spark_conf: dict, sql_conf: dict, metastore_url: str | None = None,
                  remote: str | None = None):
    """dbt's SparkSession: reuse the running one or start it once with pyhudi.session(...); with `remote`, a
    Spark Connect session to that server (spark_conf then holds runtime settings only)."""
    import pyhudi

    with _lock:
        if remote:
            logger.debug(f"pyhudi: connecting to the Spark Connect server {remote}")
            base = pyhudi.session(remote=remote, app_name="dbt-pyhudi", **{k: str(v) for k, v in spark_conf.items()})
        else:
            base = _running_session()
        if base is None:
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
            logger.debug(f"pyhudi: starting Spark ({master}) with warehouse {warehouse}")
            base = pyhudi.session(master=master, warehouse_dir=warehouse, app_name="dbt-pyhudi", hive=True,
                                  metastore_url=metastore_url,
                                  **{k: str(v) for k, v in spark_conf.items()})
            base.sparkContext.setLogLevel("ERROR")
        _activate(base)
        for name, value in {**DBT_SQL_CONF, **sql_conf}.items():
            base.conf.set(name, str(value))
        return base


def _activate(spark):
    """Register pyhudi's `hudi` data source unless the session (or one sharing its state) already has it."""
    import pyhudi

    from pyhudi.spark.jvm import is_connect

    key = ("connect", spark.session_id) if is_connect(spark) else id(spark._jsparkSession)
    if key not in _activated:
        try:
            pyhudi.activate(spark)
        except Exception as exc:
            if "DATA_SOURCE_ALREADY_EXISTS" not in str(exc):
                raise
        _activated.add(key)
    return spark


# the comments dbt puts before a statement (its query comment, then ours), and our options comment among them
_LEADING_COMMENTS = re.compile(r"^(\s*/\*.*?\*/)*\s*", re.DOTALL)
_OPTIONS = re.compile(r"/\*\s*pyhudi\.options\s+(\{.*?\})\s*\*/", re.DOTALL)


def statement_options(sql: str) -> tuple:
    """(statement without our options comment, its options or None); only the leading comments are searched."""
    head = _LEADING_COMMENTS.match(sql).group(0)
    found = _OPTIONS.search(head)
    if found is None:
        return sql, None
    try:
        options = json.loads(found.group(1))
    except ValueError as exc:
        raise DbtRuntimeError(f"pyhudi: unreadable statement options {found.group(1)!r}: {exc}") from None
    rest = head[:found.start()] + head[found.end():] + sql[len(head):]
    return rest.strip(), {str(k): str(v) for k, v in options.items()}


def run_sql(spark, sql: str):
    """Every statement dbt sends goes through the SQL layer (Hudi DDL/DML and CALL; the rest goes to Spark)."""
    import pyhudi

    sql_fn = getattr(pyhudi, "sql", None)
    text, options = statement_options(sql)
    if sql_fn is None:      # the SQL layer is not installed in this build: plain Spark SQL
        return spark.sql(text)
    if options is None:
        return sql_fn(spark, text)
    if "options" in inspect.signature(sql_fn).parameters:
        return sql_fn(spark, text, options=options)
    # an SQL layer that reads the options comment only where a statement begins
    return sql_fn(spark, "/* pyhudi.options " + json.dumps(options) + " */\n" + text)


def last_commits() -> list:
    """The Hudi commits of this thread's last `pyhudi.sql` call ([] without the SQL layer)."""
    try:
        from pyhudi.sqlext.commits import last_commits as collected
    except ImportError:
        return []
    return collected()


def partition_columns(spark, schema: Optional[str], identifier: str) -> list:
    """A table's partition columns from the session catalog ([] for unknown tables and views)."""
    from pyhudi.sqlext import catalog
    entry = catalog.lookup(spark, None, schema, identifier)
    return list(entry.partition_columns) if entry is not None else []
