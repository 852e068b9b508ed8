"""The reference: Hudi's documented write semantics computed with plain Spark DataFrame operations, never pyhudi.

Identity of a record = record key + partition columns (Hudi's default, partition-scoped index: SIMPLE, BLOOM,
BUCKET), or the record key alone under a global index (GLOBAL_SIMPLE, GLOBAL_BLOOM; `Shape.identity`). Under a
global index (Hudi 0.14/0.15 HoodieIndexUtils.tagGlobalLocationBackToRecords) an upsert / MERGE of a key stored in
another partition either moves it (update.partition.path=true: the merged record goes to its new partition and
the stored copy is deleted; the incoming record always wins the merge here, see below) or updates it in place
(false: the record keeps its stored partition path, its data columns - the partition columns too - are the
incoming ones). The reference keeps each record's partition path in hidden columns (`Shape.locations`), which
INSERT OVERWRITE and TRUNCATE PARTITION act on. Inserts and INSERT OVERWRITE do not look up the index
(HoodieIndex.requiresTagging: only upsert and delete; BUCKET tags inserts with their bucket only), so they never
remove a copy stored elsewhere. The batch is deduplicated by identity (HoodieWriteHelper.deduplicateRecords keys
by the record key alone under a global index). The ordering
(preCombine) field picks the greatest value among a batch's rows of one identity; against stored rows the
incoming row wins (OverwriteWithLatestAvroPayload, Hudi 0.x's default) — the generators only send greater ordering
values to stored records, so DefaultHoodieRecordPayload would give the same rows.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from cf_shapes import Shape


def _cols(names):
    return [F.col(f"`{n}`") for n in names]


def _with_own_locations(shape: Shape, df: DataFrame) -> DataFrame:
    """Rows written where their partition columns say (a new record, or one a global index moves)."""
    return df.select(*_cols(shape.names), *[F.col(f"`{p}`").alias(loc)
                                             for p, loc in zip(shape.partitions, shape.locations)])


def located(shape: Shape, ref: DataFrame) -> DataFrame:
    """`ref` with its location columns (a reference built without them - the dbt harness's, a hand-made one - has
    every record where its partition columns say)."""
    missing = [(p, loc) for p, loc in zip(shape.partitions, shape.locations) if loc not in ref.columns]
    for p, loc in missing:
        ref = ref.withColumn(loc, F.col(f"`{p}`"))
    return ref


def dedup(shape: Shape, batch: DataFrame) -> DataFrame:
    """precombine: one row per identity, the greatest ordering value (without an ordering field: unchanged)."""
    if not shape.ordering:
        return batch
    window = Window.partitionBy(*_cols(shape.identity)).orderBy(F.col(f"`{shape.ordering}`").desc())
    return batch.withColumn("_rn", F.row_number().over(window)).filter("_rn = 1").drop("_rn")


def upsert(shape: Shape, ref: DataFrame, batch: DataFrame) -> DataFrame:
    """Hudi upsert: stored rows whose identity is in the batch are replaced by the batch's winner."""
    ref = located(shape, ref)
    batch = dedup(shape, batch).select(*_cols(shape.names))
    kept = ref.join(batch.select(*_cols(shape.identity)), shape.identity, "left_anti")
    written = _with_own_locations(shape, batch)
    if shape.index.in_place and shape.partitions:   # a stored key keeps its partition path
        stored = ref.select(*_cols(shape.keys), *[F.col(f"`{loc}`").alias(f"_s{loc}") for loc in shape.locations])
        written = written.join(stored, shape.keys, "left").select(
            *_cols(shape.names), *[F.coalesce(F.col(f"`_s{loc}`"), F.col(f"`{loc}`")).alias(loc)
                                   for loc in shape.locations])
    return kept.select(*_cols(shape.stored_names)).unionByName(written)


def insert(shape: Shape, ref: DataFrame, batch: DataFrame) -> DataFrame:
    """Hudi insert: the batch is added as it is (the generators send no stored or repeated identities)."""
    return located(shape, ref).select(*_cols(shape.stored_names)).unionByName(_with_own_locations(shape, batch))


def insert_into(shape: Shape, ref: DataFrame, batch: DataFrame) -> DataFrame:
    """INSERT INTO a Hudi SQL table: upsert when the table has a preCombineField, else insert (Hudi 0.14)."""
    return upsert(shape, ref, batch) if shape.ordering else insert(shape, ref, batch)


