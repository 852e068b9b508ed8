"""Instants: (time, action, state[, completion time]) and their file names in `.hoodie/` (timeline layout 1), with one
historical quirk: an inflight `commit` is named `<time>.inflight`. The names of the timeline folders and actions live
here too; layout 2's names are in timeline/layout.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import total_ordering

METAFOLDER = ".hoodie"
ARCHIVED_FOLDER = ".hoodie/archived"
TEMP_FOLDER = ".hoodie/.temp"

COMMIT = "commit"
DELTA_COMMIT = "deltacommit"
REPLACE_COMMIT = "replacecommit"
CLEAN = "clean"
ROLLBACK = "rollback"
SAVEPOINT = "savepoint"
COMPACTION = "compaction"
RESTORE = "restore"
INDEXING = "indexing"
SCHEMA_COMMIT = "schemacommit"
LOG_COMPACTION = "logcompaction"
CLUSTERING = "clustering"      # timeline layout 2 only: a pending clustering (it completes as a replacecommit)

ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLEAN, ROLLBACK, SAVEPOINT, COMPACTION, RESTORE, INDEXING,
           SCHEMA_COMMIT, LOG_COMPACTION, CLUSTERING)
# Actions whose completion changes the data a reader sees.
WRITE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT)


class State(Enum):
    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"


@total_ordering
@dataclass(frozen=True)
class Instant:
    time: str
    action: str
    state: State = State.COMPLETED
    # Timeline layout 2: when a completed instant completed (its file name says); not part of its identity.
    completion_time: str | None = field(default=None, compare=False)

    @property
    def file_name(self) -> str:
        if self.state == State.COMPLETED:
            # A completed compaction is a commit.
            action = COMMIT if self.action == COMPACTION else self.action
            return f"{self.time}.{action}"
        if self.state == State.INFLIGHT:
            if self.action == COMMIT:
                return f"{self.time}.inflight"
            return f"{self.time}.{self.action}.inflight"
        return f"{self.time}.{self.action}.requested"

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED

    def with_state(self, state: State) -> "Instant":
        return Instant(self.time, self.action, state)

    def _order(self) -> tuple[str, int, str]:
        return (self.time, STATE_ORDER[self.state], self.action)

    def __lt__(self, other: "Instant") -> bool:
        return self._order() < other._order()

    def __str__(self) -> str:
        return f"[{self.time}__{self.action}__{self.state.name}]"


STATE_ORDER = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


def parse_instant_file_name(name: str) -> Instant | None:
    """Instant for a timeline file name, or None for other files (hoodie.properties, folders, temp files)."""
    parts = name.split(".")
    if not parts[0].isdigit() or len(parts) < 2:
        return None
    time_part = parts[0]
    if len(parts) == 2:
        if parts[1] == "inflight":
            return Instant(time_part, COMMIT, State.INFLIGHT)
        if parts[1] in ACTIONS:
            return Instant(time_part, parts[1], State.COMPLETED)
        return None
    if len(parts) == 3 and parts[1] in ACTIONS and parts[2] in ("requested", "inflight"):
        return Instant(time_part, parts[1], State(parts[2]))
    return None
