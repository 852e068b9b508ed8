"""Hudi's HoodieCleanerPlan (the requested clean, `<t>.clean.requested`) as a typed value: the files and
partitions a clean will delete and the commit it retains from. The one owner of its Avro field names; the cleaner
writes it, runs it, and the archiver, the metadata table and the health report read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pyhudi.timeline.avro_record import CLEANER_PLAN_SCHEMA, AvroRecord, encode_optional

CLEAN_PLAN_VERSION = 2          # CleanPlanner.LATEST_CLEAN_PLAN_VERSION: HoodieCleanFileInfo paths


@dataclass(frozen=True)
class ActionInstant(AvroRecord):
    """HoodieActionInstant: an instant as a clean plan names it (the earliest one it retains)."""

    FIELDS = {"timestamp": "timestamp", "action": "action", "state": "state"}
    timestamp: str = ""
    action: str = ""
    state: str = "COMPLETED"


@dataclass(frozen=True)
class CleanFileInfo(AvroRecord):
    """HoodieCleanFileInfo: one file a version-2 plan deletes (its full path)."""

    FIELDS = {"file_path": "filePath", "is_bootstrap_base_file": "isBootstrapBaseFile"}
    file_path: str | None = None
    is_bootstrap_base_file: bool | None = None


@dataclass(frozen=True)
class CleanerPlan(AvroRecord):
    """What a requested clean deletes: file_paths (version 2: full paths) or files (version 1: names) per
    partition, and whole partitions."""

    FIELDS = {"earliest_instant_to_retain": "earliestInstantToRetain", "policy": "policy",
              "files": "filesToBeDeletedPerPartition", "version": "version",
              "file_paths": "filePathsToBeDeletedPerPartition", "partitions_to_delete": "partitionsToBeDeleted",
              "extra_metadata": "extraMetadata"}
    SCHEMA = CLEANER_PLAN_SCHEMA
    earliest_instant_to_retain: ActionInstant | None = None
    policy: str = ""
    files: Mapping[str, list[str]] | None = None                     # version 1: partition -> file names
    version: int | None = CLEAN_PLAN_VERSION
    file_paths: Mapping[str, tuple[CleanFileInfo, ...]] | None = None  # version 2: partition -> files
    partitions_to_delete: list[str] | None = None
    extra_metadata: Mapping[str, str] | None = None

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "earliest_instant_to_retain" and value is not None:
            return ActionInstant.from_avro(value)
        if attr == "file_paths" and value is not None:
            return {p: tuple(CleanFileInfo.from_avro(f) for f in files) for p, files in value.items()}
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "earliest_instant_to_retain":
            return encode_optional(value)
        if attr == "file_paths" and value is not None:
            return {p: [f.to_avro() for f in files] for p, files in value.items()}
        return value


    @property
    def earliest_commit_to_retain(self) -> str | None:
        """The time of the earliest commit the clean retains (None: it retains every commit)."""
        retain = self.earliest_instant_to_retain
        return retain.timestamp or None if retain is not None else None