def overwrite(shape: Shape, ref: DataFrame, batch: DataFrame, *, mode: str, spec: dict | None) -> DataFrame:
    """INSERT OVERWRITE [PARTITION spec] as Spark and Hudi's deduceOverwriteConfig: an unpartitioned table, or
    static mode without a PARTITION clause, is replaced whole (insert_overwrite_table); dynamic mode replaces the
    partitions the batch writes; static mode with a clause replaces every partition matching its static values
    (all partitions when it has none) and the batch's. `spec` maps partition column -> SQL literal or None
    (dynamic). The batch is deduplicated by the ordering field (Hudi: hoodie.combine.before.insert). Partitions
    are partition paths (the hidden location columns): the index is not looked up, so a key stored in a partition
    that is kept stays there even when the batch writes it into a replaced one."""
    batch = _with_own_locations(shape, dedup(shape, batch).select(*_cols(shape.names)))
    if not shape.partitions or (mode == "static" and spec is None):
        return batch
    written = batch.select(*_cols(shape.locations)).distinct()
    kept = located(shape, ref).join(written, shape.locations, "left_anti")
    if mode == "static":
        static = [f"`_loc_{c}` <=> {v}" for c, v in spec.items() if v is not None]
        kept = kept.filter(f"NOT ({' AND '.join(static)})") if static else kept.limit(0)
    return kept.select(*_cols(shape.stored_names)).unionByName(batch)


def update(shape: Shape, ref: DataFrame, assignments: dict[str, str], where: str | None) -> DataFrame:
    """UPDATE t SET c = expr WHERE cond: rows where cond is TRUE take the new values."""
    ref = located(shape, ref)
    out = []
    for name in shape.names:
        column = F.col(f"`{name}`")
        if name in assignments:
            value = F.expr(assignments[name]).cast(shape.column(name).type)
            column = F.when(F.expr(where), value).otherwise(column) if where else value
        out.append(column.alias(name))
    return ref.select(*out, *_cols(shape.locations))


def delete(shape: Shape, ref: DataFrame, where: str | None) -> DataFrame:
    """DELETE FROM t WHERE cond: rows where cond is TRUE go (NULL keeps the row)."""
    if where is None:
        return ref.limit(0)
    return ref.filter(~F.coalesce(F.expr(where), F.lit(False)))


def merge(shape: Shape, ref: DataFrame, source: DataFrame, *, delete_clause: bool, update_clause: bool,
          update_columns: list[str] | None, insert_clause: bool = True) -> DataFrame:
    """MERGE INTO t USING s ON <identity> [WHEN MATCHED AND s._op = 'D' THEN DELETE]
    [WHEN MATCHED THEN UPDATE SET * | SET c = s.c ...] WHEN NOT MATCHED THEN INSERT *  (SQL semantics:
    each source row takes the first clause that applies; the source has at most one row per identity).
    Under a global index the ON condition is the record key alone; an updated record's partition path follows its
    merged partition columns (update.partition.path=true: moved when they changed, as Hudi's
    mergeForPartitionUpdatesIfNeeded with ExpressionPayload) or stays (false)."""
    ref = located(shape, ref)
    target = ref.select(*[F.col(f"`{n}`").alias(f"t_{n}") for n in shape.stored_names], F.lit(True).alias("_m"))
    cond = None
    for name in shape.identity:
        eq = source[f"`{name}`"] == target[f"`t_{name}`"]
        cond = eq if cond is None else cond & eq
    joined = source.join(target, cond, "left")
    matched = joined.filter("_m IS NOT NULL")
    deleted = F.col("_op") == "D" if delete_clause else F.lit(False)
    updates = matched.filter(~deleted) if update_clause else matched.limit(0)
    chosen = update_columns if update_columns is not None else shape.names
    updated = updates.select(*[(F.col(f"`{n}`") if n in chosen else F.col(f"`t_{n}`")).alias(n)
                               for n in shape.names], *_cols([f"t_{loc}" for loc in shape.locations]))
    if shape.index.in_place or not shape.index.is_global:   # in place (partition-scoped: the same partition)
        updated = updated.select(*_cols(shape.names), *[F.col(f"`t_{loc}`").alias(loc) for loc in shape.locations])
    else:
        updated = _with_own_locations(shape, updated)
    inserted = _with_own_locations(shape, joined.filter("_m IS NULL"))
    if not insert_clause:
        inserted = inserted.limit(0)
    touched = matched.filter(deleted | F.lit(update_clause)).select(*_cols(shape.identity))
    kept = ref.join(touched, shape.identity, "left_anti").select(*_cols(shape.stored_names))
    return kept.unionByName(updated).unionByName(inserted)
