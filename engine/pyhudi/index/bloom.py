"""BLOOM / GLOBAL_BLOOM index: key ranges and bloom filters pick the files a key can be in; only those are read.

Hudi's bucketized bloom check, in three steps:
  driver     key ranges (min/max record key) from the footers of the latest base files (cached per file) -> a
             RangePlan: per partition (one scope for a global index) an interval tree over its files; broadcast
             (small: no filters)
  executors  each incoming key is matched against the ranges: (key, partition, file position) pairs
  executors  pairs grouped by file: the task loads that file's bloom filter from its footer, and only when some
             key passes it, reads the file's `_hoodie_record_key` column to keep the keys really there (bloom
             false positives drop out)
Counters go to an accumulator, so the lookup adds no Spark action: they arrive with the write's next action.
"""

from __future__ import annotations

import contextlib
import pickle
import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame

from pyhudi.index.footers import CACHE, bloom_filter, file_keys
from pyhudi.index.lookup import PARTITION_PATH, RECORD_KEY, partition_of
from pyhudi.index.ranges import KeyRangeIndex
from pyhudi.index.virtual import file_record_keys
from pyhudi.index.stats import IndexStats
from pyhudi.spark.jvm import is_connect, share
from pyhudi.spark.parallelism import file_task_partitions
from pyhudi.sorted_runs import run_bounds
from pyhudi.timeline import METAFOLDER

_FILE_POS = "_pyhudi_file_pos"
_PAIR_DDL = f"{RECORD_KEY} string, {PARTITION_PATH} string, {_FILE_POS} int"
_PAIR_SCHEMA = pa.schema([(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string()), (_FILE_POS, pa.int32())])
_FOUND_SCHEMA = pa.schema([(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string()), ("file_id", pa.string())])


@dataclass
class RangePlan:
    """Shipped to executors: the files and, per scope (partition, or None for a global index), the range index
    over that scope's files plus their positions in `files`."""

    files: list[tuple[str, str]]              # (partition, file id)
    paths: list[str]                          # relative path of each file
    scopes: dict                              # scope -> (KeyRangeIndex, np.ndarray of file positions)
    is_global: bool
    cache_epoch: int = 0                      # the driver footer cache's epoch (see footers.bloom_filter)
    use_bloom: bool = True                    # False: every in-range file's keys are read (SIMPLE index)
    keygen: object = None                     # virtual keys: stored keys computed from data by this generator

    def candidates(self, keys: np.ndarray, partitions: pa.DictionaryArray | None) -> tuple[np.ndarray, np.ndarray]:
        """(row positions, file positions): the files whose key range may hold each key (of its partition, as
        `pc.dictionary_encode` of the batch's partition paths: hashing them costs less than sorting strings)."""
        if self.is_global or partitions is None:
            groups = [(None, np.arange(len(keys)))]
        else:
            codes = partitions.indices.to_numpy(zero_copy_only=False)
            order = np.argsort(codes, kind="stable")
            bounds = np.flatnonzero(np.diff(codes[order])) + 1
            groups = [(partitions.dictionary[int(codes[where[0]])].as_py(), where)
                      for where in np.split(order, bounds) if len(where)]
        rows, files = [], []
        for scope, where in groups:
            entry = self.scopes.get(scope)
            if entry is None or not len(where):
                continue
            ranges, positions = entry
            key_pos, local = ranges.query(keys[where])
            rows.append(where[key_pos])
            files.append(positions[local])
        if not rows:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return np.concatenate(rows), np.concatenate(files)


def build_plan(spark, storage, base_files, is_global: bool, prune_by_ranges: bool,
               use_bloom: bool = True, keygen=None) -> tuple[RangePlan, int]:
    """The plan for the given latest base files; returns it with the number of footers read from storage (none
    when ranges do not prune: then every file of a key's scope is a candidate)."""
    before = CACHE.reads
    keys = file_keys(spark, storage, [b.path for b in base_files]) if prune_by_ranges else None
    files = [(partition_of(b.path), b.file_id) for b in base_files]
    by_scope: dict = {}
    for position, (partition, _) in enumerate(files):
        by_scope.setdefault(None if is_global else partition, []).append(position)
    scopes = {}
    for scope, positions in by_scope.items():
        ranges = [(keys[p].min_key, keys[p].max_key) if keys else (None, None) for p in positions]
        scopes[scope] = (KeyRangeIndex(ranges, prune=prune_by_ranges), np.array(positions, np.int64))
    plan = RangePlan(files, [b.path for b in base_files], scopes, is_global, CACHE.epoch, use_bloom, keygen)
    return plan, CACHE.reads - before


