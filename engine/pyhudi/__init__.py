"""pyhudi: Apache Hudi tables (format version 6) in pure Python on PySpark.

    spark = pyhudi.session()
    pyhudi.write(df, "/data/trips", {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id"})
    pyhudi.read(spark, "/data/trips").show()
"""

__version__ = "0.1.0"

from pyhudi.errors import PyHudiError  # noqa: E402


def session(*args, **kwargs):
    from pyhudi.spark_session import session as _session
    return _session(*args, **kwargs)


def activate(spark):
    from pyhudi.spark_session import activate as _activate
    return _activate(spark)


def write(df, path, options=None, mode="append"):
    """Write a DataFrame to the Hudi table at `path`; returns a WriteResult: .instant_time (also its str()),
    .operation, .write_stats and .index_stats (hoodie.index.type picks the index)."""
    from pyhudi.client.write import write as _write
    return _write(df, path, options, mode)


def read(spark, path, options=None):
    from pyhudi.reader import read as _read
    return _read(spark, path, options)


def compact(spark, path, op="scheduleAndExecute", instant_time=None, options=None) -> list:
    from pyhudi.client.compaction import compact as _compact
    return _compact(spark, path, op, instant_time, options)


def cluster(spark, path, op="scheduleAndExecute", instant_time=None, options=None) -> list:
    """Hudi clustering (op: schedule, execute, scheduleAndExecute): rewrites small file groups into fewer,
    sorted by hoodie.clustering.plan.strategy.sort.columns; returns the clustering instants acted on."""
    from pyhudi.client.clustering import cluster as _cluster
    return _cluster(spark, path, op, instant_time, options)


def delete_partitions(spark, path, partitions, options=None) -> str:
    from pyhudi.client.write import delete_partitions as _delete_partitions
    return _delete_partitions(spark, path, partitions, options)


def rollback_to_instant(spark, path, instant_time) -> bool:
    from pyhudi.services.rollback import rollback_to_instant as _rollback_to_instant
    return _rollback_to_instant(spark, path, instant_time)


def create_savepoint(spark, path, instant_time=None, user="", comments="") -> str:
    from pyhudi.services.savepoint import create_savepoint as _create_savepoint
    return _create_savepoint(spark, path, instant_time, user, comments)


def delete_savepoint(spark, path, instant_time) -> bool:
    from pyhudi.services.savepoint import delete_savepoint as _delete_savepoint
    return _delete_savepoint(spark, path, instant_time)


def show_savepoints(spark, path) -> list:
    from pyhudi.services.savepoint import show_savepoints as _show_savepoints
    return _show_savepoints(spark, path)


def restore_to_savepoint(spark, path, instant_time) -> bool:
    from pyhudi.services.rollback import restore_to_savepoint as _restore_to_savepoint
    return _restore_to_savepoint(spark, path, instant_time)


def clean(spark, path, options=None) -> dict | None:
    from pyhudi.services.clean import clean as _clean
    return _clean(spark, path, options)


def archive(spark, path, options=None) -> list:
    from pyhudi.services.archive import archive as _archive
    return _archive(spark, path, options)


def run_table_services(spark, paths, services=None, options=None, rounds=1, interval_seconds=0.0):
    """Compaction, clustering, clean and archive (or `services`) on each table of `paths`, `rounds` times (0: until
    interrupted), beside live writers, as Hudi's HoodieMultiTableServicesMain (the `pyhudi services` command).
    Returns a ServicesReport (.runs, .failed)."""
    from pyhudi.client.table_services import run_table_services as _run
    return _run(spark, [str(p) for p in ([paths] if isinstance(paths, str) else paths)], services, options,
                rounds=rounds, interval_seconds=interval_seconds)


def sql(spark, text, options=None):
    """Run Spark SQL with Hudi's statements (CREATE TABLE ... USING hudi, INSERT/UPDATE/DELETE/MERGE, time
    travel, CALL procedures); other statements go to spark.sql unchanged. Returns the last statement's DataFrame.
    `options` (hoodie.* keys) apply to every Hudi write of this call, over session SET and TBLPROPERTIES."""
    from pyhudi.sqlext.router import sql as _sql
    return _sql(spark, text, options)


__all__ = ["PyHudiError", "activate", "archive", "clean", "cluster", "compact", "sql", "create_savepoint", "delete_partitions", "delete_savepoint",
           "restore_to_savepoint", "rollback_to_instant", "run_table_services", "show_savepoints", "read", "session", "write", "__version__"]

# pyhudi.Table: one table with these functions as methods (each method calls the function above)
from pyhudi.table_api import Table  # noqa: E402
__all__ += ["Table"]


def explain_write(df, path, options=None):
    """What pyhudi.write(df, path, options) would do, without writing anything (a dry run of the same Spark
    jobs): partitions and file groups touched, index pruning, bytes rewritten or appended. Returns a WritePlan."""
    from pyhudi.client.explain import explain_write as _explain_write
    return _explain_write(df, path, options)


__all__ += ["explain_write"]
