"""Hudi's HoodieWriteStat / HoodieDeltaWriteStat (one written file of a commit) as a typed value: the one owner of
its camelCase JSON keys, so callers read attributes instead of looking keys up by string.

Keys a stat holds that are not modelled here (Java Hudi's recordsStats, ...) are kept in `rest`, and the key
order of a parsed stat in `keys`, so a stat read from a commit serialises back to the same JSON (archival and the
metadata table copy commits)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

# snake_case attribute -> Hudi's JSON key, in the order pyhudi writes a HoodieWriteStat (commit/metadata.write_stat)
_BASE_KEYS = {
    "file_id": "fileId", "path": "path", "cdc_stats": "cdcStats", "prev_commit": "prevCommit",
    "num_writes": "numWrites", "num_deletes": "numDeletes", "num_update_writes": "numUpdateWrites",
    "num_inserts": "numInserts", "total_write_bytes": "totalWriteBytes", "total_write_errors": "totalWriteErrors",
    "temp_path": "tempPath", "partition_path": "partitionPath", "total_log_records": "totalLogRecords",
    "total_log_files_compacted": "totalLogFilesCompacted", "total_log_size_compacted": "totalLogSizeCompacted",
    "total_updated_records_compacted": "totalUpdatedRecordsCompacted", "total_log_blocks": "totalLogBlocks",
    "total_corrupt_log_block": "totalCorruptLogBlock", "total_rollback_blocks": "totalRollbackBlocks",
    "file_size_in_bytes": "fileSizeInBytes", "min_event_time": "minEventTime", "max_event_time": "maxEventTime",
    "runtime_stats": "runtimeStats",
}
# HoodieDeltaWriteStat's own fields (a log file), written after the base ones
_DELTA_KEYS = {"log_version": "logVersion", "log_offset": "logOffset", "base_file": "baseFile",
               "log_files": "logFiles"}
# fields of Hudi's schema (timeline/commit_avro.WRITE_STAT) pyhudi does not write: kept when read, written if set
_OTHER_KEYS = {"total_log_files": "totalLogFiles", "prev_base_file": "prevBaseFile",
               "total_log_read_time_ms": "totalLogReadTimeMs", "num_updates": "numUpdates"}
JSON_KEYS = {**_BASE_KEYS, **_DELTA_KEYS, **_OTHER_KEYS}
_ATTRIBUTES = {key: name for name, key in JSON_KEYS.items()}


@dataclass(frozen=True)
class WriteStat:
    """One file a commit wrote (HoodieWriteStat; with log_version set, a log file's HoodieDeltaWriteStat)."""

    file_id: str | None = None
    path: str | None = None
    cdc_stats: dict[str, int] | None = None      # {relative -cdc log path: size}: a CDC table's merge
    prev_commit: str | None = None
    num_writes: int | None = None
    num_deletes: int | None = None
    num_update_writes: int | None = None
    num_inserts: int | None = None
    total_write_bytes: int | None = None
    total_write_errors: int | None = None
    temp_path: str | None = None
    partition_path: str | None = None
    total_log_records: int | None = None
    total_log_files_compacted: int | None = None
    total_log_size_compacted: int | None = None
    total_updated_records_compacted: int | None = None
    total_log_blocks: int | None = None
    total_corrupt_log_block: int | None = None
    total_rollback_blocks: int | None = None
    file_size_in_bytes: int | None = None
    min_event_time: int | None = None
    max_event_time: int | None = None
    runtime_stats: dict[str, Any] | None = None
    log_version: int | None = None
    log_offset: int | None = None
    base_file: str | None = None
    log_files: list[str] | None = None
    total_log_files: int | None = None
    prev_base_file: str | None = None
    total_log_read_time_ms: int | None = None
    num_updates: int | None = None
    # JSON keys not modelled above, with their values
    rest: Mapping[str, Any] = field(default_factory=dict, compare=False)
    # the JSON keys of a parsed stat in their order (None: pyhudi's own order, see to_json)
    keys: tuple[str, ...] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_json(cls, stat: Mapping[str, Any]) -> WriteStat:
        known = {_ATTRIBUTES[k]: v for k, v in stat.items() if k in _ATTRIBUTES}
        rest = {k: v for k, v in stat.items() if k not in _ATTRIBUTES}
        return cls(**known, rest=rest, keys=tuple(stat))

    def to_json(self) -> dict[str, Any]:
        """The stat's JSON: a parsed stat's keys in their order; a new one's as pyhudi writes it (the delta
        fields only for a log file, fields pyhudi does not write only when set)."""
        if self.keys is not None:
            return {k: getattr(self, _ATTRIBUTES[k]) if k in _ATTRIBUTES else self.rest[k] for k in self.keys}
        out = {key: getattr(self, name) for name, key in _BASE_KEYS.items()}
        if self.log_version is not None:
            out.update((key, getattr(self, name)) for name, key in _DELTA_KEYS.items())
        out.update((key, getattr(self, name)) for name, key in _OTHER_KEYS.items() if getattr(self, name) is not None)
        out.update(self.rest)
        return out

    @property
    def is_log_file(self) -> bool:
        """A HoodieDeltaWriteStat (a log file's stat)."""
        return self.log_version is not None

    @property
    def file_name(self) -> str:
        """The written file's name (the last part of its path)."""
        return (self.path or "").rsplit("/", 1)[-1]
