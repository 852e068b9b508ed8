"""Keeping a table's metadata table true before one of its instants completes (the commit protocol's last step
before publication; DESIGN.md: never complete a data instant while hoodie.properties names a metadata-table
partition that instant did not update).

A table of version 8 or 9 whose `files` partition is ready is *maintained*: the instant's file changes go into a
metadata delta commit at the same instant time, completed before the data instant (Java's order); a rollback also
undoes the metadata delta commit of the instant it rolls back; every hoodie.metadata.compact.max.delta.commits
delta commits the files partition is compacted first; its old file slices are cleaned and its old instants archived
when due (clean.py, archive.py), all following the data writer's options as Java derives them (options.py). The
partitions pyhudi does not maintain (record_index, column_stats, partition_stats, secondary and expression
indexes, bloom_filters) are dropped first, as Java's writer drops an index it has disabled: unnamed in
hoodie.properties, then their folders deleted. Every other table with a metadata table (version 6, no ready `files`
partition) has it dropped whole (table/metadata_table.py).
"""

from __future__ import annotations

from typing import Any

from pyhudi import config as C
from pyhudi.commit.metadata_table.changes import clean_records, commit_records, rollback_records
from pyhudi.commit.metadata_table.archive import archive_if_due
from pyhudi.commit.metadata_table.clean import clean_if_due
from pyhudi.commit.metadata_table.compaction import compact
from pyhudi.commit.metadata_table.deltacommit import undo_deltacommit, write_deltacommit
from pyhudi.commit.metadata_table.files_slice import FilesSlice, is_metadata_only, latest_slice
from pyhudi.commit.metadata_table.options import DEFAULT_OPTIONS, MetadataTableOptions
from pyhudi.commit.metadata_table.records import FILES_PARTITION, FilesRecord, record_schema_json
from pyhudi.storage import Storage
from pyhudi.table.metadata_table import (METADATA_FOLDER, PARTITIONS, PARTITIONS_INFLIGHT, drop_metadata_table,
                                         metadata_partitions)
from pyhudi.table.properties import HUDI_1X_TABLE_VERSIONS, read_table_properties, update_table_properties
from pyhudi.testing import crash_point
from pyhudi.timeline import (CLEAN, CLUSTERING, COMMIT, CommitMetadata, COMPACTION, DELTA_COMMIT, METAFOLDER, REPLACE_COMMIT, RESTORE,
                             ROLLBACK, SAVEPOINT, Instant, State, Timeline, instant_file, new_instant_time)
from pyhudi.timeline.clean_metadata import CleanMetadata
from pyhudi.timeline.restore import RestoreMetadata
from pyhudi.timeline.rollback import RollbackMetadata


def metadata_storage(storage: Storage) -> Storage:
    """The metadata table's own base path (a Hudi table at `.hoodie/metadata`)."""
    return Storage(f"{storage.base_uri.rstrip('/')}/{METADATA_FOLDER}")


def maintained(values: dict[str, str]) -> bool:
    """Whether pyhudi keeps this table's metadata table (its files partition) rather than dropping it."""
    ready = [p.strip() for p in (values.get(PARTITIONS) or "").split(",")]
    return values.get(C.TABLE_VERSION.key) in HUDI_1X_TABLE_VERSIONS and FILES_PARTITION in ready


def sync_metadata_table(storage: Storage, instant: Instant, metadata: dict[str, Any],
                        options: MetadataTableOptions = DEFAULT_OPTIONS) -> None:
    """Before `instant` (inflight, holding `metadata`) completes: maintain or drop the metadata table, its table
    services following `options` (the data writer's, options.py)."""
    try:
        values = read_table_properties(storage).values
    except FileNotFoundError:   # a bare timeline: nothing can name a metadata table
        return
    mdt = metadata_storage(storage)
    if not maintained(values) or not mdt.exists(f"{METAFOLDER}/hoodie.properties"):
        drop_metadata_table(storage)
        return
    if instant.action == SAVEPOINT:   # pins files, changes none (and shares its commit's instant time)
        return
    _drop_unmaintained(storage, mdt, values)
    schema = record_schema_json(values[C.TABLE_VERSION.key])
    data_timeline = Timeline.load(storage)
    for target in _rolled_back(instant, metadata):
        undo_deltacommit(mdt, target)
    mdt_timeline = _settled(mdt)
    if clean_if_due(mdt, mdt_timeline, data_timeline, instant.time, options):
        crash_point("metadata_table.after_clean")
        mdt_timeline = Timeline.load(mdt)
    if archive_if_due(mdt, mdt_timeline, data_timeline, options):
        mdt_timeline = Timeline.load(mdt)
    files_slice = latest_slice(mdt, mdt_timeline, data_timeline)
    if _delta_commits_since_compaction(files_slice) >= options.compact_max_delta_commits and \
            _quiet(data_timeline, mdt_timeline, instant):
        compact(mdt, new_instant_time(after=instant.time, zone=mdt_timeline.zone), files_slice, schema)
        crash_point("metadata_table.after_compaction")
        files_slice = latest_slice(mdt, Timeline.load(mdt), data_timeline)
    write_deltacommit(mdt, instant.time, _records(instant, metadata), schema, files_slice)
    crash_point("metadata_table.after_deltacommit")


