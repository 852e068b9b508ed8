"""The one commit protocol every instant-writing action follows:

    begin (requested) -> start (inflight) -> markers + data files (tasks) -> reconcile -> complete | abort

`InstantCommit` owns one instant from its requested file to its completed file, and the cleanup of what it wrote
(as pyiceberg's snapshot producer owns a commit and its uncommitted files):

* **reconcile**: every file under this instant's markers that the write stats do not list is deleted before the
  instant completes: files of failed, retried or speculative task attempts (Hudi's reconcileAgainstMarkers).
  Neither it nor abort deletes a marked log file that holds another instant's blocks: two writers of one slice
  can name the same log file, and the one that lost its create rolled over (markers.own_files).
* **complete**: the completed instant is created last, atomically (create-if-absent). From then on the instant
  is published: only a rollback or restore instant may undo it.
* **abort**: deletes the files the markers name, the markers and the pending instant files; it does nothing once
  the completed instant exists, whatever failed after it (a lock release, a heartbeat, a post-commit service).
  A compaction's abort keeps its requested plan (`keep_plan`), so the next run executes it again.
"""

from __future__ import annotations

import warnings

from pyhudi.commit.markers import delete_markers, marked_files, own_files
from pyhudi.commit.metadata import CommitMetadata
from pyhudi.storage import Storage
from pyhudi.commit.metadata_table import MetadataTableOptions, sync_metadata_table, undo_metadata_deltacommit
from pyhudi.commit.metadata_table.options import DEFAULT_OPTIONS
from pyhudi.timeline import (instant_file, Instant, State, commit_content, create_requested,
                             transition_to_completed, transition_to_inflight)


class InstantCommit:
    def __init__(self, storage: Storage, requested: Instant, keep_plan: bool = False,
                 metadata_options: MetadataTableOptions | None = None):
        """`metadata_options`: the metadata table's service settings from the writer's options (Hudi's defaults
        without them)."""
        self.storage = storage
        self.requested = requested
        self.keep_plan = keep_plan
        self.metadata_options = metadata_options or DEFAULT_OPTIONS
        self.inflight: Instant | None = None
        self.completed: Instant | None = None

    @classmethod
    def begin(cls, storage: Storage, instant_time: str, action: str, plan: bytes = b"",
              metadata_options: MetadataTableOptions | None = None) -> "InstantCommit":
        """Create the requested instant (with its plan, if the action has one)."""
        return cls(storage, create_requested(storage, instant_time, action, plan), metadata_options=metadata_options)

    @property
    def instant_time(self) -> str:
        return self.requested.time

    @property
    def where(self) -> str:
        return f"{self.requested.action} {self.instant_time} of table {self.storage.base_uri}"

    def start(self, metadata: CommitMetadata | None = None) -> Instant:
        """The inflight instant (Hudi writes the empty commit metadata of the operation into it)."""
        content = commit_content(self.storage, metadata.to_json()) if metadata is not None else b""
        self.inflight = transition_to_inflight(self.storage, self.requested, content)
        return self.inflight

    def is_pending(self) -> bool:
        """Whether this instant's inflight file is still there (another writer may have rolled it back)."""
        return self.inflight is not None and self.storage.exists(instant_file(self.storage, self.inflight))

    def is_completed(self) -> bool:
        if self.completed is not None:
            return True
        return self.storage.exists(instant_file(self.storage, self.requested.with_state(State.COMPLETED)))

    def reconcile(self, metadata: CommitMetadata) -> list[str]:
        """Delete every marked file the write stats do not list, but another writer's log file (markers.own_files);
        returns their paths."""
        listed = metadata.paths
        stray = own_files(self.storage, self.instant_time,
                          [path for path in marked_files(self.storage, self.instant_time) if path not in listed])
        for path in stray:
            self.storage.delete_file(path)
        return stray

    def complete(self, metadata: CommitMetadata) -> Instant:
        """Reconcile, then publish the completed instant."""
        if self.inflight is None:
            raise RuntimeError(f"{self.where} was never started")   # a programming error, not bad input
        self.reconcile(metadata)
        # never completed while a metadata table it did not update is named
        sync_metadata_table(self.storage, self.inflight, metadata.to_json(), self.metadata_options)
        self.completed = transition_to_completed(self.storage, self.inflight, metadata.to_json())
        return self.completed

    def finish(self) -> None:
        """After completion: drop the markers (a failure here only leaves a folder the next writer ignores)."""
        try:
            delete_markers(self.storage, self.instant_time)
        except OSError as exc:
            warnings.warn(f"{self.where} is committed, but its marker folder could not be deleted ({exc}); it is "
                          "harmless and can be removed by hand", stacklevel=2)

    def abort(self) -> bool:
        """Undo an unfinished commit; returns False (and undoes nothing) once the completed instant exists."""
        if self.is_completed():
            return False
        undo_metadata_deltacommit(self.storage, self.instant_time)
        for path in own_files(self.storage, self.instant_time, marked_files(self.storage, self.instant_time)):
            self.storage.delete_file(path)
        delete_markers(self.storage, self.instant_time)
        states = (State.INFLIGHT,) if self.keep_plan else (State.INFLIGHT, State.REQUESTED)
        for state in states:
            self.storage.delete_file(instant_file(self.storage, self.requested.with_state(state)))
        return True
