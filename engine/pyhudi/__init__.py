"""pyhudi: Apache Hudi tables (format version 6) in pure Python on PySpark.

    spark = pyhudi.session()
    pyhudi.write(df, "/data/trips", {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id"})
    pyhudi.read(spark, "/data/trips").show()
"""

__version__ = "0.1.0"

from pyhudi.errors import PyHudiError  # noqa: E402


def session(*args, **kwargs):
    from pyhudi.session import session as _session
    return _session(*args, **kwargs)


def activate(spark):
    from pyhudi.session import activate as _activate
    return _activate(spark)


def write(df, path, options=None, mode="append") -> str:
    from pyhudi.writer.client import write as _write
    return _write(df, path, options, mode)


def read(spark, path, options=None):
    from pyhudi.reader import read as _read
    return _read(spark, path, options)


def compact(spark, path, op="scheduleAndExecute", instant_time=None, options=None) -> list:
    from pyhudi.services.compaction import compact as _compact
    return _compact(spark, path, op, instant_time, options)


__all__ = ["PyHudiError", "activate", "compact", "read", "session", "write", "__version__"]
