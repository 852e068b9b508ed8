"""The one-job write: key, tag, deduplicate, place inserts and write an upsert, insert or delete in ONE Spark job.

Everything the job needs comes from metadata before it starts (no count, partition-listing or footer action):
the key ranges of every latest base file of the table (footer cache), the bucket map, the small files of every
partition with their free capacity (file-system view), the state of every file group.

    stage 1  (incoming partitions)  key records; BLOOM/SIMPLE: each record goes to every file of its partition
                                     whose key range may hold it (a copy per candidate, `_pyhudi_ncand` copies);
                                     BUCKET: the key's hash names its file group
    stage 2  (one task per few files, BLOOM/SIMPLE only)  a file's bloom filter and key column confirm which
                                     of its candidate records it really holds (found: an update of that file)
    stage 3  (one group per file group, plus one "pack" group per partition)  write: a found record is
                                     written by its file group's task, as before; a partition's inserts (records
                                     no candidate file holds) and the updates of its small files meet in the
                                     partition's pack group, which now knows how many inserts there are and
                                     places them as Hudi's UpsertPartitioner does: small files first (smallest
                                     first, up to hoodie.parquet.max.file.size by the average record size), then
                                     new file groups of that many records, whose ids derive from (instant,
                                     partition, n) so a retried task names them alike.

What changed against the counted plan (write_action's _assign_inserts): the same small files and file sizes,
but a partition's small files and new file groups are written by one task (its pack group), and inserts fill
them in key order instead of by a hash of the key. Big batches (more than ONE_JOB_MAX_BYTES by Spark's estimate)
keep the counted plan, which spreads a partition's new file groups over tasks; a batch Spark cannot size (rows
made on the driver, an RDD) runs as one job.

A batch Spark estimates at most ONE_TASK_MAX_BYTES runs the three stages in ONE Python task instead (in_one_task):
no shuffle, the files checked and the file groups written by a few threads of that task. Launching a Python task
costs 50-150 ms, and the staged job launches a few per core per stage: for a small batch that was most of the
write (200-row MOR upsert into 2M rows: 1.5 s staged, 0.8 s in one task; the 22k-row batch 2.0 s and 0.8 s).
Into a table with many file groups over several partitions, such a batch is shared out over one task per core
instead (writer/task_share.py: each task computes the batch and writes the partitions it owns; no shuffle), when computing
the batch again is cheap and gives the same rows.

This module is the driver side (the plan from metadata, the job); the stages themselves are in one_job_tasks.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi import config as C
from pyhudi.commit.metadata import STATS_DDL, WriteStat, write_stat
from pyhudi.commit.spark_jobs import collect_or_raise
from pyhudi.index import bloom
from pyhudi.index.bucket import existing_buckets
from pyhudi.index.stats import IndexStats
from pyhudi.spark.parallelism import file_task_partitions
from pyhudi.spark.jvm import default_parallelism, map_in_arrow
from pyhudi.spark.jvm import optimized_plan
from pyhudi.spark.jvm import share as share_value
from pyhudi.writer.file_writer import ARRIVAL_COLUMN, FILE_ID_COLUMN, PARTITION_PATH, WriteContext
from pyhudi.writer.live_keys import LiveKeyCheck, live_key_check
from pyhudi.writer.one_job_tasks import (FILE_POS_COLUMN, NCAND_COLUMN, ROUTE_COLUMN, PackPlan, all_stages, confirm,
                                         send_to_candidates, with_bucket_files, write_group)
from pyhudi.writer.planning import average_record_size, group_states
from pyhudi.writer.tagging import finish_index_stats
from pyhudi.writer.task_share import COPY_COLUMN, one_task_split

if TYPE_CHECKING:
    from pyhudi.writer.strategy import WriteJob

ONE_JOB_MAX_BYTES = 1 << 30     # Spark's size estimate of a batch above which the counted plan is used
ONE_TASK_MAX_BYTES = 32 << 20   # ... at most which the whole job runs in one Python task (see in_one_task)
MAX_TASK_THREADS = 8            # threads of that task writing file groups side by side


def pack_plan(view, wc: C.WriteConfig, record_size: int, pending_compaction: dict) -> PackPlan:
    """Small-file candidates of every partition, as write_action's planning picks them (planning.plan_insert_buckets)."""
    max_size, small_limit = wc.max_file_size, wc.small_file_limit
    per_file = wc.records_per_new_file(record_size)
    small: dict[str, list] = {}
    if small_limit > 0:
        for slice_ in view.latest_slices(None):
            base = slice_.base_file
            if base is None or slice_.log_files or (slice_.partition_path, slice_.file_id) in pending_compaction:
                continue
            capacity = max(0, (max_size - base.size) // record_size)
            if base.size < small_limit and capacity > 0:
                small.setdefault(slice_.partition_path, []).append((base.size, base.file_id, capacity))
    return PackPlan({p: [(f, c) for _, f, c in sorted(files)] for p, files in small.items()}, per_file)



_SHUFFLING_NODES = re.compile(r"^[\s:|+\-]*(Join|Aggregate|Window|Repartition|RepartitionByExpression|Deduplicate|"
                              r"Sort \[.*\], true|Distinct|Intersect|Except)\b", re.MULTILINE)


def batch_plan(df: DataFrame) -> tuple[int | None, bool, bool]:
    """From Spark's optimized plan of the batch (no job): its size estimate (None when Spark cannot tell, e.g. rows
    made from Python objects, which it sizes as Long.MaxValue), whether computing it shuffles (a join or an
    aggregation: e.g. a MERGE source or a dbt model's query) and whether it is deterministic (computing it twice
    gives the same rows: no rand(), uuid(), ...; on Spark Connect, which does not say, taken as not)."""
    try:
        size, text, deterministic = optimized_plan(df)
    except Exception:  # noqa: BLE001 - a plan Spark cannot explain: the general path
        return None, True, False
    shuffles = bool(_SHUFFLING_NODES.search(text))
    return (None if size >= 1 << 62 else size), shuffles, deterministic


def in_one_task(size: int | None) -> bool:
    """Whether a batch of `size` bytes by Spark's estimate is small enough for one Python task. Each Python task
    costs 50-150 ms to launch, and the three stages with a few tasks per core cost more than a small batch's
    work (a 200-row upsert: 1.5 s against 0.9 s in one task). One task uses one worker's memory and its threads
    (parquet encoding and compression release the GIL), so only batches Spark knows to be small qualify: a
    batch it cannot size (an RDD, rows made on the driver) keeps the stages."""
    return size is not None and size <= ONE_TASK_MAX_BYTES



def fit(incoming: DataFrame) -> tuple[bool, bool, bool] | None:
    """Whether a batch the one job may take is small enough for it (Spark estimates it at most ONE_JOB_MAX_BYTES,
    or cannot size it): (shuffles, deterministic, in one task) from its plan, else None (the counted plan, which
    spreads a partition's new file groups over tasks)."""
    size, shuffles, deterministic = batch_plan(incoming)
    if size is None or size <= ONE_JOB_MAX_BYTES:
        return shuffles, deterministic, in_one_task(size)
    return None


_AQE = "spark.sql.adaptive.enabled"
_aqe_lock = threading.Lock()
_aqe_writes = 0          # writes of this process inside stages_in_one_job
_aqe_before = None       # the session's value when the first of them entered


@contextlib.contextmanager
def stages_in_one_job(spark):
    """Adaptive execution submits every shuffle stage as a job of its own (and re-plans between them); the write
    fixes its partition counts itself, so its stages run as one job without it. The setting is the session's:
    concurrent writes (dbt threads) share one switch, and the last one out restores the value the first one found
    (a plain save/restore per write would leave it off when two writes overlap)."""
    global _aqe_writes, _aqe_before
    conf = spark.conf
    with _aqe_lock:
        if _aqe_writes == 0:
            _aqe_before = conf.get(_AQE)
            conf.set(_AQE, "false")
        _aqe_writes += 1
    try:
        yield
    finally:
        with _aqe_lock:
            _aqe_writes -= 1
            if _aqe_writes == 0:
                conf.set(_AQE, _aqe_before)


# --- the job -------------------------------------------------------------------------------------------------------
def write(job: WriteJob) -> tuple[list[WriteStat], IndexStats]:
    """Key, tag, place and write `job` in one Spark job, the plan from metadata; returns the write stats and the
    index stats. The lookup is the range plan of every latest base file (BLOOM/SIMPLE), the bucket map (BUCKET),
    or nothing (inserts: nothing is looked up)."""
    spec, view, strategy = job.index, job.view, job.strategy
    source = job.prepared if strategy.keys_in_task else job.keyed
    records = job.flagged(source.withColumn(ARRIVAL_COLUMN, F.monotonically_increasing_id()))
    ctx = dataclasses.replace(job.ctx, combine_in_writer=job.wc.combine_before(job.operation),
                              existing=group_states(view))
    stats = IndexStats(spec.type)
    pack = pack_plan(view, job.wc, average_record_size(job.timeline, job.wc), view.busy_groups)
    lookup = bucket_args = None
    if spec.is_bucket:
        existing = existing_buckets(view, None, job.table_name, spec.num_buckets)
        bucket_args = (list(spec.hash_fields), spec.num_buckets, existing, job.instant_time)
    elif job.operation in ("upsert", "delete") and job.has_keys:
        base_files = view.latest_base_files(None)
        if base_files:
            lookup, stats.footers_read = bloom.build_plan(
                job.spark, job.storage, base_files, False, spec.prune_by_ranges and spec.is_bloom,
                use_bloom=spec.is_bloom, keygen=job.virtual_keys)
    live = live_key_check(job.table, view) if job.is_mor and lookup is not None else None
    plan = OneJobPlan(
        records, ctx, pack, lookup, bucket_args, stats,
        n_groups=len(ctx.existing) + len({partition for partition, _ in ctx.existing}) + 1,
        shuffles=strategy.batch_shuffles, one_task=strategy.one_task,
        keygen=job.keygen if strategy.keys_in_task else None, live=live,
        rereadable=strategy.batch_deterministic and not strategy.batch_shuffles)
    write_stats = _run(job.spark, plan)
    finish_index_stats(stats, write_stats, spec.is_bucket)
    if lookup is None and not spec.is_bucket:   # nothing looked up: every record went by the insert path
        stats.keys_looked_up = stats.updates + stats.inserts
    return write_stats, stats


@dataclass(frozen=True)
class OneJobPlan:
    """The one job, planned on the driver from metadata: `records` (keyed, with ARRIVAL and DELETE columns; not
    keyed yet when `keygen` is set: the one task keys them), the lookup (`lookup` or `bucket_args`), where inserts
    go (`pack`) and how the job runs. A batch that `shuffles` itself keeps adaptive execution (several jobs);
    `one_task` (a small batch, see in_one_task): the three stages run in one Python task, no shuffle; a
    `rereadable` batch (cheap to compute again, same rows) into a big table may be shared out over one task per
    core (one_task_split). `live`: see one_job_tasks.confirm."""

    records: DataFrame
    ctx: WriteContext
    pack: PackPlan
    lookup: bloom.RangePlan | None
    bucket_args: tuple | None
    stats: IndexStats
    n_groups: int
    shuffles: bool = True
    one_task: bool = False
    keygen: object = None
    live: LiveKeyCheck | None = None
    rereadable: bool = False


def _stats_frame(spark, plan: OneJobPlan, counters) -> DataFrame:
    """The job's stats frame: one task (a small batch) or the three stages. Task closures capture plain locals,
    never `plan` (its DataFrame does not travel)."""
    records, ctx, pack, lookup, bucket_args, live = (plan.records, plan.ctx, plan.pack, plan.lookup,
                                                     plan.bucket_args, plan.live)
    storage = ctx.storage
    if plan.one_task:
        threads = min(MAX_TASK_THREADS, default_parallelism(spark))
        plan_bc = share_value(spark, lookup) if lookup is not None and lookup.files else None
        share = one_task_split(spark, ctx.existing, plan.rereadable)
        keygen = plan.keygen
        source = records.coalesce(1)
        if share is not None:   # one copy of the batch per task
            copies = spark.range(0, share.tasks, 1, share.tasks).withColumnRenamed("id", COPY_COLUMN)
            source = source.crossJoin(copies.hint("shuffle_replicate_nl"))
        return map_in_arrow(source, lambda batches: all_stages(
            plan_bc.value if plan_bc is not None else None, bucket_args, storage, ctx, pack, counters, threads,
            keygen, live, share, batches), STATS_DDL)
    fields = records.schema.fields
    if bucket_args is not None:
        routed = map_in_arrow(records, lambda b: with_bucket_files(bucket_args, counters, b), T.StructType(
            fields + [T.StructField(FILE_ID_COLUMN, T.StringType()), T.StructField(ROUTE_COLUMN, T.StringType()),
                      T.StructField(NCAND_COLUMN, T.IntegerType())]))
    elif lookup is not None and lookup.files:
        plan_bc = share_value(spark, lookup)
        sent = map_in_arrow(records, lambda b: send_to_candidates(plan_bc.value, counters, b), T.StructType(
            fields + [T.StructField(FILE_POS_COLUMN, T.IntegerType()), T.StructField(NCAND_COLUMN, T.IntegerType())]))
        by_file = sent.repartition(file_task_partitions(spark, len(lookup.files) + 1), FILE_POS_COLUMN)
        routed = map_in_arrow(by_file, lambda b: confirm(plan_bc.value, storage, pack, counters, b, live=live),
                              T.StructType(
            fields + [T.StructField(NCAND_COLUMN, T.IntegerType()), T.StructField(FILE_ID_COLUMN, T.StringType()),
                      T.StructField(ROUTE_COLUMN, T.StringType())]))
    else:
        routed = (records.withColumn(NCAND_COLUMN, F.lit(0)).withColumn(FILE_ID_COLUMN, F.lit(None).cast("string"))
                  .withColumn(ROUTE_COLUMN, F.lit("")))
    spread = routed.repartition(file_task_partitions(spark, plan.n_groups), PARTITION_PATH, ROUTE_COLUMN)
    return spread.groupBy(PARTITION_PATH, ROUTE_COLUMN).applyInArrow(
        lambda table: write_group(ctx, pack, table), STATS_DDL)


def _run(spark, plan: OneJobPlan) -> list[WriteStat]:
    """Run the job, collect its write stats and fill the index stats from its counters."""
    counters = bloom.new_counters(spark, plan.ctx.storage)
    stats_df = _stats_frame(spark, plan, counters)
    with stages_in_one_job(spark) if not plan.shuffles else contextlib.nullcontext():
        rows = collect_or_raise(stats_df)
    _fill_stats(counters.value, plan.stats, plan.lookup, plan.ctx.existing, plan.bucket_args is not None)
    return [write_stat(row) for row in rows]


def _fill_stats(counters: dict, stats: IndexStats, lookup, existing: dict, is_bucket: bool) -> None:
    seen = set().union(*[v for (kind, _), v in counters.items() if kind == "partitions"]) if counters else set()
    if is_bucket:
        stats.files_considered = sum(1 for partition, _ in existing if partition in seen)
        return
    if lookup is None:
        return
    stats.files_considered = sum(1 for partition, _ in lookup.files if partition in seen)
    bloom.fill_stats(counters, stats)
