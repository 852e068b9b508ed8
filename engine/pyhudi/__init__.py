"""pyhudi: Apache Hudi tables (format version 6) in pure Python on PySpark.

    spark = pyhudi.session()
    trips = pyhudi.Table(spark, "/data/trips")
    trips.write(df, {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id"})
    trips.read().show()
    pyhudi.sql(spark, "CALL run_clean(table => 'trips')")

`pyhudi.Table` (pyhudi/table_api.py) is the front door; the functions below are thin shims over its methods, kept
for scripts and for the SQL/dbt examples in the docs. Importing pyhudi starts no Spark.
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any  # noqa: E402

from pyhudi.errors import PyHudiError  # noqa: E402


from pyhudi.table_api import Table  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from pyhudi.client.explain import WritePlan
    from pyhudi.client.maintenance import CleanResult
    from pyhudi.client.table_services import ServicesReport
    from pyhudi.client.undo import RollbackResult
    from pyhudi.client.write import WriteResult
    from pyhudi.table_api import InstantLike
    from pyhudi.timeline import Instant


def session(*args: Any, **kwargs: Any) -> "SparkSession":
    """A Spark session with pyhudi activated (the `hudi` data source, Hudi's SQL); see pyhudi.spark_session."""
    from pyhudi.spark_session import session as _session
    return _session(*args, **kwargs)


def activate(spark: "SparkSession") -> "SparkSession":
    """Activate pyhudi on a session you built: registers the Python data source `hudi`."""
    from pyhudi.spark_session import activate as _activate
    return _activate(spark)


def sql(spark: "SparkSession", text: str, options: dict | None = None) -> "DataFrame":
    """Run Spark SQL with Hudi's statements (CREATE TABLE ... USING hudi, INSERT/UPDATE/DELETE/MERGE, time
    travel, CALL procedures); other statements go to spark.sql unchanged. Returns the last statement's DataFrame.
    `options` (hoodie.* keys) apply to every Hudi write of this call, over session SET and TBLPROPERTIES."""
    from pyhudi.sqlext.router import sql as _sql
    return _sql(spark, text, options)


def write(df: "DataFrame", path: str, options: dict | None = None, mode: str = "append") -> "WriteResult":
    """Table(spark, path).write(df, options, mode): one Hudi commit; the WriteResult names its instant."""
    return Table(df.sparkSession, path).write(df, options, mode)


def read(spark: "SparkSession", path: str, options: dict | None = None) -> "DataFrame":
    """Table(spark, path).read(options): snapshot, read_optimized, incremental or time-travel query."""
    return Table(spark, path).read(options)


def explain_write(df: "DataFrame", path: str, options: dict | None = None) -> "WritePlan":
    """Table(spark, path).explain_write(df, options): what the write would do, without writing anything."""
    return Table(df.sparkSession, path).explain_write(df, options)


def delete_partitions(spark: "SparkSession", path: str, partitions: list[str],
                      options: dict | None = None) -> "WriteResult":
    """Table(spark, path).delete_partitions(partitions, options): Hudi's delete_partition replacecommit."""
    return Table(spark, path).delete_partitions(partitions, options)


def compact(spark: "SparkSession", path: str, op: str = "scheduleAndExecute", instant_time: "InstantLike | None" = None,
            options: dict | None = None) -> "list[Instant]":
    """Table(spark, path).maintenance.compact(op, instant_time, options), as Hudi's run_compaction."""
    return Table(spark, path).maintenance.compact(op, instant_time, options)


def cluster(spark: "SparkSession", path: str, op: str = "scheduleAndExecute", instant_time: "InstantLike | None" = None,
            options: dict | None = None) -> "list[Instant]":
    """Table(spark, path).maintenance.cluster(op, instant_time, options), as Hudi's run_clustering."""
    return Table(spark, path).maintenance.cluster(op, instant_time, options)


def clean(spark: "SparkSession", path: str, options: dict | None = None) -> "CleanResult | None":
    """Table(spark, path).maintenance.clean(options): the cleaner now; None when nothing was due."""
    return Table(spark, path).maintenance.clean(options)


def archive(spark: "SparkSession", path: str, options: dict | None = None) -> "list[Instant]":
    """Table(spark, path).maintenance.archive(options): the archived instants, oldest first."""
    return Table(spark, path).maintenance.archive(options)


def rollback_to_instant(spark: "SparkSession", path: str, instant_time: "InstantLike") -> "RollbackResult":
    """Table(spark, path).rollback(instant_time): undo the latest completed commit."""
    return Table(spark, path).rollback(instant_time)


def create_savepoint(spark: "SparkSession", path: str, instant_time: "InstantLike | None" = None, user: str = "",
                     comments: str = "") -> "Instant":
    """Table(spark, path).savepoints.create(...): savepoint a completed commit (default the latest)."""
    return Table(spark, path).savepoints.create(instant_time, user, comments)


def delete_savepoint(spark: "SparkSession", path: str, instant_time: "InstantLike") -> None:
    """Table(spark, path).savepoints.delete(instant_time)."""
    Table(spark, path).savepoints.delete(instant_time)


def show_savepoints(spark: "SparkSession", path: str) -> "list[Instant]":
    """Table(spark, path).savepoints.list(): the savepoints, oldest first."""
    return Table(spark, path).savepoints.list()


def restore_to_savepoint(spark: "SparkSession", path: str, instant_time: "InstantLike") -> "RollbackResult":
    """Table(spark, path).savepoints.restore(instant_time): undo every commit after the savepoint."""
    return Table(spark, path).savepoints.restore(instant_time)


def upgrade_table(spark: "SparkSession", path: str, to_version: "str | int", options: dict | None = None) -> bool:
    """Table(spark, path).upgrade(to_version, options): version 6 to 8 or 9, or 8 to 9, as Hudi's upgrade_table."""
    return Table(spark, path).upgrade(to_version, options)


def run_table_services(spark: "SparkSession", paths: "str | list[str]", services: "list[str] | None" = None, options: dict | None = None, rounds: int = 1,
                       interval_seconds: float = 0.0) -> "ServicesReport":
    """Compaction, clustering, clean and archive (or `services`) on each table of `paths`, `rounds` times (0: until
    interrupted), beside live writers, as Hudi's HoodieMultiTableServicesMain (the `pyhudi services` command)."""
    from pyhudi.client.table_services import run_table_services as _run
    return _run(spark, [str(p) for p in ([paths] if isinstance(paths, str) else paths)], services, options,
                rounds=rounds, interval_seconds=interval_seconds)


__all__ = ["PyHudiError", "Table", "__version__", "activate", "archive", "clean", "cluster", "compact",
           "create_savepoint", "delete_partitions", "delete_savepoint", "explain_write", "read",
           "restore_to_savepoint", "rollback_to_instant", "run_table_services", "session", "show_savepoints", "sql",
           "upgrade_table", "write"]
