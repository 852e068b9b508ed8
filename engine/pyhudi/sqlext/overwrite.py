"""What an INSERT OVERWRITE replaces, by Hudi 0.14/0.15's rule (ProvidesHoodieConfig.deduceOverwriteConfig):

- `hoodie.datasource.write.operation` = insert_overwrite_table / insert_overwrite, when given, decides;
- otherwise the mode is `hoodie.datasource.overwrite.mode` (TBLPROPERTIES, SET or statement options), else
  `spark.sql.sources.partitionOverwriteMode` (Spark's default STATIC); anything but STATIC/DYNAMIC is an error;
- a non-partitioned table, or STATIC without a PARTITION clause: the whole table (insert_overwrite_table);
- DYNAMIC: the partitions the query writes (insert_overwrite);
- STATIC with a PARTITION clause: every existing partition matching its static values (all partitions when it
  names only dynamic columns), as Spark's static overwrite, plus those the query writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import SparkSession
from sqlglot import exp

from pyhudi import config as C
from pyhudi.errors import SqlError

OVERWRITE_MODE = "hoodie.datasource.overwrite.mode"
SPARK_OVERWRITE_MODE = "spark.sql.sources.partitionOverwriteMode"
_OVERWRITE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table")


@dataclass(frozen=True)
class Overwrite:
    operation: str                         # insert_overwrite_table | insert_overwrite
    static_partitions: tuple[str, ...] = ()   # existing partitions a static overwrite replaces even if not written


def overwrite_mode(spark: SparkSession, table: str, options: dict) -> str:
    """STATIC or DYNAMIC: the Hudi option, else Spark's partitionOverwriteMode."""
    given = options.get(OVERWRITE_MODE)
    source = OVERWRITE_MODE if given else SPARK_OVERWRITE_MODE
    mode = str(given or spark.conf.get(SPARK_OVERWRITE_MODE, "STATIC")).strip().upper()
    if mode not in ("STATIC", "DYNAMIC"):
        raise SqlError(f"INSERT OVERWRITE {table}: {source} is {mode.lower()!r}; use STATIC (without a PARTITION "
                       "clause the whole table is replaced) or DYNAMIC (only the partitions the query writes), e.g. "
                       f"SET {OVERWRITE_MODE}=DYNAMIC; the table was not changed")
    return mode


def plan(spark: SparkSession, entry, options: dict, static: dict[str, exp.Expression], spec_given: bool,
         partition_fields: list[str]) -> Overwrite:
    """The operation (and static partitions) of an INSERT OVERWRITE with these combined write options."""
    operation = str(options.get(C.OPERATION.key) or "").lower()
    if operation == "insert_overwrite_table":
        return Overwrite("insert_overwrite_table")
    if operation == "insert_overwrite":
        return Overwrite("insert_overwrite")
    is_static = overwrite_mode(spark, entry.name, options) == "STATIC"
    if not partition_fields or (is_static and not spec_given):
        return Overwrite("insert_overwrite_table")
    if not is_static:
        return Overwrite("insert_overwrite")
    if not static:   # static mode naming only dynamic columns: every partition matches (Spark deletes them all)
        return Overwrite("insert_overwrite_table")
    return Overwrite("insert_overwrite", _matching_partitions(spark, entry, options, static))


def _matching_partitions(spark: SparkSession, entry, options: dict, static: dict[str, exp.Expression]) -> tuple:
    """Existing partition paths whose values equal the PARTITION clause's static values."""
    from pyhudi.keygen import build_key_generator
    from pyhudi.table import HudiTable

    table = HudiTable.load(entry.location)
    keygen = build_key_generator(options, table.properties.name)
    types = {f.name.lower(): f.dataType for f in entry.data_fields}
    wanted = {}
    for column, value in static.items():
        text = spark.sql(f"SELECT CAST(CAST(({value.sql('spark')}) AS {types[column].simpleString()}) AS STRING)")
        wanted[column] = text.first()[0]
    matches = []
    for path in table.view().partitions():
        values = {k.lower(): v for k, v in keygen.partition_values(path).items()}
        if all(values.get(column) == text for column, text in wanted.items()):
            matches.append(path)
    return tuple(matches)
