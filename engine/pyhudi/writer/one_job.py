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
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi import config as C
from pyhudi.commit.metadata import STATS_DDL, write_stat
from pyhudi.commit.spark_jobs import collect_or_raise
from pyhudi.file_group.bloom_filter.hashing import HashedKeys
from pyhudi.index import bloom
from pyhudi.index.bucket import bucket_file_ids
from pyhudi.index.stats import IndexStats
from pyhudi.merge import delete_mask, keep_latest_per_key
from pyhudi.spark.parallelism import file_task_partitions
from pyhudi.spark.jvm import map_in_arrow
from pyhudi.sorted_runs import run_bounds
from pyhudi.writer.batch import with_keys
from pyhudi.writer.live_keys import LiveKeyCheck
from pyhudi.writer.file_writer import (ARRIVAL_COLUMN, DELETE_COLUMN, FILE_ID_COLUMN, INSERT_COLUMN, PARTITION_PATH,
                                      RECORD_KEY, WriteContext, empty_stats,
                                      write_file_group)
from pyhudi.writer.task_share import COPY_COLUMN, one_task_split

ONE_JOB_MAX_BYTES = 1 << 30     # Spark's size estimate of a batch above which the counted plan is used
ONE_TASK_MAX_BYTES = 32 << 20   # ... at most which the whole job runs in one Python task (see in_one_task)
MAX_TASK_THREADS = 8            # threads of that task writing file groups side by side
ROUTE_COLUMN = "_pyhudi_route"  # the write group: a file id, or "" for the partition's pack group
NCAND_COLUMN = "_pyhudi_ncand"  # how many candidate files a record was sent to
_FILE_POS = "_pyhudi_file_pos"  # the candidate file (position in the range plan); < 0: none (spread over tasks)
_SPREAD = 64
HASH_ONCE_MAX_ROWS = 200_000   # candidate rows whose bit positions a task computes at once (~48 MB)


@dataclass(frozen=True)
class PackPlan:
    """Where a partition's inserts go: small files first (file id, free capacity in records; smallest first),
    then new file groups of `per_file` records."""

    small_files: dict            # partition -> [(file id, capacity)]
    per_file: int

    def is_small(self, partition: str, file_id: str) -> bool:
        return any(f == file_id for f, _ in self.small_files.get(partition, ()))


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


def new_insert_file_id(instant_time: str, partition: str, index: int) -> str:
    """A new file group's id: a UUID-shaped digest of (instant, partition, n) plus Hudi's "-0"."""
    d = hashlib.md5(f"{instant_time}|{partition}|{index}".encode()).hexdigest()
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:32]}-0"


_SHUFFLING_NODES = re.compile(r"^[\s:|+\-]*(Join|Aggregate|Window|Repartition|RepartitionByExpression|Deduplicate|"
                              r"Sort \[.*\], true|Distinct|Intersect|Except)\b", re.MULTILINE)


def batch_plan(df: DataFrame) -> tuple[int | None, bool, bool]:
    """From Spark's optimized plan of the batch (no job): its size estimate (None when Spark cannot tell, e.g. rows
    made from Python objects, which it sizes as Long.MaxValue), whether computing it shuffles (a join or an
    aggregation: e.g. a MERGE source or a dbt model's query) and whether it is deterministic (computing it twice
    gives the same rows: no rand(), uuid(), ...)."""
    try:
        plan = df._jdf.queryExecution().optimizedPlan()
        size = int(str(plan.stats().sizeInBytes()))
        shuffles = bool(_SHUFFLING_NODES.search(plan.toString()))
        deterministic = bool(plan.deterministic())
    except Exception:  # noqa: BLE001 - e.g. Spark Connect: no plan from Python
        return None, True, False
    return (None if size >= 1 << 62 else size), shuffles, deterministic


def in_one_task(size: int | None) -> bool:
    """Whether a batch of `size` bytes by Spark's estimate is small enough for one Python task. Each Python task
    costs 50-150 ms to launch, and the three stages with a few tasks per core cost more than a small batch's
    work (a 200-row upsert: 1.5 s against 0.9 s in one task). One task uses one worker's memory and its threads
    (parquet encoding and compression release the GIL), so only batches Spark knows to be small qualify: a
    batch it cannot size (an RDD, rows made on the driver) keeps the stages."""
    return size is not None and size <= ONE_TASK_MAX_BYTES


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


