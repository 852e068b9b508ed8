"""pyhudi's SQL layer: Hudi's Spark SQL (DDL, DML, time travel, CALL procedures) over Spark's session catalog.

`pyhudi.sql(spark, text)` is the entry point (pyhudi.sqlext.router.sql); `pyhudi.sqlext.procedures` holds the
CALL procedures registry. The package is not called `sql` so that `pyhudi.sql` stays a function.
"""

from pyhudi.sqlext.router import sql  # noqa: F401
