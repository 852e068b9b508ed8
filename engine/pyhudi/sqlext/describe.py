"""DESCRIBE [EXTENDED | FORMATTED] and SHOW TBLPROPERTIES for Hudi tables, from the session catalog's entry.

Why this exists: Spark loads a catalog table whose provider is a Python data source as a `PythonTable`
(PythonDataSourceV2.getTable keeps only the schema and drops the catalog's partitioning and properties), so
Spark's own v2 DESCRIBE, SHOW TBLPROPERTIES and `spark.catalog.getTable/listColumns` show no comment, no
provider, no partition columns and no properties for such a table, although the metastore keeps all of them.
`pyhudi.sql` answers these two statements from the metastore entry instead, with the rows Spark's v1 commands
give for a data-source table (DescribeTableCommand, ShowTablePropertiesCommand).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from pyhudi.sqlext import catalog

_DESCRIBE_SCHEMA = T.StructType([T.StructField("col_name", T.StringType(), False),
                                 T.StructField("data_type", T.StringType(), False),
                                 T.StructField("comment", T.StringType(), True)])
# Spark's reserved table properties (CatalogV2Util.TABLE_RESERVED_PROPERTIES): fields of the table, not properties
RESERVED = {"comment", "collation", "location", "provider", "owner", "external", "is_managed_location"}
_PROPERTIES_SCHEMA = T.StructType([T.StructField("key", T.StringType(), False),
                                   T.StructField("value", T.StringType(), False)])


def _column_rows(fields) -> list[tuple]:
    return [(f.name, f.dataType.simpleString(), (f.metadata or {}).get("comment")) for f in fields]


def describe(spark: SparkSession, entry: catalog.CatalogEntry, extended: bool) -> DataFrame:
    """The columns, `# Partition Information` and (EXTENDED / FORMATTED) `# Detailed Table Information`."""
    rows = _column_rows(entry.schema.fields)
    if entry.partition_columns:
        by_name = {f.name.lower(): f for f in entry.schema.fields}
        rows += [("# Partition Information", "", ""), ("# col_name", "data_type", "comment")]
        rows += _column_rows([by_name[c.lower()] for c in entry.partition_columns if c.lower() in by_name])
    if extended:
        rows += [("", "", ""), ("# Detailed Table Information", "", "")]
        rows += [(key, _detail(entry, key, value), "") for key, value in catalog.detailed_information(spark, entry)
                 if key not in _SHOWN_ABOVE]
    return spark.createDataFrame(rows, _DESCRIBE_SCHEMA)


# Spark's v1 DESCRIBE leaves these out of `# Detailed Table Information`: the rows above already show them
_SHOWN_ABOVE = {"Partition Columns", "Schema"}


def _detail(entry: catalog.CatalogEntry, key: str, value: str) -> str:
    """`Table Properties` as Spark's v1 DESCRIBE shows a data source table's: `[k=v, ...]` sorted, without the
    reserved keys (owner, provider ...) that Spark's v2 CREATE TABLE stored beside them."""
    if key != "Table Properties":
        return value
    kept = sorted((k, v) for k, v in entry.properties.items() if k not in RESERVED)
    return "[" + ", ".join(f"{k}={v}" for k, v in kept) + "]"


def show_properties(spark: SparkSession, entry: catalog.CatalogEntry, key: str | None) -> DataFrame:
    """SHOW TBLPROPERTIES t [(key)]: every property as key/value rows, or the one asked for (as Spark words a
    missing key)."""
    if key is None:
        rows = sorted((k, v) for k, v in entry.properties.items() if k not in RESERVED)
    elif key in entry.properties:
        rows = [(key, entry.properties[key])]
    else:
        rows = [(key, f"Table {entry.qualified.replace('`', '')} does not have property: {key}")]
    return spark.createDataFrame(rows, _PROPERTIES_SCHEMA)