# --- executor stages ---------------------------------------------------------------------------------------------
def _send_to_candidates(plan: bloom.RangePlan, counters, batches):
    """Stage 1 (BLOOM/SIMPLE): one copy of each record per candidate file; records without one go on once."""
    from pyspark import TaskContext
    n_keys, in_range, seen, offset = 0, {}, set(), 0
    for batch in batches:
        n = batch.num_rows
        if not n:
            continue
        keys = batch.column(RECORD_KEY).to_numpy(zero_copy_only=False)
        parts = pc.dictionary_encode(batch.column(PARTITION_PATH))
        seen.update(parts.dictionary.to_pylist())
        rows, files = plan.candidates(keys, parts)
        n_keys += n
        for f, c in zip(*np.unique(files, return_counts=True)):
            in_range[int(f)] = in_range.get(int(f), 0) + int(c)
        ncand = np.bincount(rows, minlength=n).astype(np.int32)
        alone = np.flatnonzero(ncand == 0)
        take = np.concatenate([rows, alone])
        where = np.concatenate([files, -1 - (alone + offset) % _SPREAD]).astype(np.int32)
        offset += n
        out = batch.take(pa.array(take))
        yield pa.RecordBatch.from_arrays(out.columns + [pa.array(where), pa.array(ncand[take])],
                                         names=out.schema.names + [_FILE_POS, NCAND_COLUMN])
    task = TaskContext.get()
    pid = task.partitionId() if task else 0
    counters.add({("range", pid): (n_keys, in_range), ("partitions", pid): seen})


def _confirm(plan: bloom.RangePlan, storage, pack: PackPlan, counters, batches, threads: int = 1,
             live: LiveKeyCheck | None = None):
    """Stage 2: per candidate file, which of its records it holds (FILE_ID_COLUMN set) and their write group;
    `threads` files at a time (reading a file's keys releases the GIL; the staged job's tasks use one). `live`:
    merge-on-read file groups whose logs deleted base-file keys hold only the keys still live there."""
    table, bounds = _sorted_runs(batches, [_FILE_POS])
    counters = _Shared(counters)
    # the candidate rows' bit positions, computed once for all files of a filter shape (bounded: rows x hashes)
    first = next((start for start, _ in bounds if table[_FILE_POS][start].as_py() >= 0), None)
    hashed = None
    if first is not None and table.num_rows - first <= HASH_ONCE_MAX_ROWS:
        hashed = HashedKeys(table[RECORD_KEY].slice(first))

    def routed(bound: tuple[int, int]) -> pa.Table:
        start, end = bound
        run = table.slice(start, end - start)
        position = run[_FILE_POS][0].as_py()
        none = pa.nulls(run.num_rows, pa.string())
        if position < 0:
            file_ids, routes = none, pa.repeat(pa.scalar("", pa.string()), run.num_rows)
        else:
            keys = run[RECORD_KEY].combine_chunks()
            # a key no other file's range holds: its bloom positive is taken as found (see keys_in_file)
            only_candidate = pc.equal(run[NCAND_COLUMN].combine_chunks(), 1)
            found = bloom.keys_in_file(plan, storage, position, keys, counters, trusted=only_candidate,
                                       hashed=hashed.slice(start - first, end - start) if hashed is not None else None)
            partition, file_id = plan.files[position]
            if live is not None:
                found = live.live(partition, file_id, found)
            mask = pc.is_in(keys, value_set=found)
            file_ids = pc.if_else(mask, pa.scalar(file_id, pa.string()), none)
            route = "" if pack.is_small(partition, file_id) else file_id
            routes = pc.if_else(mask, pa.scalar(route, pa.string()), pa.scalar("", pa.string()))
        run = run.drop_columns([_FILE_POS])
        return run.append_column(FILE_ID_COLUMN, file_ids).append_column(ROUTE_COLUMN, routes)

    with ThreadPoolExecutor(max(1, threads)) as pool:
        for out in pool.map(routed, bounds):
            yield from out.to_batches()