class _Counters(AccumulatorParam):
    """Spark accumulator of the lookup counters: {("range", task partition): (keys, {file: keys in range}),
    ("file", file position): (bloom positives, keys found)}. A recomputed task or file replaces its own entry,
    so counts never double."""

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):
        value1.update(value2)
        return value1


def _in_range_pairs(plan: RangePlan, batches, counters):
    """Executor: (key, partition, file position) for every file whose key range holds the key."""
    in_range: dict[int, int] = {}
    n_keys = 0
    for batch in batches:
        keys = batch.column(0).to_numpy(zero_copy_only=False)
        n_keys += len(keys)
        if plan.is_global:
            groups = [(None, keys)]
        else:
            parts = batch.column(1).to_numpy(zero_copy_only=False)
            uniq, inverse = np.unique(parts, return_inverse=True)
            groups = [(scope, keys[inverse == i]) for i, scope in enumerate(uniq)]
        for scope, scope_keys in groups:
            entry = plan.scopes.get(scope)
            if entry is None:
                continue
            ranges, positions = entry
            key_pos, local = ranges.query(scope_keys)
            if not len(key_pos):
                continue
            file_pos = positions[local].astype(np.int32)
            for f, n in zip(*np.unique(file_pos, return_counts=True)):
                in_range[int(f)] = in_range.get(int(f), 0) + int(n)
            partitions = pa.array([plan.files[f][0] for f in file_pos], pa.string()) if plan.is_global else \
                pa.repeat(pa.scalar(scope, pa.string()), len(file_pos))
            yield pa.RecordBatch.from_arrays([pa.array(scope_keys[key_pos], pa.string()), partitions,
                                              pa.array(file_pos, pa.int32())], schema=_PAIR_SCHEMA)
    from pyspark import TaskContext
    task = TaskContext.get()
    counters.add({("range", task.partitionId() if task else 0): (n_keys, in_range)})


def keys_in_file(plan: RangePlan, storage, position: int, keys: pa.Array, counters,
                 trusted: pa.Array | None = None, hashed=None) -> pa.Array:
    """Executor, one file: its bloom filter, then (for the positives) its key column decide which of `keys` are
    in it; returns those keys (each once).

    `trusted` (a mask over `keys`): keys whose bloom positive counts as found without reading the key column -
    the caller knows no other file's key range holds them (see writer/one_job_tasks.confirm). A false positive (rate
    hoodie.index.bloom.fpp) then sends a new key to this file group, where it is written as an insert of that
    file (the copy-on-write merge finds no stored record; a merge-on-read log record without a base row reads as
    one): the rows stay right, only that key's placement and its insert/update count differ.
    `hashed`: the same keys as a HashedKeys slice (their bit positions shared with the task's other files)."""
    path = plan.paths[position]
    opened: list[pq.ParquetFile] = []
    files = contextlib.ExitStack()

    def parquet() -> pq.ParquetFile:   # opened at most once, and only to confirm positives
        if not opened:
            opened.append(pq.ParquetFile(files.enter_context(storage.fs.open_input_file(storage.full(path)))))
        return opened[0]

    with files:
        bloom = bloom_filter(storage, path, plan.cache_epoch) if plan.use_bloom else None
        positive = pa.array(bloom.might_contain_many(keys if hashed is None else hashed)) if bloom is not None else None
        check = keys if positive is None else keys.filter(
            positive if trusted is None else pc.and_(positive, pc.invert(trusted)))
        found = keys.filter(pc.and_(positive, trusted)) if positive is not None and trusted is not None \
            else keys.slice(0, 0)
        if len(check):   # hash the few positives, probe the file's keys (each stored once)
            stored = parquet().read(columns=[RECORD_KEY], use_threads=False)[RECORD_KEY].combine_chunks() \
                if plan.keygen is None else file_record_keys(parquet(), plan.keygen)
            confirmed = stored.filter(pc.is_in(stored, value_set=check))
            found = pa.concat_arrays([found, confirmed.cast(found.type)]) if len(found) else confirmed
    n_positive = len(keys) if positive is None else pc.sum(positive).as_py() or 0
    counters.add({("file", position): (n_positive, len(found))})
    return found


def new_counters(spark, storage):
    """The lookup counters' accumulator (see _Counters); on Spark Connect, which has no accumulators, counters kept
    in the table's storage (_StoredCounters)."""
    return _StoredCounters(storage) if is_connect(spark) else spark.sparkContext.accumulator({}, _Counters())


