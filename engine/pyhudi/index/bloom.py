"""BLOOM / GLOBAL_BLOOM index: footers prune the files a key can be in, then only candidate files are read.

  driver     footers of the latest base files (cached per file) -> a BloomPlan: per partition (one scope for a
             global index) a key-range interval tree, plus every file's bloom filter; broadcast once
  executors  each incoming key is matched against the ranges, then the bloom filters of the files in range;
             positives become (key, partition, file position) candidate rows; per-file counters go to an
             accumulator (no Spark action of its own: they arrive with the write's next action)
  executors  candidates are grouped by file: one task reads a candidate file's `_hoodie_record_key` column and
             keeps the keys really in it (bloom false positives drop out here)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import DataFrame

from pyhudi.file_group.base_file import read_base_file
from pyhudi.index.footers import file_keys
from pyhudi.index.lookup import PARTITION_PATH, RECORD_KEY, partition_of
from pyhudi.index.ranges import KeyRangeIndex
from pyhudi.index.stats import IndexStats
from pyhudi.spark_session import file_task_partitions

_FILE_POS = "_pyhudi_file_pos"


@dataclass
class BloomPlan:
    """Shipped to executors: the files, their filters, and per scope (partition, or None for a global index)
    the range index over that scope's files plus their positions in `files`."""

    files: list[tuple[str, str]]              # (partition, file id)
    paths: list[str]                          # relative path of each file
    filters: list                             # BloomFilter or None (no filter: always a candidate)
    scopes: dict                              # scope -> (KeyRangeIndex, np.ndarray of file positions)
    is_global: bool


def build_plan(spark, storage, base_files, is_global: bool, prune_by_ranges: bool) -> tuple[BloomPlan, int]:
    """The plan for the given latest base files; returns it with the number of footers read from storage."""
    from pyhudi.index.footers import CACHE
    before = CACHE.reads
    keys = file_keys(spark, storage, [b.path for b in base_files])
    files = [(partition_of(b.path), b.file_id) for b in base_files]
    by_scope: dict = {}
    for position, (partition, _) in enumerate(files):
        by_scope.setdefault(None if is_global else partition, []).append(position)
    scopes = {}
    for scope, positions in by_scope.items():
        ranges = [(keys[p].min_key, keys[p].max_key) for p in positions]
        scopes[scope] = (KeyRangeIndex(ranges, prune=prune_by_ranges), np.array(positions, np.int64))
    return BloomPlan(files, [b.path for b in base_files], [k.bloom for k in keys], scopes, is_global), \
        CACHE.reads - before


_CANDIDATE_DDL = f"{RECORD_KEY} string, {PARTITION_PATH} string, {_FILE_POS} int"
_CANDIDATE_SCHEMA = pa.schema([(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string()), (_FILE_POS, pa.int32())])
_CONFIRMED_SCHEMA = pa.schema([(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string()), ("file_id", pa.string())])


class _TaskCounters(AccumulatorParam):
    """Spark accumulator of the lookup counters, per task partition: {partition id: (keys, in range per file,
    bloom positives per file)}. A recomputed partition replaces its own entry, so counts never double."""

    def zero(self, value):
        return {}

    def addInPlace(self, value1, value2):
        value1.update(value2)
        return value1


def _candidate_rows(plan: BloomPlan, batches, counters=None):
    """Executor: bloom-positive (key, partition, file position) rows; the task's counters go to `counters`."""
    n_files = len(plan.files)
    in_range = np.zeros(n_files, np.int64)
    positives = np.zeros(n_files, np.int64)
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
        out_keys, out_files = [], []
        for scope, scope_keys in groups:
            entry = plan.scopes.get(scope)
            if entry is None:
                continue
            ranges, positions = entry
            key_pos, local = ranges.query(scope_keys)
            if not len(key_pos):
                continue
            file_pos = positions[local]
            in_range += np.bincount(file_pos, minlength=n_files)
            order = np.argsort(file_pos, kind="stable")
            file_pos, key_pos = file_pos[order], key_pos[order]
            cuts = np.flatnonzero(np.diff(file_pos)) + 1
            for segment, f in zip(np.split(key_pos, cuts), file_pos[np.r_[0, cuts]]):
                candidates = scope_keys[segment]
                bloom = plan.filters[f]
                hit = bloom.might_contain_many(candidates) if bloom is not None \
                    else np.ones(len(candidates), bool)
                positives[f] += int(hit.sum())
                out_keys.append(candidates[hit])
                out_files.append(np.full(int(hit.sum()), f, np.int32))
        if out_keys:
            found_keys = np.concatenate(out_keys)
            found_files = np.concatenate(out_files)
            if len(found_keys):
                yield pa.RecordBatch.from_arrays([
                    pa.array(found_keys, pa.string()),
                    pa.array([plan.files[f][0] for f in found_files], pa.string()),
                    pa.array(found_files, pa.int32())], schema=_CANDIDATE_SCHEMA)
    if counters is not None:
        from pyspark import TaskContext
        task = TaskContext.get()
        counters.add({task.partitionId() if task else 0: (n_keys, in_range, positives)})


