"""Hudi's rollback instant files as typed values: HoodieRollbackPlan (`<t>.rollback.requested`: per file group, the
files a rollback deletes and the logs it appends a rollback block to) and HoodieRollbackMetadata (`<t>.rollback`:
what it deleted). The one owner of their Avro field names; the rollback, the restore, the failed-write policy and
the metadata table read them. Also the HoodieInstantInfo both name their instant with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pyhudi.timeline.avro_record import (ROLLBACK_METADATA, ROLLBACK_PLAN, AvroRecord, encode_optional)

ROLLBACK_PLAN_VERSION = 1
ROLLBACK_METADATA_VERSION = 1


@dataclass(frozen=True)
class InstantInfo(AvroRecord):
    """HoodieInstantInfo: an instant a rollback or restore undoes."""

    FIELDS = {"commit_time": "commitTime", "action": "action"}
    commit_time: str = ""
    action: str = ""


@dataclass(frozen=True)
class RollbackRequest(AvroRecord):
    """HoodieRollbackRequest: one file group's files to delete (full paths) and logs to append a rollback block
    to (full path -> size)."""

    FIELDS = {"partition_path": "partitionPath", "file_id": "fileId", "latest_base_instant": "latestBaseInstant",
              "files_to_delete": "filesToBeDeleted", "log_blocks_to_delete": "logBlocksToBeDeleted"}
    partition_path: str = ""
    file_id: str | None = None
    latest_base_instant: str | None = None
    files_to_delete: list[str] = field(default_factory=list)
    log_blocks_to_delete: Mapping[str, int] | None = None


@dataclass(frozen=True)
class RollbackPlan(AvroRecord):
    """What a requested rollback undoes: the instant and its file groups' requests."""

    FIELDS = {"instant_to_rollback": "instantToRollback", "requests": "RollbackRequests", "version": "version"}
    SCHEMA = ROLLBACK_PLAN
    instant_to_rollback: InstantInfo | None = None
    requests: tuple[RollbackRequest, ...] | None = ()
    version: int | None = ROLLBACK_PLAN_VERSION

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "instant_to_rollback" and value is not None:
            return InstantInfo.from_avro(value)
        if attr == "requests" and value is not None:
            return tuple(RollbackRequest.from_avro(r) for r in value)
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "instant_to_rollback":
            return encode_optional(value)
        if attr == "requests" and value is not None:
            return [r.to_avro() for r in value]
        return value


@dataclass(frozen=True)
class RollbackPartitionMetadata(AvroRecord):
    """HoodieRollbackPartitionMetadata: the files (full paths) a rollback deleted in one partition, the logs it
    appended a rollback block to (full path -> size after) and the failed commit's logs it left, their blocks
    rolled back by that block (full path -> size before). Java writes both maps, empty when there are none."""

    FIELDS = {"partition_path": "partitionPath", "success_delete_files": "successDeleteFiles",
              "failed_delete_files": "failedDeleteFiles", "rollback_log_files": "rollbackLogFiles",
              "log_files_from_failed_commit": "logFilesFromFailedCommit"}
    partition_path: str = ""
    success_delete_files: list[str] = field(default_factory=list)
    failed_delete_files: list[str] = field(default_factory=list)
    rollback_log_files: Mapping[str, int] | None = None
    log_files_from_failed_commit: Mapping[str, int] | None = None


@dataclass(frozen=True)
class RollbackMetadata(AvroRecord):
    """A completed rollback (also each entry of a restore's metadata): the commits it undid and its files."""

    FIELDS = {"start_rollback_time": "startRollbackTime", "time_taken_ms": "timeTakenInMillis",
              "total_files_deleted": "totalFilesDeleted", "commits_rollback": "commitsRollback",
              "partition_metadata": "partitionMetadata", "version": "version", "instants_rollback": "instantsRollback"}
    SCHEMA = ROLLBACK_METADATA
    start_rollback_time: str = ""
    time_taken_ms: int = 0
    total_files_deleted: int = 0
    commits_rollback: list[str] = field(default_factory=list)
    partition_metadata: Mapping[str, RollbackPartitionMetadata] = field(default_factory=dict)
    version: int | None = ROLLBACK_METADATA_VERSION
    instants_rollback: tuple[InstantInfo, ...] = ()

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "partition_metadata" and value is not None:
            return {p: RollbackPartitionMetadata.from_avro(m) for p, m in value.items()}
        if attr == "instants_rollback" and value is not None:
            return tuple(InstantInfo.from_avro(i) for i in value)
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "partition_metadata" and value is not None:
            return {p: m.to_avro() for p, m in value.items()}
        if attr == "instants_rollback" and value is not None:
            return [i.to_avro() for i in value]
        return value
