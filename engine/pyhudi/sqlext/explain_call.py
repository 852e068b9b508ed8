"""`CALL explain_write(table => 't' | path => '/p', query => 'SELECT ...', operation => 'upsert')`: the dry run of
writing the query's rows into the table (pyhudi.explain_write), as rows.

The options are those an INSERT INTO the table would use (TBLPROPERTIES, then the session's SET hoodie.*), and the
operation is INSERT INTO's (upsert for a table with a preCombineField, else hoodie.spark.sql.insert.into.operation,
default insert) unless `operation` names one (upsert, insert, bulk_insert, delete)."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from pyhudi import config as C
from pyhudi.errors import SqlError

_S, _L = T.StringType(), T.LongType()
OUTPUT = T.StructType([T.StructField(n, t, True) for n, t in (
    ("section", _S), ("partition_path", _S), ("file_id", _S), ("action", _S), ("num_inserts", _L),
    ("num_updates", _L), ("num_deletes", _L), ("existing_bytes", _L), ("bytes_written", _L),
    ("metric", _S), ("value", _S))])


def explain_rows(spark: SparkSession, path: str, options: dict, args: dict) -> list[tuple]:
    """Rows of OUTPUT: section 'file_group' (one per file group the write would touch: partition_path ..
    bytes_written), then 'summary' and 'index' rows (metric, value)."""
    from pyhudi.client.explain import explain_write
    from pyhudi.sqlext.dml import insert_operation
    from pyhudi.sqlext.query import select
    from pyhudi.table import HudiTable

    query = args.get("query")
    if not query or not str(query).strip():
        raise SqlError("explain_write needs query => 'SELECT ...' (the rows the write would take)")
    options = dict(options)
    version = "6"
    if HudiTable.exists(path):   # its identity (key, ordering field) last, as an INSERT INTO (dml.table_write_options)
        properties = HudiTable.load(path).properties
        options.update(properties.write_options())
        version = properties.version
    options[C.OPERATION.key] = str(args.get("operation") or insert_operation(options, version)).lower()
    # as an INSERT INTO (sqlext.dml.write_rows): a table with a key and an ordering field keeps one row per key
    options.setdefault(C.COMBINE_BEFORE_INSERT.key,
                       str(bool(options.get(C.PRECOMBINE.key) and options.get(C.RECORD_KEY.key))).lower())
    plan = explain_write(select(spark, str(query)), path, options)
    rows = [("file_group", g.partition_path, g.file_id, g.action, g.num_inserts, g.num_updates, g.num_deletes,
             g.existing_bytes, g.bytes_written, None, None) for g in plan.file_groups]
    head = {"operation": plan.operation, "table_type": plan.table_type, "index_type": plan.index_type,
            "partitions": ",".join(plan.partitions)}
    for section, values in (("summary", {**head, **plan.summary}),
                            ("index", {k: v for k, v in plan.index_stats.items() if k != "index_type"})):
        rows += [(section, None, None, None, None, None, None, None, None, k, None if v is None else str(v))
                 for k, v in values.items()]
    return rows