def _sorted_groups(batches, columns: list[str]) -> list[pa.Table]:
    """The rows of `batches` grouped by `columns`: one table per distinct value, in sorted order."""
    table, bounds = _sorted_runs(batches, columns)
    return [table.slice(start, end - start) for start, end in bounds]


def _sorted_runs(batches, columns: list[str]) -> tuple[pa.Table | None, list[tuple[int, int]]]:
    """The rows of `batches` sorted by `columns`, and the (start, end) of each run of one value."""
    batches = list(batches)
    if not batches:
        return None, []
    table = pa.Table.from_batches(batches).sort_by([(c, "ascending") for c in columns])
    return table, list(zip(*run_bounds(*(table[c] for c in columns))))


class _Shared:
    """An accumulator that threads of one task add to (Accumulator.add is a read-modify-write)."""

    def __init__(self, accumulator):
        self._accumulator, self._lock = accumulator, threading.Lock()

    def add(self, term) -> None:
        with self._lock:
            self._accumulator.add(term)


def _with_bucket_files(bucket_args: tuple, counters, batches):
    """Stage 1 (BUCKET): every record's file group from its key's bucket."""
    from pyspark import TaskContext
    hash_fields, num_buckets, existing, instant_time = bucket_args
    seen = set()
    for batch in batches:
        if not batch.num_rows:
            continue
        parts = batch.column(PARTITION_PATH)
        seen.update(pc.unique(parts).to_pylist())
        ids = bucket_file_ids(batch.column(RECORD_KEY), parts, hash_fields, num_buckets, existing, instant_time)
        yield pa.RecordBatch.from_arrays(batch.columns + [ids, ids, pa.repeat(pa.scalar(1, pa.int32()), len(ids))],
                                         names=batch.schema.names + [FILE_ID_COLUMN, ROUTE_COLUMN, NCAND_COLUMN])
    task = TaskContext.get()
    counters.add({("partitions", task.partitionId() if task else 0): seen})


def _new_keys(misses: pa.Table) -> pa.Table:
    """Records no candidate file holds: one row each (a record sent to k files must be missed by all k)."""
    ncand = misses[NCAND_COLUMN]
    single = misses.filter(pc.less_equal(ncand, 1))
    multi = misses.filter(pc.greater(ncand, 1))
    if not multi.num_rows:
        return single
    multi = multi.take(pc.sort_indices(multi, [(RECORD_KEY, "ascending"), (ARRIVAL_COLUMN, "ascending")]))
    starts, ends = run_bounds(multi[RECORD_KEY], multi[ARRIVAL_COLUMN])
    complete = starts[ends - starts >= multi[NCAND_COLUMN].to_numpy()[starts]]
    return pa.concat_tables([single, multi.take(pa.array(complete))])


def _group(file_id: str, updates: pa.Table | None, inserts: pa.Table | None) -> pa.Table:
    parts = []
    for table, is_insert in ((updates, False), (inserts, True)):
        if table is not None and table.num_rows:
            table = table.set_column(table.schema.get_field_index(FILE_ID_COLUMN), FILE_ID_COLUMN,
                                     pa.repeat(pa.scalar(file_id, pa.string()), table.num_rows))
            parts.append(table.append_column(INSERT_COLUMN, pa.repeat(pa.scalar(is_insert), table.num_rows)))
    return pa.concat_tables(parts)


