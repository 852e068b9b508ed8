"""The timeline side of one write: start an instant safely, detect conflicts, complete it.

Single writer (`hoodie.write.concurrency.mode=single_writer`, failed writes EAGER): before starting, every pending
write left by a failed writer is rolled back (services/rollback.py).

Optimistic concurrency control (`optimistic_concurrency_control`, failed writes LAZY): under the table lock
(services/lock.py) the writer rolls back only instants whose heartbeat expired, picks an instant time later than
everything on the timeline, starts its heartbeat and creates its requested instant — so instant order is start
order. Files are written without the lock. At commit, under the lock again, the writer compares the file groups
it wrote with those of every write that completed since it started (Hudi's
SimpleConcurrentFileWritesConflictResolutionStrategy; a compaction counts only when it is later than this write,
as is a compaction scheduled since it started): an overlap raises WriteConflictError and the write is undone.
"""

from __future__ import annotations

import contextlib
from typing import Mapping

from pyhudi.errors import WriteConflictError
from pyhudi.services.heartbeat import Heartbeat
from pyhudi.services.lock import FileSystemLock
from pyhudi.services.rollback import OCC, CONCURRENCY_KEY, rollback_failed_writes
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.timeline import (COMMIT, COMPACTION, METAFOLDER, Instant, Timeline, create_requested, new_instant_time,
                             transition_to_completed)


def written_file_ids(metadata: dict) -> set[str]:
    """File ids a commit wrote or replaced."""
    ids = {s.get("fileId") for stats in (metadata.get("partitionToWriteStats") or {}).values() for s in stats}
    for replaced in (metadata.get("partitionToReplaceFileIds") or {}).values():
        ids.update(replaced)
    ids.discard(None)
    return ids


class WriteTransaction:
    def __init__(self, table: HudiTable, options: Mapping[str, str]):
        self.table = table
        self.storage = table.storage
        self.options = dict(options)
        self.occ = str(self.options.get(CONCURRENCY_KEY, "")).strip().lower() == OCC
        self.heartbeat: Heartbeat | None = None
        self._seen: set[tuple[str, str]] = set()
        self.instant_time: str | None = None

    @contextlib.contextmanager
    def _locked(self):
        if not self.occ:
            yield
            return
        lock = FileSystemLock(self.storage, self.options)
        lock.acquire()
        try:
            yield
        finally:
            lock.release()

    def begin(self, action: str) -> tuple[Instant, Timeline]:
        """Roll back failed writes, then create this write's requested instant; returns it and the timeline
        the write plans against."""
        with self._locked():
            rollback_failed_writes(self.table, self.options)
            timeline = self.table.timeline()
            self._seen = {(i.time, i.action) for i in timeline.instants
                          if i.is_completed or i.action == COMPACTION}
            self.instant_time = new_instant_time(after=timeline.latest_time())
            if self.occ:
                self.heartbeat = Heartbeat(self.storage, self.instant_time, self.options).start()
                crash_point("occ.holding_lock")
            requested = create_requested(self.storage, self.instant_time, action)
        crash_point("write.after_requested")
        return requested, timeline

    def complete(self, inflight: Instant, metadata: dict) -> Instant:
        """Check for conflicting concurrent commits (OCC) and publish the completed instant."""
        with self._locked():
            if self.occ:
                if not self.storage.exists(f"{METAFOLDER}/{inflight.file_name}"):
                    raise WriteConflictError(
                        f"write {inflight.time} to table {self.table.name} at {self.storage.base_uri} was rolled "
                        "back by another writer (its heartbeat looked expired: raise "
                        "hoodie.client.heartbeat.interval_in_ms or tolerable.misses); retry the write")
                self._check_conflicts(written_file_ids(metadata))
            crash_point("write.before_complete")
            return transition_to_completed(self.storage, inflight, metadata)

    def end(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()
            self.heartbeat = None

    def _check_conflicts(self, mine: set[str]) -> None:
        if not mine:
            return
        timeline = self.table.timeline()
        for instant in timeline.instants:
            if (instant.time, instant.action) in self._seen or instant.time == self.instant_time:
                continue
            if instant.is_completed and instant.action in (COMMIT, "deltacommit", "replacecommit"):
                if instant.action == COMMIT and instant.time < self.instant_time and self._is_compaction(instant):
                    continue   # an earlier compaction: this write already wrote into its new file slices
                theirs = written_file_ids(timeline.read_metadata(instant))
            elif instant.action == COMPACTION and not instant.is_completed:
                theirs = self._compaction_file_ids(instant.time)
            else:
                continue
            overlap = mine & theirs
            if overlap:
                raise WriteConflictError(
                    f"write {self.instant_time} to table {self.table.name} at {self.storage.base_uri} conflicts "
                    f"with {instant.action} {instant.time}, which changed the same file groups "
                    f"({', '.join(sorted(overlap)[:5])}) after this write started; this write was rolled back. "
                    "Retry it: it will read the latest data")

    def _is_compaction(self, instant: Instant) -> bool:
        return self.storage.exists(f".hoodie/{instant.time}.compaction.requested")

    def _compaction_file_ids(self, instant_time: str) -> set[str]:
        from pyhudi.services.compaction import read_compaction_plan
        return {op.file_id for op in read_compaction_plan(self.storage, instant_time).operations}
