"""Hudi's restore instant files as typed values: HoodieRestorePlan (`<t>.restore.requested`: the instants a restore
rolls back, newest first, and the savepoint it restores to) and HoodieRestoreMetadata (`<t>.restore`: the rollback
metadata of each). The one owner of their Avro field names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pyhudi.timeline.avro_record import RESTORE_METADATA, RESTORE_PLAN, AvroRecord
from pyhudi.timeline.rollback import InstantInfo, RollbackMetadata

RESTORE_PLAN_VERSION = 2
RESTORE_METADATA_VERSION = 1


@dataclass(frozen=True)
class RestorePlan(AvroRecord):
    """What a requested restore rolls back (newest first) and the savepoint it restores to (None: an instant)."""

    FIELDS = {"instants_to_rollback": "instantsToRollback", "version": "version",
              "savepoint": "savepointToRestoreTimestamp"}
    SCHEMA = RESTORE_PLAN
    instants_to_rollback: tuple[InstantInfo, ...] = ()
    version: int | None = RESTORE_PLAN_VERSION
    savepoint: str | None = None

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "instants_to_rollback" and value is not None:
            return tuple(InstantInfo.from_avro(i) for i in value)
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "instants_to_rollback" and value is not None:
            return [i.to_avro() for i in value]
        return value


@dataclass(frozen=True)
class RestoreMetadata(AvroRecord):
    """A completed restore: per instant it rolled back, that rollback's metadata."""

    FIELDS = {"start_restore_time": "startRestoreTime", "time_taken_ms": "timeTakenInMillis",
              "instants_to_rollback": "instantsToRollback", "rollbacks": "hoodieRestoreMetadata",
              "version": "version", "restore_instant_info": "restoreInstantInfo", "extra_metadata": "extraMetadata"}
    SCHEMA = RESTORE_METADATA
    start_restore_time: str = ""
    time_taken_ms: int = 0
    instants_to_rollback: list[str] = field(default_factory=list)
    rollbacks: Mapping[str, tuple[RollbackMetadata | None, ...]] = field(default_factory=dict)
    version: int | None = RESTORE_METADATA_VERSION
    restore_instant_info: tuple[InstantInfo, ...] = ()
    extra_metadata: Mapping[str, str] | None = None

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "rollbacks" and value is not None:
            return {t: tuple(None if m is None else RollbackMetadata.from_avro(m) for m in ms)
                    for t, ms in value.items()}
        if attr == "restore_instant_info" and value is not None:
            return tuple(InstantInfo.from_avro(i) for i in value)
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "rollbacks" and value is not None:
            return {t: [None if m is None else m.to_avro() for m in ms] for t, ms in value.items()}
        if attr == "restore_instant_info" and value is not None:
            return [i.to_avro() for i in value]
        return value


    @property
    def total_files_deleted(self) -> int:
        return sum(m.total_files_deleted for ms in self.rollbacks.values() for m in ms if m is not None)
