"""Hudi's HoodieCleanMetadata (a completed clean, `<t>.clean`) as a typed value: what the clean deleted per
partition and the commit it retained from. The one owner of its Avro field names; the archiver, the clean trigger,
the metadata table and savepoint read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pyhudi.timeline.avro_record import CLEAN_METADATA_SCHEMA, AvroRecord

CLEAN_METADATA_VERSION = 2      # CleanerUtils.LATEST_CLEAN_METADATA_VERSION


@dataclass(frozen=True)
class CleanPartitionMetadata(AvroRecord):
    """HoodieCleanPartitionMetadata: the files (names) a clean deleted, or failed to, in one partition."""

    FIELDS = {"partition_path": "partitionPath", "policy": "policy", "delete_path_patterns": "deletePathPatterns",
              "success_delete_files": "successDeleteFiles", "failed_delete_files": "failedDeleteFiles",
              "is_partition_deleted": "isPartitionDeleted"}
    partition_path: str = ""
    policy: str = ""
    delete_path_patterns: list[str] = field(default_factory=list)
    success_delete_files: list[str] = field(default_factory=list)
    failed_delete_files: list[str] = field(default_factory=list)
    is_partition_deleted: bool | None = None


def _decode_partitions(value: Mapping[str, Any] | None) -> dict[str, CleanPartitionMetadata] | None:
    return None if value is None else {p: CleanPartitionMetadata.from_avro(m) for p, m in value.items()}


def _encode_partitions(value: Mapping[str, CleanPartitionMetadata] | None) -> dict[str, Any] | None:
    return None if value is None else {p: m.to_avro() for p, m in value.items()}


@dataclass(frozen=True)
class CleanMetadata(AvroRecord):
    """A completed clean: partition_metadata per partition it touched, earliest_commit_to_retain ("" when it
    retained every commit) and last_completed_commit (the trigger counts commits after it)."""

    FIELDS = {"start_clean_time": "startCleanTime", "time_taken_ms": "timeTakenInMillis",
              "total_files_deleted": "totalFilesDeleted", "earliest_commit_to_retain": "earliestCommitToRetain",
              "last_completed_commit": "lastCompletedCommitTimestamp", "partition_metadata": "partitionMetadata",
              "version": "version", "bootstrap_partition_metadata": "bootstrapPartitionMetadata",
              "extra_metadata": "extraMetadata"}
    SCHEMA = CLEAN_METADATA_SCHEMA
    start_clean_time: str = ""
    time_taken_ms: int = 0
    total_files_deleted: int = 0
    earliest_commit_to_retain: str = ""
    last_completed_commit: str = ""
    partition_metadata: Mapping[str, CleanPartitionMetadata] = field(default_factory=dict)
    version: int | None = CLEAN_METADATA_VERSION
    bootstrap_partition_metadata: Mapping[str, CleanPartitionMetadata] | None = None
    extra_metadata: Mapping[str, str] | None = None

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr in ("partition_metadata", "bootstrap_partition_metadata"):
            return _decode_partitions(value)
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr in ("partition_metadata", "bootstrap_partition_metadata"):
            return _encode_partitions(value)
        return value


    def deleted_files(self) -> dict[str, list[str]]:
        """partition -> names of the files the clean deleted (successDeleteFiles)."""
        return {p: list(m.success_delete_files) for p, m in self.partition_metadata.items()}
