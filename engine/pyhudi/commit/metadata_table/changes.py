"""What an instant changes in the data table's file listing, as files-partition records (Hudi's
HoodieTableMetadataUtil.convertMetadataToFilesPartitionRecords and its clean/rollback counterparts).

- a commit, delta commit, replacecommit (insert_overwrite, delete_partition, clustering) or compaction adds the
  files its write stats name, with their sizes (CDC log files too), and lists its partitions under
  `__all_partitions__`. Replaced file groups stay listed: their files go when the cleaner deletes them.
- a clean marks the files it deleted as deleted, and a partition it deleted whole as deleted from
  `__all_partitions__`.
- a rollback marks the files it deleted as deleted and records the new sizes of the log files it appended to,
  and the sizes of the failed commit's log files it left.
"""

from __future__ import annotations

import posixpath

from pyhudi.commit.metadata_table.records import ALL_PARTITIONS_KEY, FileEntry, FilesRecord, partition_key
from pyhudi.timeline import CommitMetadata
from pyhudi.timeline.clean_metadata import CleanMetadata
from pyhudi.timeline.rollback import RollbackMetadata


def _record(records: dict[str, FilesRecord], partition: str) -> FilesRecord:
    """The partition's record, created empty (a partition the instant touched is listed even with no file)."""
    return records.setdefault(partition_key(partition), FilesRecord(partition_key(partition)))


def _add(records: dict[str, FilesRecord], partition: str, name: str, entry: FileEntry) -> None:
    record = _record(records, partition)
    record.merge(FilesRecord(record.key, {name: entry}))


def _partitions(records: dict[str, FilesRecord], partitions: list[str], deleted: bool = False) -> None:
    if partitions:
        listed = records.setdefault(ALL_PARTITIONS_KEY, FilesRecord(ALL_PARTITIONS_KEY))
        for partition in partitions:
            listed.entries[partition_key(partition)] = FileEntry(0, deleted)


def commit_records(metadata: CommitMetadata) -> dict[str, FilesRecord]:
    """The records of a commit's metadata (its write stats by partition)."""
    records: dict[str, FilesRecord] = {}
    stats = metadata.stats_by_partition()
    for partition, partition_stats in stats.items():
        _record(records, partition)
        for stat in partition_stats:
            path = stat.path
            if path:
                _add(records, partition, posixpath.basename(path), FileEntry(int(stat.file_size_in_bytes or 0)))
            for cdc_path, size in (stat.cdc_stats or {}).items():
                _add(records, partition, posixpath.basename(cdc_path), FileEntry(int(size or 0)))
    _partitions(records, sorted(stats))
    return records


def clean_records(metadata: CleanMetadata) -> dict[str, FilesRecord]:
    """The records of a clean (HoodieCleanMetadata: partitionMetadata[p].successDeleteFiles, isPartitionDeleted)."""
    records: dict[str, FilesRecord] = {}
    deleted_partitions = []
    for partition, entry in metadata.partition_metadata.items():
        for name in entry.success_delete_files or []:
            _add(records, partition, posixpath.basename(name), FileEntry(0, True))
        if entry.is_partition_deleted:
            deleted_partitions.append(partition)
    _partitions(records, sorted(deleted_partitions), deleted=True)
    return records


def rollback_records(metadata: RollbackMetadata) -> dict[str, FilesRecord]:
    """The records of a rollback (HoodieRollbackMetadata: successDeleteFiles deleted; where it appended rollback
    blocks, rollbackLogFiles and the failed commit's logFilesFromFailedCommit added, the larger size winning, as
    Java's HoodieTableMetadataUtil does: the failed commit's MDT deltacommit, which named them, is rolled back)."""
    records: dict[str, FilesRecord] = {}
    for partition, entry in metadata.partition_metadata.items():
        for path in entry.success_delete_files or []:
            _add(records, partition, posixpath.basename(path), FileEntry(0, True))
        if entry.rollback_log_files:
            added: dict[str, int] = {}
            for path, size in [*entry.rollback_log_files.items(),
                               *(entry.log_files_from_failed_commit or {}).items()]:
                name = posixpath.basename(path)
                added[name] = max(added.get(name, 0), int(size or 0))
            for name, size in added.items():
                _add(records, partition, name, FileEntry(size))
    return records
