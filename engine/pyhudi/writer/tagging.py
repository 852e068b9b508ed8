"""Index tagging for the staged write (writer/staged.py): each incoming record gets the file group that holds its
key (FILE_ID_COLUMN; null: a new key), by hoodie.index.type (see pyhudi.index), and the index stats that the
commit's extraMetadata and WriteResult.index_stats report. Split from write_action.py: the lookup is the staged
strategy's first step, and the stats helpers serve every strategy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyhudi.index.stats import EXTRA_METADATA_KEY, IndexStats
from pyhudi.merge.payloads import payload_of
from pyhudi.writer import partition_moves
from pyhudi.writer.file_writer import DELETE_COLUMN, FILE_ID_COLUMN, PARTITION_PATH, RECORD_KEY
from pyhudi.writer.live_keys import drop_dead_locations, live_key_check

if TYPE_CHECKING:
    from pyhudi.timeline import WriteStat
    from pyhudi.writer.strategy import WriteJob


@dataclass
class Tagged:
    """A lookup's outcome: the tagged records (evaluated by the write's next Spark action), its stats, the BLOOM
    lookup whose counters arrive with that action, and what it cached (freed after the write)."""

    records: DataFrame
    stats: IndexStats
    bloom_lookup: object = None
    release: list = field(default_factory=list)


def tag(job: WriteJob, records: DataFrame, partitions: list[str] | None) -> Tagged:
    """hoodie.index.type: set FILE_ID_COLUMN to the file group holding each record's key (null: a new key).
    `partitions`: the incoming partitions when known (a partition-scoped lookup reads only their files)."""
    from pyhudi.index import bloom, bucket, lookup, virtual

    spec, view = job.index, job.view
    stats = IndexStats(spec.type)
    if spec.is_bucket:
        # A replace writes every bucket into a new file group (Hudi: "Insert overwrite always generates new
        # bucket file id"): the groups it replaces keep their ids, and a reader drops them.
        existing = {} if job.is_replace else \
            bucket.existing_buckets(view, partitions, job.table_name, spec.num_buckets)
        stats.files_considered = len(existing)
        return Tagged(bucket.tag(records, RECORD_KEY, PARTITION_PATH, FILE_ID_COLUMN, list(spec.hash_fields),
                                 spec.num_buckets, existing, job.instant_time), stats)
    no_location = records.withColumn(FILE_ID_COLUMN, F.lit(None).cast("string"))
    if job.operation in ("insert", "insert_overwrite", "insert_overwrite_table"):
        return Tagged(no_location, stats)   # inserts are not looked up (Hudi: the index only tags upserts, deletes)
    scope = None if spec.is_global else partitions
    base_files = view.latest_base_files(scope)
    if not base_files:
        return Tagged(no_location, stats)
    result = Tagged(no_location, stats)
    if spec.is_bloom:
        result.bloom_lookup = bloom.locations(job.spark, job.storage, records, base_files, spec.is_global,
                                              spec.prune_by_ranges, FILE_ID_COLUMN, stats)
        result.release.extend(result.bloom_lookup.release)
        locations = result.bloom_lookup.locations
    else:
        stats.files_considered = stats.candidate_files = len(base_files)
        paths = [b.path for b in base_files]
        locations = lookup.stored_keys(job.spark, job.storage, paths, FILE_ID_COLUMN) \
            if job.virtual_keys is None else virtual.stored_keys(job.spark, job.storage, paths, job.keygen,
                                                                 job.target_schema, FILE_ID_COLUMN)
    if job.is_mor:   # keys deleted in a file group's logs are not located there (writer/live_keys.py)
        locations = drop_dead_locations(locations, live_key_check(job.table, view, scope), FILE_ID_COLUMN)
    if not spec.is_global:
        result.records = lookup.apply_locations(records, locations, FILE_ID_COLUMN)
        return result
    result.records = partition_moves.tag_global(
        records, locations, FILE_ID_COLUMN, DELETE_COLUMN, spec.update_partition_path,
        tuple(f for f in (job.wc.payload_ordering_field, job.precombine) if f), payload_of(job.wc.payload_class),
        lambda groups: stored_rows(job, groups), result.release)
    return result


def stored_rows(job: WriteJob, groups: set) -> DataFrame:
    """The latest stored rows of file groups ({(partition, file id)}), logs merged, keys computed for a
    virtual-key table: what a global index merges a moving record with."""
    from pyhudi.index.virtual import with_keys
    from pyhudi.reader import read_file_groups

    rows = read_file_groups(job.spark, job.view, groups)
    if job.virtual_keys is None:
        return rows
    keygen = job.virtual_keys
    return rows.mapInArrow(lambda batches: (b for batch in batches for b in with_keys(
        pa.Table.from_batches([batch]), keygen).select(rows.columns).to_batches()), rows.schema)


def finish_index_stats(stats: IndexStats | None, write_stats: list[WriteStat], is_bucket: bool) -> None:
    """Outcome counters from the write stats: which file groups really held incoming keys."""
    if stats is None:
        return
    touched = [s for s in write_stats if s.prev_commit != "null" and s.num_update_writes + s.num_deletes]
    stats.confirmed_files = len({(s.partition_path, s.file_id) for s in touched})
    stats.false_positive_files = max(0, stats.candidate_files - stats.confirmed_files)
    stats.updates = sum(s.num_update_writes + s.num_deletes for s in write_stats)
    stats.inserts = sum(s.num_inserts for s in write_stats)
    if is_bucket:
        stats.keys_looked_up = stats.updates + stats.inserts


def index_extra(stats: IndexStats | None) -> dict:
    """The commit's extraMetadata entry for the index stats (a JSON string, as Hudi's values are strings)."""
    return {EXTRA_METADATA_KEY: stats.to_json()} if stats else {}