class _StoredCounters:
    """The lookup counters on Spark Connect: the executors share only the table's storage with the client, so each
    add is a small file under `.hoodie/.aux/.pyhudi-counters/<id>/`, named by its counter's key (a retried task
    replaces its own, as with _Counters). `value` merges them once, after the action, and deletes the folder."""

    def __init__(self, storage):
        self.storage = storage
        self.folder = f"{METAFOLDER}/.aux/.pyhudi-counters/{uuid.uuid4().hex}"
        self._value: dict | None = None

    def add(self, term: dict) -> None:
        for key, value in term.items():   # pickled: pyhudi's own transient files, read back by pyhudi only
            self.storage.write_bytes(f"{self.folder}/{'-'.join(map(str, key))}", pickle.dumps((key, value)))

    @property
    def value(self) -> dict:
        if self._value is None:
            files = self.storage.list_files(self.folder)
            self._value = dict(pickle.loads(self.storage.read_bytes(f"{self.folder}/{info.base_name}"))
                               for info in files)
            self.storage.delete_dir(self.folder)
        return self._value


def fill_stats(counters: dict, stats: IndexStats) -> None:
    """IndexStats from the counters a lookup gathered (BloomLookup.fill_stats, and the one-job write)."""
    in_range: set[int] = set()
    candidates = 0
    for (kind, _), value in counters.items():
        if kind == "range":
            stats.keys_looked_up += value[0]
            in_range.update(f for f, n in value[1].items() if n)
        elif kind == "file" and value[0]:
            candidates += 1
    stats.files_pruned_by_range = stats.files_considered - len(in_range)
    stats.candidate_files = candidates
    stats.files_pruned_by_bloom = len(in_range) - candidates


def _found_in_file(plan: RangePlan, storage, pairs: pa.Table, counters) -> pa.Table:
    """Executor, one file: the keys of `pairs` that are in it, as locations."""
    position = pairs[_FILE_POS][0].as_py()
    found = keys_in_file(plan, storage, position, pairs[RECORD_KEY].combine_chunks(), counters)
    partition, file_id = plan.files[position]
    return pa.Table.from_arrays([found, pa.repeat(pa.scalar(partition, pa.string()), len(found)),
                                 pa.repeat(pa.scalar(file_id, pa.string()), len(found))], schema=_FOUND_SCHEMA)


def _found_in_files(plan: RangePlan, storage, batches, counters):
    """Executor, one task: its pairs (few: keys only) split by file, each file checked by _found_in_file."""
    pairs = pa.Table.from_batches(list(batches), schema=_PAIR_SCHEMA)
    if not pairs.num_rows:
        return
    pairs = pairs.sort_by(_FILE_POS)
    for start, end in zip(*run_bounds(pairs[_FILE_POS])):
        yield from _found_in_file(plan, storage, pairs.slice(start, end - start), counters).to_batches()


class BloomLookup:
    """The lookup's outcome: `locations` (key, partition, file id) of incoming keys found in the base files, to
    be evaluated by the write's next Spark action; `fill_stats` reads the counters that action gathered."""

    def __init__(self, locations: DataFrame, counters, release: list):
        self.locations = locations
        self.release = release
        self._counters = counters

    def fill_stats(self, stats: IndexStats) -> None:
        fill_stats(self._counters.value, stats)


def locations(spark, storage, records: DataFrame, base_files, is_global: bool, prune_by_ranges: bool,
              file_id_col: str, stats: IndexStats) -> BloomLookup:
    """Plan the lookup of `records` (key, partition) in `base_files`; nothing runs until the write's next action.
    Fills the footer counters of `stats` now, the rest through BloomLookup.fill_stats after that action."""
    plan, footers_read = build_plan(spark, storage, base_files, is_global, prune_by_ranges)
    stats.files_considered = len(base_files)
    stats.footers_read = footers_read
    plan_bc = share(spark, plan)
    counters = new_counters(spark, storage)

    def pairs(batches):
        return _in_range_pairs(plan_bc.value, batches, counters)

    def found(batches):
        return _found_in_files(plan_bc.value, storage, batches, counters)

    in_range = records.select(RECORD_KEY, PARTITION_PATH).mapInArrow(pairs, _PAIR_DDL)
    located = (in_range.repartition(file_task_partitions(spark, len(base_files)), _FILE_POS)
               .mapInArrow(found, f"{RECORD_KEY} string, {PARTITION_PATH} string, file_id string")
               .withColumnRenamed("file_id", file_id_col))
    return BloomLookup(located, counters, [plan_bc])
