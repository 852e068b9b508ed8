"""BLOOM / GLOBAL_BLOOM index: footers prune the files a key can be in, then only candidate files are read.

  driver     footers of the latest base files (cached per file) -> a BloomPlan: per partition (one scope for a
             global index) a key-range interval tree, plus every file's bloom filter; broadcast once
  executors  each incoming key is matched against the ranges, then the bloom filters of the files in range;
             positives become (key, partition, file id) candidate rows, plus per-file counters
  driver     one small collect of the counters (which files are candidates: metadata)
  executors  the candidate files' `_hoodie_record_key` column is read and joined with the candidate rows:
             only keys really in a file get its location (bloom false positives drop out here)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyhudi.index.footers import file_keys
from pyhudi.index.lookup import PARTITION_PATH, RECORD_KEY, partition_of, stored_keys
from pyhudi.index.ranges import KeyRangeIndex
from pyhudi.index.stats import IndexStats

_FILE_POS = "_pyhudi_file_pos"
_IN_RANGE = "_pyhudi_in_range"
_POSITIVES = "_pyhudi_positives"


@dataclass
class BloomPlan:
    """Shipped to executors: the files, their filters, and per scope (partition, or None for a global index)
    the range index over that scope's files plus their positions in `files`."""

    files: list[tuple[str, str]]              # (partition, file id)
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
    return BloomPlan(files, [k.bloom for k in keys], scopes, is_global), CACHE.reads - before


_CANDIDATE_SCHEMA = pa.schema([(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string()), ("file_id", pa.string()),
                               (_FILE_POS, pa.int32()), (_IN_RANGE, pa.int64()), (_POSITIVES, pa.int64())])


def _candidate_rows(plan: BloomPlan, batches):
    """Executor: bloom-positive (key, partition, file id) rows, then one counter row per file in range and one
    (file position -1) counting the keys looked up."""
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
                out_files.append(np.full(int(hit.sum()), f, np.int64))
        if out_keys:
            found_keys = np.concatenate(out_keys)
            found_files = np.concatenate(out_files)
            if len(found_keys):
                yield pa.RecordBatch.from_arrays([
                    pa.array(found_keys, pa.string()),
                    pa.array([plan.files[f][0] for f in found_files], pa.string()),
                    pa.array([plan.files[f][1] for f in found_files], pa.string()),
                    pa.nulls(len(found_keys), pa.int32()), pa.nulls(len(found_keys), pa.int64()),
                    pa.nulls(len(found_keys), pa.int64())], schema=_CANDIDATE_SCHEMA)
    touched = np.flatnonzero(in_range)
    n = len(touched) + 1
    yield pa.RecordBatch.from_arrays([
        pa.nulls(n, pa.string()), pa.nulls(n, pa.string()), pa.nulls(n, pa.string()),
        pa.array(np.r_[touched, -1].astype(np.int32), pa.int32()),
        pa.array(np.r_[in_range[touched], n_keys], pa.int64()),
        pa.array(np.r_[positives[touched], 0], pa.int64())], schema=_CANDIDATE_SCHEMA)


def locations(spark, storage, records: DataFrame, base_files, is_global: bool, prune_by_ranges: bool,
              file_id_col: str, stats: IndexStats) -> tuple[DataFrame | None, list[DataFrame]]:
    """(key, partition, file id) of incoming keys found in `base_files`, and the DataFrames to unpersist after
    the write. Fills the lookup counters of `stats`."""
    plan, footers_read = build_plan(spark, storage, base_files, is_global, prune_by_ranges)
    stats.files_considered = len(base_files)
    stats.footers_read = footers_read
    plan_bc = spark.sparkContext.broadcast(plan)

    def run(batches):
        return _candidate_rows(plan_bc.value, batches)

    ddl = (f"{RECORD_KEY} string, {PARTITION_PATH} string, file_id string, {_FILE_POS} int, {_IN_RANGE} long, "
           f"{_POSITIVES} long")
    candidates = records.select(RECORD_KEY, PARTITION_PATH).mapInArrow(run, ddl).persist()
    counters = (candidates.filter(F.col(_FILE_POS).isNotNull()).groupBy(_FILE_POS)
                .agg(F.sum(_IN_RANGE).alias("in_range"), F.sum(_POSITIVES).alias("positives")).collect())
    by_file = {row[0]: (row[1], row[2]) for row in counters}
    stats.keys_looked_up = int(by_file.pop(-1, (0, 0))[0])
    in_range = {f for f, (n, _) in by_file.items() if n}
    positive = sorted(f for f, (_, p) in by_file.items() if p)
    stats.files_pruned_by_range = len(base_files) - len(in_range)
    stats.files_pruned_by_bloom = len(in_range) - len(positive)
    stats.candidate_files = len(positive)
    if not positive:
        return None, [candidates, plan_bc]
    stored = stored_keys(spark, storage, [base_files[f].path for f in positive], file_id_col)
    pairs = (candidates.filter(F.col(RECORD_KEY).isNotNull())
             .select(RECORD_KEY, PARTITION_PATH, F.col("file_id").alias(file_id_col)))
    return pairs.join(stored, on=[RECORD_KEY, PARTITION_PATH, file_id_col], how="inner"), [candidates, plan_bc]
