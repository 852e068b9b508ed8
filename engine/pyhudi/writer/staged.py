"""The staged write (the counted plan): deduplicate -> tag (index lookup, writer/tagging.py) -> count the inserts per
partition and place them (small files first, then new file groups) -> one Spark task per file group writes it.

Several Spark jobs: the insert count is an action of its own, so the tagged batch is cached for it and the write.
It serves what the one job (writer/one_job.py) does not take: a global index, big batches, a write that does not
combine, a replace, a BUCKET bulk_insert and the insert drop-duplicates mode.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyhudi.commit.metadata import STATS_DDL, WriteStat, write_stat
from pyhudi.commit.spark_jobs import collect_or_raise
from pyhudi.index.stats import IndexStats
from pyhudi.spark.parallelism import file_task_partitions
from pyhudi.writer.file_writer import (ARRIVAL_COLUMN, DELETE_COLUMN, FILE_ID_COLUMN, INSERT_COLUMN, PARTITION_PATH,
                                      RECORD_KEY, write_file_group)
from pyhudi.writer.planning import average_record_size, group_states, plan_insert_buckets
from pyhudi.writer.tagging import Tagged, finish_index_stats, tag

if TYPE_CHECKING:
    from pyhudi.writer.strategy import WriteJob

_SLOT_COLUMN = "_pyhudi_slot"


def write(job: WriteJob) -> tuple[list[WriteStat], IndexStats]:
    """Write `job.keyed` by the counted plan; returns the write stats and the index stats."""
    # With a partition-scoped index every version of a key reaches the same writer task (same stored
    # location, or the same insert slot, which hashes the key): it keeps the latest there (ordering field,
    # then arrival order), which spares a shuffle of the batch. A global index deduplicates across
    # partitions first.
    ctx = job.ctx
    writer_combines = job.wc.combine_before(job.operation) and not job.index.is_global
    if writer_combines:
        deduped = job.keyed.withColumn(ARRIVAL_COLUMN, F.monotonically_increasing_id())
        ctx = dataclasses.replace(ctx, combine_in_writer=True)
    else:
        deduped = job.deduped(job.keyed)
    deduped = job.flagged(deduped)
    existing = group_states(job.view)
    tagged = tag(job, deduped, job.partitions)
    records = tagged.records
    if job.operation == "delete" or not writer_combines:
        # Deletes of keys that do not exist change nothing. (Before the writer's dedup they must stay: a
        # delete may still beat an insert of the same new key, so it travels to that key's insert slot.)
        records = records.filter(~(F.col(DELETE_COLUMN) & F.col(FILE_ID_COLUMN).isNull()))
    records, partitions, new_groups = _assign_inserts(job, records, tagged)
    try:
        ctx = dataclasses.replace(ctx, existing=existing)
        # One Spark partition per file group or so, as Hudi's UpsertPartitioner: the work of a task is the
        # file group it rewrites, not the few incoming rows that adaptive execution would pack into one task.
        spread = records.repartition(_write_parallelism(job, existing, partitions, new_groups), PARTITION_PATH,
                                     FILE_ID_COLUMN)
        stats_df = spread.groupBy(PARTITION_PATH, FILE_ID_COLUMN).applyInArrow(
            lambda table: write_file_group(ctx, table), STATS_DDL)
        stats = [write_stat(row) for row in collect_or_raise(stats_df)]
        finish_index_stats(tagged.stats, stats, job.index.is_bucket)
        return stats, tagged.stats
    finally:   # what the index lookup and _assign_inserts cached
        for item in tagged.release:
            item.unpersist()
        tagged.release.clear()


def _write_parallelism(job: WriteJob, existing: dict, incoming: list[str] | None, new_groups: int) -> int:
    """Spark partitions for the file groups this write touches: the existing ones in the incoming partitions
    (all of them when those are not known) plus the new ones planned for inserts."""
    partitions = set(incoming) if incoming is not None else None
    groups = sum(1 for partition, _ in existing if partitions is None or partition in partitions)
    groups += new_groups
    if job.index.is_bucket:
        groups = max(groups, job.index.num_buckets * (len(partitions) if partitions is not None else 1))
    return file_task_partitions(job.spark, groups)


def _assign_inserts(job: WriteJob, tagged: DataFrame, lookup: Tagged) -> tuple[DataFrame, list[str] | None, int]:
    """Send inserts to small files first, then to new file groups sized near hoodie.parquet.max.file.size.
    The tagged records are cached so the index lookup runs once for this count and the write. Returns the
    records, the incoming partitions (counted here when prepare did not collect them) and how many new file
    groups the inserts get."""
    partitions = job.partitions
    tagged = tagged.withColumn(INSERT_COLUMN, F.col(FILE_ID_COLUMN).isNull())
    if job.index.is_bucket:   # the bucket index gave every record its file group
        return tagged, partitions, 0
    tagged = tagged.persist()
    lookup.release.append(tagged)
    is_insert = F.col(INSERT_COLUMN)
    rows = collect_or_raise(tagged.groupBy(PARTITION_PATH, INSERT_COLUMN).count())
    counts = {row[0]: row[2] for row in rows if row[1]}
    if partitions is None:
        partitions = sorted({row[0] for row in rows})
    if lookup.bloom_lookup is not None:
        lookup.bloom_lookup.fill_stats(lookup.stats)
    elif lookup.stats is not None:
        lookup.stats.keys_looked_up = sum(row[2] for row in rows)
    if not counts:
        return tagged, partitions, 0
    buckets = plan_insert_buckets(counts, job.view, average_record_size(job.timeline, job.wc), job.wc)
    slots = job.spark.createDataFrame(buckets, "bucket_partition string, lo double, hi double, bucket_file string")
    slot = (F.abs(F.xxhash64(F.col(RECORD_KEY))) % 1_000_000) / 1_000_000.0
    inserts = (tagged.filter(is_insert).withColumn(_SLOT_COLUMN, slot)
               .join(F.broadcast(slots), (F.col(PARTITION_PATH) == F.col("bucket_partition"))
                     & (F.col(_SLOT_COLUMN) >= F.col("lo")) & (F.col(_SLOT_COLUMN) < F.col("hi")))
               .withColumn(FILE_ID_COLUMN, F.col("bucket_file"))
               .drop(_SLOT_COLUMN, "bucket_partition", "lo", "hi", "bucket_file"))
    return tagged.filter(~is_insert).unionByName(inserts), partitions, len({row[3] for row in buckets})