def _confirmed_rows(plan: BloomPlan, storage, candidates: pa.Table) -> pa.Table:
    """Executor, one candidate file: read its `_hoodie_record_key` column and keep the candidate keys in it
    (bloom false positives drop out)."""
    position = candidates[_FILE_POS][0].as_py()
    stored = read_base_file(storage, plan.paths[position], columns=[RECORD_KEY])[RECORD_KEY]
    present = candidates.filter(pc.is_in(candidates[RECORD_KEY], value_set=stored.combine_chunks()))
    partition, file_id = plan.files[position]
    return pa.Table.from_arrays([present[RECORD_KEY], pa.repeat(pa.scalar(partition, pa.string()), present.num_rows),
                                 pa.repeat(pa.scalar(file_id, pa.string()), present.num_rows)],
                                schema=_CONFIRMED_SCHEMA)


class BloomLookup:
    """The lookup's outcome: `locations` (key, partition, file id) of incoming keys found in the base files, to
    be evaluated by the write's next Spark action; `fill_stats` reads the counters that action gathered."""

    def __init__(self, locations: DataFrame | None, counters, n_files: int, release: list):
        self.locations = locations
        self.release = release
        self._counters = counters
        self._n_files = n_files

    def fill_stats(self, stats: IndexStats) -> None:
        per_task = self._counters.value if self._counters is not None else {}
        in_range = np.zeros(self._n_files, np.int64)
        positives = np.zeros(self._n_files, np.int64)
        for n_keys, task_in_range, task_positives in per_task.values():
            stats.keys_looked_up += int(n_keys)
            in_range += task_in_range
            positives += task_positives
        stats.files_pruned_by_range = self._n_files - int(np.count_nonzero(in_range))
        stats.candidate_files = int(np.count_nonzero(positives))
        stats.files_pruned_by_bloom = int(np.count_nonzero(in_range)) - stats.candidate_files


def locations(spark, storage, records: DataFrame, base_files, is_global: bool, prune_by_ranges: bool,
              file_id_col: str, stats: IndexStats) -> BloomLookup:
    """Plan the lookup of `records` (key, partition) in `base_files`; nothing runs until the write's next action.
    Fills the footer counters of `stats` now, the rest through BloomLookup.fill_stats after that action."""
    plan, footers_read = build_plan(spark, storage, base_files, is_global, prune_by_ranges)
    stats.files_considered = len(base_files)
    stats.footers_read = footers_read
    plan_bc = spark.sparkContext.broadcast(plan)
    counters = spark.sparkContext.accumulator({}, _TaskCounters())

    def candidates(batches):
        return _candidate_rows(plan_bc.value, batches, counters)

    def confirm(table):
        return _confirmed_rows(plan_bc.value, storage, table)

    positives = records.select(RECORD_KEY, PARTITION_PATH).mapInArrow(candidates, _CANDIDATE_DDL)
    # Candidates grouped by file: a group reads one file's key column.
    confirmed = (positives.repartition(file_task_partitions(spark, len(base_files)), _FILE_POS)
                 .groupBy(_FILE_POS).applyInArrow(confirm, f"{RECORD_KEY} string, {PARTITION_PATH} string, file_id string")
                 .withColumnRenamed("file_id", file_id_col))
    return BloomLookup(confirmed, counters, len(base_files), [plan_bc])
