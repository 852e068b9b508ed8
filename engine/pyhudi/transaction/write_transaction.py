"""The timeline side of one write: start an instant safely, detect conflicts, complete it.

Every write beats a heartbeat (`.hoodie/.heartbeat/<instant>`, transaction/heartbeat.py) from before its requested
instant exists until it ends, so table services can tell a live write from a failed one.

Single writer (`hoodie.write.concurrency.mode=single_writer`, failed writes EAGER): before starting, every pending
write left by a failed writer is rolled back (transaction/failed_writes.py).

Optimistic concurrency control (`optimistic_concurrency_control`, failed writes LAZY): under the table lock
(transaction/lock.py) the writer rolls back only instants whose heartbeat expired, picks an instant time later than
everything on the timeline and creates its requested instant — so instant order is start order. Files are
written without the lock. At commit, under the lock again, the writer compares the file groups it wrote with
those of every write that completed since it started (Hudi's SimpleConcurrentFileWritesConflictResolutionStrategy;
a compaction counts only when it is later than this write, as is a compaction scheduled since it started): an
overlap raises WriteConflictError and the write is undone.

In both modes the commit first checks that its inflight instant still exists: a writer whose pending instant was
rolled back meanwhile fails instead of publishing a commit whose files are gone. Once the completed instant exists
nothing here undoes it: a failure to release the lock or stop the heartbeat becomes a warning. Under OCC the
writer checks, just before publishing, that the lock file is still its own (transaction/lock.py check_held): a writer
whose lock expired and was taken over raises LockLostError and its write is undone, nothing published.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Mapping

from pyhudi import config as C
from pyhudi.commit.instant_commit import InstantCommit
from pyhudi.commit.metadata_table import MetadataTableOptions, can_build_files_partition, initialize_files_partition
from pyhudi.commit.metadata import CommitMetadata
from pyhudi.errors import WriteConflictError
from pyhudi.transaction.heartbeat import Heartbeat
from pyhudi.transaction.lock import FileSystemLock
from pyhudi.transaction.failed_writes import CONCURRENCY_KEY, OCC, rollback_failed_writes_on
from pyhudi.table import HudiTable
from pyhudi.table.metadata_table import drop_metadata_table
from pyhudi.testing import crash_point
from pyhudi.timeline import COMMIT, COMPACTION, Instant, Timeline, new_instant_time


class WriteTransaction:
    def __init__(self, table: HudiTable, options: Mapping[str, str]):
        self.table = table
        self.storage = table.storage
        self.options = dict(options)
        self.occ = str(self.options.get(CONCURRENCY_KEY, "")).strip().lower() == OCC
        # hoodie.metadata.enable (Hudi's default true) builds the files partition of a version 8/9 table that has
        # none, as Java's writer initialises it; false drops the metadata table (Java's writer with it disabled)
        self.drops_metadata_table = str(self.options.get(C.METADATA_ENABLE.key, "")).strip().lower() == "false"
        self.heartbeat: Heartbeat | None = None
        self._seen: set[tuple[str, str]] = set()
        self.instant_time: str | None = None

    @contextlib.contextmanager
    def _locked(self, commit: InstantCommit | None = None):
        if not self.occ:
            yield None
            return
        lock = FileSystemLock(self.storage, self.options)
        lock.acquire()
        try:
            yield lock
        finally:
            try:
                lock.release()
            except Exception as exc:  # noqa: BLE001 - after the commit is published, a warning; before, an error
                if commit is None or not commit.is_completed():
                    raise
                warnings.warn(f"{commit.where} is committed, but releasing the table lock failed ({exc}); other "
                              f"writers wait until the lock file {lock.storage.full(lock.relative)} is deleted or "
                              "expires (hoodie.write.lock.filesystem.expire). Do not retry the write.", stacklevel=4)

    def begin(self, action: str, read_partitions: list[str] | None = None) -> tuple[InstantCommit, Timeline]:
        """Roll back failed writes, check the base files the write may read (those of `read_partitions`, default
        all) are as long as their commits wrote them, then create this write's requested instant; returns its
        commit and the timeline the write plans against."""
        with self._locked():
            _, timeline = rollback_failed_writes_on(self.table, self.table.timeline(), self.options)
            if self.drops_metadata_table:
                drop_metadata_table(self.storage, "as hoodie.metadata.enable=false asks (Java Hudi's writer drops it "
                                                  "the same way; Java writers with it enabled rebuild it)")
            elif can_build_files_partition(self.table.properties.values):
                initialize_files_partition(self.storage)
            self.table.view(timeline=timeline).check_base_files(read_partitions)
            self._seen = {(i.time, i.action) for i in timeline.instants
                          if i.is_completed or i.action == COMPACTION}
            self.instant_time = new_instant_time(after=timeline.latest_time())
            self.heartbeat = Heartbeat(self.storage, self.instant_time, self.options).start()
            if self.occ:
                crash_point("occ.holding_lock")
            commit = InstantCommit.begin(self.storage, self.instant_time, action,
                                         metadata_options=MetadataTableOptions.of(self.options))
        crash_point("write.after_requested")
        return commit, timeline

    def complete(self, commit: InstantCommit, metadata: CommitMetadata) -> Instant:
        """Check the instant is still pending and (OCC) for conflicting concurrent commits; publish it."""
        with self._locked(commit) as lock:
            if not commit.is_pending():
                raise WriteConflictError(
                    f"write {commit.instant_time} to table {self.table.name} at {self.storage.base_uri} was rolled "
                    "back by another writer or table service before it could commit (a single writer rolls back "
                    "every pending write; under optimistic concurrency control, one whose heartbeat looked expired: "
                    "raise hoodie.client.heartbeat.interval_in_ms or tolerable.misses); retry the write")
            if self.occ:
                self._check_conflicts(metadata.file_ids())
            crash_point("write.before_complete")
            if lock is not None:   # a lock taken over after it expired is not ours: publish nothing
                lock.check_held()
            return commit.complete(metadata)

    def end(self, commit: InstantCommit | None = None) -> None:
        """Stop the heartbeat; after a published commit a failure here is only a warning."""
        heartbeat, self.heartbeat = self.heartbeat, None
        if heartbeat is None:
            return
        try:
            heartbeat.stop()
        except Exception as exc:  # noqa: BLE001
            if commit is None or not commit.is_completed():
                raise
            warnings.warn(f"{commit.where} is committed, but stopping its heartbeat failed ({exc}); the heartbeat "
                          "file is left behind and expires by itself", stacklevel=3)

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
                theirs = timeline.read_commit(instant).file_ids()
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
        from pyhudi.timeline.compaction_plan import read_compaction_plan
        return {op.file_id for op in read_compaction_plan(self.storage, instant_time).operations}