def _pack(ctx: WriteContext, pack: PackPlan, table: pa.Table) -> pa.Table:
    """A partition's pack group: its inserts into its small files (with their updates), then new file groups."""
    partition = table[PARTITION_PATH][0].as_py()
    located = pc.is_valid(table[FILE_ID_COLUMN])
    updates = table.filter(located)
    inserts = _new_keys(table.filter(pc.invert(located)))
    if ctx.combine_in_writer:
        inserts = keep_latest_per_key(inserts, ctx.ordering_field, ARRIVAL_COLUMN, ctx.payload_class, DELETE_COLUMN)
    inserts = inserts.filter(pc.invert(delete_mask(inserts, DELETE_COLUMN)))   # deletes of keys never stored
    inserts = inserts.take(pc.sort_indices(inserts, [(RECORD_KEY, "ascending")]))
    groups, offset = [], 0
    for file_id, capacity in pack.small_files.get(partition, ()):
        take = max(0, min(capacity, inserts.num_rows - offset))
        mine = updates.filter(pc.equal(updates[FILE_ID_COLUMN], file_id)) if updates.num_rows else None
        if take or (mine is not None and mine.num_rows):
            groups.append(_group(file_id, mine, inserts.slice(offset, take)))
        offset += take
    index = 0
    while offset < inserts.num_rows:
        take = min(pack.per_file, inserts.num_rows - offset)
        groups.append(_group(new_insert_file_id(ctx.instant_time, partition, index), None, inserts.slice(offset, take)))
        offset += take
        index += 1
    stats = [write_file_group(ctx, group) for group in groups]
    return pa.concat_tables(stats) if stats else empty_stats()


def _write_group(ctx: WriteContext, pack: PackPlan, table: pa.Table) -> pa.Table:
    if table[ROUTE_COLUMN][0].as_py():
        return write_file_group(ctx, table)
    return _pack(ctx, pack, table)


def _routed_locally(lookup, bucket_args, storage, pack, counters, threads, live, batches):
    """Stages 1 and 2 in this task: every record with its FILE_ID_COLUMN and ROUTE_COLUMN (see write)."""
    if bucket_args is not None:
        return _with_bucket_files(bucket_args, counters, batches)
    if lookup is not None and lookup.files:
        return _confirm(lookup, storage, pack, counters, _send_to_candidates(lookup, counters, batches), threads,
                        live)
    return (pa.RecordBatch.from_arrays(
        b.columns + [pa.repeat(pa.scalar(0, pa.int32()), b.num_rows), pa.nulls(b.num_rows, pa.string()),
                     pa.repeat(pa.scalar("", pa.string()), b.num_rows)],
        names=b.schema.names + [NCAND_COLUMN, FILE_ID_COLUMN, ROUTE_COLUMN]) for b in batches if b.num_rows)


def _write_groups_locally(ctx: WriteContext, pack: PackPlan, routed, threads: int):
    """Stage 3 in this task: the write groups (PARTITION_PATH, ROUTE_COLUMN) written by `threads` threads
    (parquet encoding and compression release the GIL)."""
    groups = _sorted_groups(routed, [PARTITION_PATH, ROUTE_COLUMN])
    # the likely rewrites first (a pack group's small files; every group of a copy-on-write table), then by size
    groups.sort(key=lambda g: (bool(g[ROUTE_COLUMN][0].as_py()) and ctx.is_mor, -g.num_rows))
    with ThreadPoolExecutor(max(1, threads)) as pool:
        stats = list(pool.map(lambda g: _write_group(ctx, pack, g), groups))
    # one batch back to Spark: a batch per written file group cost ~0.3 ms each in pyspark's conversion
    yield from (pa.concat_tables(stats) if stats else empty_stats()).combine_chunks().to_batches()


def _in_one_task(lookup, bucket_args, storage, ctx, pack, counters, threads, keygen, live, share, batches):
    """A small batch: stages 1-3 in ONE Python task (no shuffle, one task launch instead of a few per core);
    with a `keygen` the batches are keyed here first; with a TaskShare, only this task's partitions are kept."""
    batches = with_keys(keygen, batches) if keygen is not None else batches
    if share is not None:
        batches = share.own(batches)
    routed = _routed_locally(lookup, bucket_args, storage, pack, counters, threads, live, batches)
    return _write_groups_locally(ctx, pack, routed, threads)


