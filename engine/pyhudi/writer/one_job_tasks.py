"""The one-job write's executor side (writer/one_job.py runs the job): the three stages as functions of arrow
batches, and the one-task form that runs them all in one Python task. Nothing here runs on the driver.

    stage 1  key ranges (BLOOM/SIMPLE: a copy of each record per candidate file) or bucket ids (BUCKET)
    stage 2  a candidate file's bloom filter and key column confirm which of its records it holds
    stage 3  one group per file group, plus one "pack" group per partition that places its inserts
"""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.file_group.bloom_filter.hashing import HashedKeys
from pyhudi.index import bloom
from pyhudi.index.bucket import bucket_file_ids
from pyhudi.merge import delete_mask, keep_latest_per_key
from pyhudi.sorted_runs import run_bounds
from pyhudi.writer.batch import with_keys
from pyhudi.writer.live_keys import LiveKeyCheck
from pyhudi.writer.file_writer import (ARRIVAL_COLUMN, DELETE_COLUMN, FILE_ID_COLUMN, INSERT_COLUMN, PARTITION_PATH,
                                      RECORD_KEY, WriteContext, empty_stats, write_file_group)

ROUTE_COLUMN = "_pyhudi_route"  # the write group: a file id, or "" for the partition's pack group
NCAND_COLUMN = "_pyhudi_ncand"  # how many candidate files a record was sent to
FILE_POS_COLUMN = "_pyhudi_file_pos"  # the candidate file (position in the range plan); < 0: none (spread over tasks)
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


def new_insert_file_id(instant_time: str, partition: str, index: int) -> str:
    """A new file group's id: a UUID-shaped digest of (instant, partition, n) plus Hudi's "-0"."""
    d = hashlib.md5(f"{instant_time}|{partition}|{index}".encode()).hexdigest()
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:32]}-0"


def send_to_candidates(plan: bloom.RangePlan, counters, batches):
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
                                         names=out.schema.names + [FILE_POS_COLUMN, NCAND_COLUMN])
    task = TaskContext.get()
    pid = task.partitionId() if task else 0
    counters.add({("range", pid): (n_keys, in_range), ("partitions", pid): seen})


def confirm(plan: bloom.RangePlan, storage, pack: PackPlan, counters, batches, threads: int = 1,
             live: LiveKeyCheck | None = None):
    """Stage 2: per candidate file, which of its records it holds (FILE_ID_COLUMN set) and their write group;
    `threads` files at a time (reading a file's keys releases the GIL; the staged job's tasks use one). `live`:
    merge-on-read file groups whose logs deleted base-file keys hold only the keys still live there."""
    table, bounds = _sorted_runs(batches, [FILE_POS_COLUMN])
    counters = _Shared(counters)
    # the candidate rows' bit positions, computed once for all files of a filter shape (bounded: rows x hashes)
    first = next((start for start, _ in bounds if table[FILE_POS_COLUMN][start].as_py() >= 0), None)
    hashed = None
    if first is not None and table.num_rows - first <= HASH_ONCE_MAX_ROWS:
        hashed = HashedKeys(table[RECORD_KEY].slice(first))

    def routed(bound: tuple[int, int]) -> pa.Table:
        start, end = bound
        run = table.slice(start, end - start)
        position = run[FILE_POS_COLUMN][0].as_py()
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
        run = run.drop_columns([FILE_POS_COLUMN])
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


def with_bucket_files(bucket_args: tuple, counters, batches):
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


def write_group(ctx: WriteContext, pack: PackPlan, table: pa.Table) -> pa.Table:
    if table[ROUTE_COLUMN][0].as_py():
        return write_file_group(ctx, table)
    return _pack(ctx, pack, table)


def _routed_locally(lookup, bucket_args, storage, pack, counters, threads, live, batches):
    """Stages 1 and 2 in this task: every record with its FILE_ID_COLUMN and ROUTE_COLUMN (see write)."""
    if bucket_args is not None:
        return with_bucket_files(bucket_args, counters, batches)
    if lookup is not None and lookup.files:
        return confirm(lookup, storage, pack, counters, send_to_candidates(lookup, counters, batches), threads,
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
        stats = list(pool.map(lambda g: write_group(ctx, pack, g), groups))
    # one batch back to Spark: a batch per written file group cost ~0.3 ms each in pyspark's conversion
    yield from (pa.concat_tables(stats) if stats else empty_stats()).combine_chunks().to_batches()


def all_stages(lookup, bucket_args, storage, ctx, pack, counters, threads, keygen, live, share, batches):
    """A small batch: stages 1-3 in ONE Python task (no shuffle, one task launch instead of a few per core);
    with a `keygen` the batches are keyed here first; with a TaskShare, only this task's partitions are kept."""
    batches = with_keys(keygen, batches) if keygen is not None else batches
    if share is not None:
        batches = share.own(batches)
    routed = _routed_locally(lookup, bucket_args, storage, pack, counters, threads, live, batches)
    return _write_groups_locally(ctx, pack, routed, threads)
