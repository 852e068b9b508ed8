"""The table's data files as this process last listed them, kept in step with the timeline (Hudi's timeline server
keeps its file-system view the same way: IncrementalTimelineSyncFileSystemView).

The first view of a table lists every partition. A later view compares the timeline it is built from with the
one the listing matches and lists again only the partitions the difference touched:

* a completed commit, delta commit, replace commit or compaction: the partitions of its write stats and replaced
  file groups (its commit metadata, read once per process: timeline.METADATA_CACHE);
* a completed clean, rollback or restore: the partitions its Avro metadata names (the files it deleted);
* a completed write that disappeared: rolled back (a rollback/restore instant appeared, handled above, and its own
  partitions, known from when it was added) or archived (older than every remaining write: its files stay).
  When no completed write of the old timeline remains, the table at this path was replaced: all is listed again.

Files change only through instants, so every other partition is still as listed. Whatever the difference does not
explain lists the whole table again: the listing was never synced, the timeline has no completed instant, a
completed write disappeared whose partitions are unknown, a pending write disappeared without a rollback
(an aborted writer), a clean, rollback or restore is in progress (it deletes files as it goes), or a metadata file
cannot be read (the readers then raise the proper error). Files written by a pending instant are seen once it
completes; readers never read them before (base files of pending instants are invisible, and log blocks of
pending instants are skipped).
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from typing import Any, Iterator, cast

import pyarrow.fs as pafs

from pyhudi.file_group.naming import partition_of
from pyhudi.storage import Storage
from pyhudi.timeline import (CLEAN, COMPACTION, CommitMetadata, COMPLETES_AS, METAFOLDER, RESTORE, ROLLBACK,
                             WRITE_ACTIONS, Instant, Timeline)
from pyhudi.timeline.clean_metadata import CleanMetadata
from pyhudi.timeline.restore import RestoreMetadata
from pyhudi.timeline.rollback import RollbackMetadata

# Services that delete files while pending: a listing taken meanwhile may hold files about to vanish.
_DELETING_SERVICES = (CLEAN, ROLLBACK, RESTORE)


class _Unexplained(Exception):
    """The timeline changed in a way the listing cannot follow partition by partition."""


class TableListing:
    """Data files of one table: partition -> {relative path: (file name, size)}."""

    def __init__(self, storage: Storage):
        self.storage = storage
        self._files: dict[str, dict[str, tuple[str, int]]] = {}
        self._instants: frozenset[Instant] | None = None        # timeline fingerprint the listing matches
        self._partitions_of: dict[tuple[str, str], frozenset[str]] = {}   # completed write -> partitions it touched
        self._lock = threading.Lock()
        self.full_listings = 0          # counters for tests and profiles
        self.partition_listings = 0

    # --- reading ------------------------------------------------------------------------------------------
    def files(self, timeline: Timeline) -> list[tuple[str, str, int]]:
        """(relative path, file name, size) of every data file, in step with `timeline`."""
        with self._lock:
            self._sync(timeline)
            return [(path, name, size) for entries in self._files.values()
                    for path, (name, size) in entries.items()]

    def invalidate(self) -> None:
        """Forget everything: the next view lists the whole table (a file was found missing or changed)."""
        with self._lock:
            self._instants = None

    # --- syncing ------------------------------------------------------------------------------------------
    def _sync(self, timeline: Timeline) -> None:
        current = timeline.fingerprint
        if current == self._instants:
            return
        try:
            touched = self._touched(timeline)
        except _Unexplained:
            touched = None
        except Exception:  # noqa: BLE001 - an unreadable instant: list everything; readers raise the real error
            touched = None
        if touched is None:
            self._list_all()
        else:
            for partition in sorted(touched):
                self._list_partition(partition)
        self._instants = current

    def _touched(self, timeline: Timeline) -> set[str]:
        old = self._instants
        if old is None or not timeline.completed():
            raise _Unexplained()
        new = timeline.fingerprint
        if any(not i.is_completed and i.action in _DELETING_SERVICES for i in new):
            raise _Unexplained()
        added, removed = new - old, old - new
        old_writes = {i for i in old if i.is_completed and i.action in WRITE_ACTIONS}
        if old_writes and not old_writes & new:
            raise _Unexplained()                           # no write in common: another table at this path
        present = {(i.time, _kind(i)) for i in new}
        touched: set[str] = set()
        rollback_seen = any(i.action in (ROLLBACK, RESTORE) for i in added)
        earliest_write = min((i.time for i in new if i.is_completed and i.action in WRITE_ACTIONS), default=None)
        for instant in removed:
            if (instant.time, _kind(instant)) in present:
                continue                                   # the same instant in a later state
            if instant.action in WRITE_ACTIONS + (COMPACTION,):
                if instant.is_completed:
                    known = self._partitions_of.pop((instant.time, instant.action), None)
                    archived = not rollback_seen and earliest_write is not None and instant.time < earliest_write
                    if known is not None:
                        touched |= known
                    elif not archived:
                        raise _Unexplained()
                elif not rollback_seen and instant.action != COMPACTION:
                    raise _Unexplained()                   # a pending write vanished without a rollback
        for instant in added:
            if not instant.is_completed:
                continue
            if instant.action in WRITE_ACTIONS:
                partitions = frozenset(_commit_partitions(timeline.read_commit(instant)))
                self._partitions_of[(instant.time, instant.action)] = partitions
                touched |= partitions
            elif instant.action in _DELETING_SERVICES:
                touched |= _service_partitions(self.storage, timeline.path_of(instant), instant)
        return touched

    def _list_all(self) -> None:
        self.full_listings += 1
        files: dict[str, dict[str, tuple[str, int]]] = {}
        base = self.storage.base_path
        infos = self.storage.fs.get_file_info(pafs.FileSelector(base, allow_not_found=True))
        for info in infos:
            if info.type == pafs.FileType.Directory and info.base_name != METAFOLDER:
                infos_below = self.storage.fs.get_file_info(
                    pafs.FileSelector(info.path, allow_not_found=True, recursive=True))
                self._add(files, [i for i in infos_below if i.type == pafs.FileType.File], base)
        self._add(files, [i for i in infos if i.type == pafs.FileType.File], base)
        self._files = files

    def _list_partition(self, partition: str) -> None:
        self.partition_listings += 1
        files: dict[str, dict[str, tuple[str, int]]] = {}
        self._add(files, self.storage.list_files(partition), self.storage.base_path)
        self._files.pop(partition, None)
        if files.get(partition):
            self._files[partition] = files[partition]

    @staticmethod
    def _add(files: dict[str, dict[str, tuple[str, int]]], infos: list[pafs.FileInfo], base: str) -> None:
        for info in infos:
            relative = info.path[len(base) + 1:]
            files.setdefault(partition_of(relative), {})[relative] = (info.base_name, info.size)


def _kind(instant: Instant) -> str:
    """An instant's identity across states (a compaction completes as `<t>.commit`, a clustering of timeline
    layout 2 as a replacecommit)."""
    return COMPLETES_AS.get(instant.action, instant.action)


def _commit_partitions(metadata: CommitMetadata) -> set[str]:
    out = set(metadata.partitions)
    out.update(metadata.replaced_file_ids or {})
    return {p or "" for p in out}


def _service_partitions(storage: Storage, path: str, instant: Instant) -> set[str]:
    """Partitions a completed clean, rollback or restore deleted files in, from its Avro metadata (the container
    file carries its own schema)."""
    data = storage.read_bytes(path)
    if not data:
        return set()
    record = next(avro_records(data))
    if instant.action == RESTORE:
        out: set[str] = set()
        for rollbacks in RestoreMetadata.from_avro(record).rollbacks.values():
            for meta in rollbacks or ():
                out.update(meta.partition_metadata if meta is not None else ())
        return out
    if instant.action == CLEAN:
        return set(CleanMetadata.from_avro(record).partition_metadata)
    return set(RollbackMetadata.from_avro(record).partition_metadata)


def avro_records(data: bytes) -> Iterator[dict[str, Any]]:
    """The records of an Avro container file (it carries its own schema). Hudi's timeline files (clean, rollback,
    restore metadata, compaction and clustering plans) have a record schema: each record is a dict."""
    import fastavro

    return cast("Iterator[dict[str, Any]]", iter(fastavro.reader(io.BytesIO(data))))


# --- one listing per table per process --------------------------------------------------------------------------
_LIMIT = 64
_LISTINGS: OrderedDict[str, TableListing] = OrderedDict()
_LISTINGS_LOCK = threading.Lock()


def table_listing(storage: Storage) -> TableListing:
    """The process's listing of the table at `storage` (the most recently used tables are kept)."""
    with _LISTINGS_LOCK:
        listing = _LISTINGS.get(storage.base_uri)
        if listing is None:
            listing = _LISTINGS[storage.base_uri] = TableListing(storage)
            while len(_LISTINGS) > _LIMIT:
                _LISTINGS.popitem(last=False)
        _LISTINGS.move_to_end(storage.base_uri)
        return listing


def clear_listings() -> None:
    """Forget every table's listing (tests, or after changing files outside pyhudi)."""
    with _LISTINGS_LOCK:
        _LISTINGS.clear()