# --- the job -------------------------------------------------------------------------------------------------------
def write(spark, storage, records: DataFrame, ctx: WriteContext, pack: PackPlan, lookup: bloom.RangePlan | None,
          bucket_args: tuple | None, stats: IndexStats, n_groups: int, shuffles: bool = True,
          one_task: bool = False, keygen=None, live: LiveKeyCheck | None = None,
          rereadable: bool = False) -> list[dict]:
    """Run the one job over `records` (keyed, with ARRIVAL and DELETE columns) and return its write stats.
    `lookup`: the range plan of every latest base file (BLOOM/SIMPLE), `bucket_args` (BUCKET), or neither
    (inserts: nothing is looked up). A batch that `shuffles` itself keeps adaptive execution (several jobs).
    `one_task` (a small batch, see in_one_task): the three stages run in one Python task, no shuffle; with a
    `keygen`, `records` are not keyed yet and that task keys them; a `rereadable` batch (cheap to compute again,
    same rows) into a big table may be shared out over one task per core (one_task_split). `live`: see _confirm."""
    counters = bloom.new_counters(spark)
    if one_task:
        threads = min(MAX_TASK_THREADS, spark.sparkContext.defaultParallelism)
        plan_bc = spark.sparkContext.broadcast(lookup) if lookup is not None and lookup.files else None
        share = one_task_split(spark, ctx.existing, rereadable)
        source = records.coalesce(1)
        if share is not None:   # one copy of the batch per task
            copies = spark.range(0, share.tasks, 1, share.tasks).withColumnRenamed("id", COPY_COLUMN)
            source = source.crossJoin(copies.hint("shuffle_replicate_nl"))
        stats_df = map_in_arrow(source, lambda batches: _in_one_task(
            plan_bc.value if plan_bc is not None else None, bucket_args, storage, ctx, pack, counters, threads,
            keygen, live, share, batches), STATS_DDL)
        return _run(spark, stats_df, shuffles, counters, stats, lookup, ctx, bucket_args)
    fields = records.schema.fields
    if bucket_args is not None:
        routed = map_in_arrow(records, lambda b: _with_bucket_files(bucket_args, counters, b), T.StructType(
            fields + [T.StructField(FILE_ID_COLUMN, T.StringType()), T.StructField(ROUTE_COLUMN, T.StringType()),
                      T.StructField(NCAND_COLUMN, T.IntegerType())]))
    elif lookup is not None and lookup.files:
        plan_bc = spark.sparkContext.broadcast(lookup)
        sent = map_in_arrow(records, lambda b: _send_to_candidates(plan_bc.value, counters, b), T.StructType(
            fields + [T.StructField(_FILE_POS, T.IntegerType()), T.StructField(NCAND_COLUMN, T.IntegerType())]))
        by_file = sent.repartition(file_task_partitions(spark, len(lookup.files) + 1), _FILE_POS)
        routed = map_in_arrow(by_file, lambda b: _confirm(plan_bc.value, storage, pack, counters, b, live=live),
                              T.StructType(
            fields + [T.StructField(NCAND_COLUMN, T.IntegerType()), T.StructField(FILE_ID_COLUMN, T.StringType()),
                      T.StructField(ROUTE_COLUMN, T.StringType())]))
    else:
        routed = (records.withColumn(NCAND_COLUMN, F.lit(0)).withColumn(FILE_ID_COLUMN, F.lit(None).cast("string"))
                  .withColumn(ROUTE_COLUMN, F.lit("")))
    spread = routed.repartition(file_task_partitions(spark, n_groups), PARTITION_PATH, ROUTE_COLUMN)
    stats_df = spread.groupBy(PARTITION_PATH, ROUTE_COLUMN).applyInArrow(
        lambda table: _write_group(ctx, pack, table), STATS_DDL)
    return _run(spark, stats_df, shuffles, counters, stats, lookup, ctx, bucket_args)


def _run(spark, stats_df: DataFrame, shuffles: bool, counters, stats: IndexStats, lookup, ctx: WriteContext,
         bucket_args) -> list[dict]:
    """Collect the job's write stats and fill the index stats from its counters."""
    with stages_in_one_job(spark) if not shuffles else contextlib.nullcontext():
        rows = collect_or_raise(stats_df)
    _fill_stats(counters.value, stats, lookup, ctx.existing, bucket_args is not None)
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
