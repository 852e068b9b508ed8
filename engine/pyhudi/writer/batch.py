"""Preparing a write's batch before the index sees it: the table's storage types and column order, the record keys
and partition paths (the key generator, on executors), one record per key (hoodie.combine.before.*, read by
WriteConfig.combine_before) and the delete flag of each record. Split from write_action.py: these are Spark column
transformations with no table state."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from pyhudi.merge import IS_DELETED_FIELD, payload_of
from pyhudi.spark.jvm import default_parallelism, map_in_arrow, quoted, select_sql, sql_type
from pyhudi.writer.file_writer import DELETE_COLUMN, PARTITION_PATH, RECORD_KEY
from pyhudi.writer.options import (DELETE_FLAG_COLUMN, PREPPED_COLUMNS, PREPPED_KEY_COLUMN, PREPPED_PARTITION_COLUMN,
                                   spark_schema)

_SEQ_COLUMN = "_pyhudi_seq"


def prepared_batch(incoming: DataFrame, target_schema: pa.Schema) -> DataFrame:
    """Cast to the table's storage types, in table column order; missing nullable columns become null. An
    upsert's delete flag (DELETE_FLAG_COLUMN, not a table column) travels along as the staging delete column."""
    target = spark_schema(target_schema)
    names = incoming.columns
    present = {c.lower(): c for c in names}
    columns = []
    for fld in target.fields:
        source = present.get(fld.name.lower())
        value = quoted(source) if source else "NULL"
        columns.append(f"CAST({value} AS {sql_type(fld.dataType)}) AS {quoted(fld.name)}")
    if DELETE_FLAG_COLUMN in names:
        columns.append(f"CAST({quoted(DELETE_FLAG_COLUMN)} AS boolean) AS {quoted(DELETE_COLUMN)}")
    columns += [quoted(c) for c in PREPPED_COLUMNS if c in names]
    return select_sql(incoming, columns)   # ~10 py4j calls, where Column objects cost ~27 per column


def keyed_batch(prepared: DataFrame, keygen) -> DataFrame:
    """RECORD_KEY and PARTITION_PATH appended by the key generator, batch by batch on the executors."""
    out_schema = T.StructType([f for f in prepared.schema.fields if f.name not in PREPPED_COLUMNS] + [
        T.StructField(RECORD_KEY, T.StringType(), False), T.StructField(PARTITION_PATH, T.StringType(), False)])
    return map_in_arrow(prepared, lambda batches: with_keys(keygen, batches), out_schema)


def with_keys(keygen, batches):
    """Executor: each arrow batch with RECORD_KEY and PARTITION_PATH appended (keyed_batch's UDF; the one-task
    write calls it in its own task, sparing a second Python worker)."""
    for batch in batches:
        # Auto-generated keys need the instant time: planning.with_auto_keys fills in the empty ones once it exists.
        keys = keygen.record_keys(batch) if keygen.record_key_fields else pa.repeat(pa.scalar(""), batch.num_rows)
        paths = keygen.partition_paths(batch)
        names = batch.schema.names
        if PREPPED_KEY_COLUMN in names:   # a key-less table's stored rows keep their key and partition
            keys = pc.fill_null(batch.column(names.index(PREPPED_KEY_COLUMN)), "")
            stored = batch.column(names.index(PREPPED_PARTITION_COLUMN))
            paths = pc.if_else(pc.is_valid(stored), stored, paths)
            keep = [i for i, n in enumerate(names) if n not in PREPPED_COLUMNS]
            batch = pa.RecordBatch.from_arrays([batch.column(i) for i in keep], names=[names[i] for i in keep])
        yield pa.RecordBatch.from_arrays(batch.columns + [keys, paths],
                                         names=batch.schema.names + [RECORD_KEY, PARTITION_PATH])


def dedup_batch(keyed: DataFrame, combine: bool, precombine: str | None, operation: str,
                is_global: bool, payload_class: str | None = None) -> DataFrame:
    """One record per key when the batch combines: the greatest ordering value, then the latest arrival. A global
    index keeps one record per key across partitions (Hudi's deduplicateRecords). A payload whose preCombine
    merges fields (PartialUpdateAvroPayload) folds each key's records as the writers do (_fold_per_key)."""
    if not combine:
        return keyed
    if operation != "delete" and payload_of(payload_class).precombine_fills:
        return _fold_per_key(keyed, precombine, is_global, payload_class)
    order = [F.col(_SEQ_COLUMN).desc()]
    if precombine and operation != "delete":
        order.insert(0, F.col(f"`{precombine}`").desc_nulls_last())
    keys = [RECORD_KEY] if is_global else [RECORD_KEY, PARTITION_PATH]
    window = Window.partitionBy(*keys).orderBy(*order)
    return (keyed.withColumn(_SEQ_COLUMN, F.monotonically_increasing_id())
            .withColumn("_pyhudi_rank", F.row_number().over(window))
            .filter(F.col("_pyhudi_rank") == 1).drop("_pyhudi_rank", _SEQ_COLUMN))


def _fold_per_key(keyed: DataFrame, precombine: str | None, is_global: bool, payload_class: str) -> DataFrame:
    """The payload's field-wise preCombine, which a window cannot express: each key's records meet in one task
    (a shuffle by key; arrival order numbered before it) and fold there with merge.keep_latest_per_key, the rule
    the writers apply to the records of a file group."""
    from pyhudi.merge import keep_latest_per_key

    numbered = keyed.withColumn(_SEQ_COLUMN, F.monotonically_increasing_id())
    schema = numbered.schema
    keys = [RECORD_KEY] if is_global else [RECORD_KEY, PARTITION_PATH]

    def fold(batches):
        batches = [b for b in batches if b.num_rows]
        if not batches:
            return
        table = pa.Table.from_batches(batches)
        scopes = [table] if is_global else [
            table.filter(pc.equal(table[PARTITION_PATH], p)) for p in pc.unique(table[PARTITION_PATH]).to_pylist()]
        for scope in scopes:
            yield from keep_latest_per_key(scope, precombine, _SEQ_COLUMN, payload_class).select(
                table.column_names).to_batches()

    partitions = default_parallelism(keyed.sparkSession)
    return numbered.repartition(partitions, *keys).mapInArrow(fold, schema).drop(_SEQ_COLUMN)


def flag_deletes(records: DataFrame, operation: str, payload_class: str, precombine: str | None) -> DataFrame:
    """DELETE_COLUMN on every record: the delete operation, `_hoodie_is_deleted` or the upsert's delete flag."""
    # Hudi's delete (and EmptyHoodieRecordPayload) carries no ordering value (natural order): it always wins
    if operation == "delete" or payload_of(payload_class).deletes_all:
        records = records.withColumn(DELETE_COLUMN, F.lit(True))
        if precombine in records.columns:
            records = records.withColumn(precombine, F.lit(None).cast(records.schema[precombine].dataType))
        return records
    deleted = F.lit(False)
    for flag in (IS_DELETED_FIELD, DELETE_COLUMN):
        if flag in records.columns:
            deleted = deleted | F.coalesce(F.col(flag), F.lit(False))
    return records.withColumn(DELETE_COLUMN, deleted)