def _rolled_back(instant: Instant, metadata: dict[str, Any]) -> list[str]:
    """The instants a rollback or restore undid: their metadata delta commits go too."""
    if instant.action == ROLLBACK:
        return list(RollbackMetadata.from_avro(metadata).commits_rollback or [])
    if instant.action == RESTORE:
        return list(RestoreMetadata.from_avro(metadata).instants_to_rollback or [])
    return []


def _records(instant: Instant, metadata: dict[str, Any]) -> dict[str, FilesRecord]:
    if instant.action == CLEAN:
        return clean_records(CleanMetadata.from_avro(metadata))
    if instant.action == ROLLBACK:
        return rollback_records(RollbackMetadata.from_avro(metadata))
    if instant.action == RESTORE:   # HoodieRestoreMetadata: the rollback metadata of each instant it undid
        records: dict[str, FilesRecord] = {}
        for rollbacks in RestoreMetadata.from_avro(metadata).rollbacks.values():
            for rollback in rollbacks or ():
                if rollback is None:
                    continue
                for key, record in rollback_records(rollback).items():
                    records.setdefault(key, FilesRecord(key)).merge(record)
        return records
    return commit_records(CommitMetadata.from_json(metadata))


def _drop_unmaintained(storage: Storage, mdt: Storage, values: dict[str, str]) -> None:
    """Unname every metadata partition but `files`, then delete their folders (Java's deleteMetadataIndex)."""
    others = [p for p in metadata_partitions(values) if p != FILES_PARTITION]
    if others or values.get(PARTITIONS) != FILES_PARTITION:
        update_table_properties(storage, {PARTITIONS: FILES_PARTITION, PARTITIONS_INFLIGHT: ""})
        crash_point("metadata_table.after_unnaming_indexes")
    for folder in mdt.list_dirs(""):
        if folder not in (FILES_PARTITION, METAFOLDER):
            mdt.delete_dir(folder)


def _settled(mdt: Storage) -> Timeline:
    """The metadata timeline after removing a metadata compaction a crash left pending (its base file is not
    trusted; the next compaction redoes it)."""
    timeline = Timeline.load(mdt)
    pending = timeline.pending([COMPACTION])
    for instant in pending:
        for info in mdt.list_files(FILES_PARTITION):
            if info.base_name.endswith(f"_{instant.time}.hfile"):
                mdt.delete_file(f"{FILES_PARTITION}/{info.base_name}")
        for state in (State.INFLIGHT, State.REQUESTED):
            path = instant_file(mdt, Instant(instant.time, COMPACTION, state))
            if mdt.exists(path):
                mdt.delete_file(path)
    return Timeline.load(mdt) if pending else timeline


def _delta_commits_since_compaction(files_slice: FilesSlice) -> int:
    """Delta commits since the last compaction, as Java counts them (CompactionUtils.
    getDeltaCommitsSinceLatestCompaction): those requested after it (the one that completed just after it, requested
    before, is not counted), or every one before the first compaction (the initialising one included)."""
    if is_metadata_only(files_slice.base_instant):
        return len(files_slice.log_files)
    return sum(1 for _, instant in files_slice.log_files if instant > files_slice.base_instant)


def _quiet(data_timeline: Timeline, mdt_timeline: Timeline, instant: Instant) -> bool:
    """Compact unless a data instant at or before the latest completed metadata delta commit is pending (its
    metadata delta commit may be in the slice while it may still fail), as Java's
    validateTimelineBeforeSchedulingCompaction decides. A writer that began since has not written its delta commit
    (writers write theirs under the table lock, as this one does): it completes after the compaction and belongs to
    the new slice, which is sliced by completion time."""
    deltas = mdt_timeline.completed([DELTA_COMMIT])
    latest = deltas[-1].time if deltas else ""
    pending = data_timeline.pending([COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, CLUSTERING])
    return all(i.time == instant.time or is_metadata_only(i.time) or i.time > latest for i in pending)
