"""Undoing commits as the client runs them (`pyhudi.Table.rollback` and `.savepoints`, the free functions, CALL
rollback_to_instant and the savepoint procedures): rollback of the latest commit, savepoints, and restore to a
savepoint. Results are typed, with Hudi's own metadata records kept beside them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyhudi.services import rollback as rollbacks
from pyhudi.services import savepoint as savepoints
from pyhudi.timeline import RESTORE, ROLLBACK, SAVEPOINT, Instant
from pyhudi.timeline.restore import RestoreMetadata
from pyhudi.timeline.rollback import RollbackMetadata

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class RollbackResult:
    """A completed rollback or restore: its own instant, the commits it undid (newest first), the files it
    deleted, and Hudi's HoodieRollbackMetadata / HoodieRestoreMetadata (typed: `record`; as its Avro record:
    `metadata`)."""

    instant: Instant
    rolled_back: list[str]
    files_deleted: int
    record: RollbackMetadata | RestoreMetadata = field(repr=False)

    @property
    def metadata(self) -> dict:
        """Hudi's HoodieRollbackMetadata / HoodieRestoreMetadata record (camelCase fields, as stored)."""
        return self.record.to_avro()

    @classmethod
    def of_rollback(cls, metadata: RollbackMetadata) -> "RollbackResult":
        return cls(Instant(str(metadata.start_rollback_time), ROLLBACK), list(metadata.commits_rollback or []),
                   int(metadata.total_files_deleted or 0), metadata)

    @classmethod
    def of_restore(cls, metadata: RestoreMetadata) -> "RollbackResult":
        return cls(Instant(str(metadata.start_restore_time), RESTORE), list(metadata.instants_to_rollback or []),
                   metadata.total_files_deleted, metadata)


def rollback_to_instant(spark: "SparkSession", path: str, instant_time: str) -> RollbackResult:
    """Roll back the latest completed commit `instant_time` under a `rollback` instant."""
    return RollbackResult.of_rollback(rollbacks.rollback_to_instant(spark, str(path), instant_time))


def restore_to_savepoint(spark: "SparkSession", path: str, instant_time: str) -> RollbackResult:
    """Roll back every instant after the savepoint `instant_time`, newest first, under one `restore` instant."""
    return RollbackResult.of_restore(rollbacks.restore_to_savepoint(spark, str(path), instant_time))


def create_savepoint(spark: "SparkSession", path: str, instant_time: str | None = None, user: str = "", comments: str = "") -> Instant:
    """Savepoint a completed commit (default the latest): the cleaner keeps its files; returns the savepoint."""
    return Instant(savepoints.create_savepoint(spark, str(path), instant_time, user, comments), SAVEPOINT)


def delete_savepoint(spark: "SparkSession", path: str, instant_time: str) -> None:
    """Remove the savepoint at `instant_time` (TimelineError naming the savepoints when there is none)."""
    savepoints.delete_savepoint(spark, str(path), instant_time)


def show_savepoints(spark: "SparkSession", path: str) -> list[Instant]:
    """The table's savepoints, oldest first."""
    return [Instant(t, SAVEPOINT) for t in savepoints.show_savepoints(spark, str(path))]
