"""The active timeline: a snapshot of `.hoodie/` (every instant in its latest state, sorted), its filters, the
commit metadata of its instants and the table's timeline zone (hoodie.properties)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from pyhudi.storage import Storage
from pyhudi.timeline.commit_metadata import METADATA_CACHE, FileStamp, parse_commit_metadata
from pyhudi.timeline.instant import (COMMIT, COMPACTION, METAFOLDER, STATE_ORDER, WRITE_ACTIONS, Instant,
                                     parse_instant_file_name)
from pyhudi.timeline import instant_time as clock
from pyhudi.timeline.instant_time import LOCAL_ZONE, TIMELINE_TIMEZONE, ZonedInstantTime, check_timeline_zone

class Timeline:
    """A snapshot of `.hoodie/`: every instant in its latest state, sorted by time."""

    def __init__(self, storage: Storage, instants: Iterable[Instant], stamps: dict[str, FileStamp] | None = None,
                 zone: str = LOCAL_ZONE):
        self.storage = storage
        self.zone = zone          # hoodie.table.timeline.timezone of the table (LOCAL or UTC)
        # file name -> (size, mtime_ns) from the listing (Timeline.load): lets read_metadata use METADATA_CACHE
        self.stamps = stamps or {}
        latest: dict[tuple[str, str], Instant] = {}
        for instant in instants:
            # A completed compaction appears as `<t>.commit` next to `<t>.compaction.requested/inflight`.
            key = (instant.time, COMMIT if instant.action == COMPACTION and instant.is_completed else instant.action)
            if key not in latest or STATE_ORDER[instant.state] > STATE_ORDER[latest[key].state]:
                latest[key] = instant
        merged: dict[tuple[str, str], Instant] = {}
        for (time_part, action), instant in latest.items():
            if action == COMPACTION and (time_part, COMMIT) in latest:
                continue
            merged[(time_part, action)] = instant
        self.instants: list[Instant] = sorted(merged.values())
        self._metadata: dict[Instant, dict[str, Any]] = {}

    @classmethod
    def load(cls, storage: Storage) -> "Timeline":
        instants = []
        stamps = {}
        zone = LOCAL_ZONE
        for info in storage.list_files(METAFOLDER):
            instant = parse_instant_file_name(info.base_name)
            if instant is not None:
                instants.append(instant)
                stamps[info.base_name] = (info.size, info.mtime_ns)
            elif info.base_name == PROPERTIES_FILE:
                zone = _table_zone(storage, (info.size, info.mtime_ns))
        return cls(storage, instants, stamps, zone)

    @property
    def fingerprint(self) -> frozenset[Instant]:
        """What this snapshot holds: every instant in its latest state (two equal fingerprints: same timeline)."""
        return frozenset(self.instants)

    # --- filters ------------------------------------------------------------------------------------------
    def completed(self, actions: Iterable[str] | None = None) -> list[Instant]:
        wanted = set(actions) if actions else None
        return [i for i in self.instants if i.is_completed and (wanted is None or i.action in wanted)]

    def completed_writes(self) -> list[Instant]:
        """Completed commits, delta commits and replace commits: the instants that define table data."""
        return self.completed(WRITE_ACTIONS)

    def pending(self, actions: Iterable[str] | None = None) -> list[Instant]:
        wanted = set(actions) if actions else None
        return [i for i in self.instants if not i.is_completed and (wanted is None or i.action in wanted)]

    def latest_completed_write(self) -> Instant | None:
        writes = self.completed_writes()
        return writes[-1] if writes else None

    def latest_time(self) -> str:
        """The newest instant's time, carrying the timeline zone (see ZonedInstantTime); on an empty timeline an
        empty string (false, like no time) that still carries the zone for the table's first instant."""
        return ZonedInstantTime(self.instants[-1].time if self.instants else "", self.zone)

    def new_instant_time(self) -> str:
        """The next instant time of this table: in its timeline zone, after every instant on it."""
        return clock.new_instant_time(after=self.latest_time(), zone=self.zone)

    def now(self) -> datetime:
        """The wall clock of this table's timeline zone."""
        return clock.now_in_zone(self.zone)   # through the module, so a test can move its clock

    def is_completed_write(self, instant_time: str) -> bool:
        return any(i.time == instant_time for i in self.completed_writes())

    def find(self, instant_time: str) -> Instant | None:
        for instant in self.instants:
            if instant.time == instant_time:
                return instant
        return None

    # --- metadata -----------------------------------------------------------------------------------------
    def read_metadata(self, instant: Instant) -> dict[str, Any]:
        """Commit metadata JSON of a completed write instant (empty dict for empty files), read once per
        timeline snapshot. A file that is not a JSON object of Hudi's shape raises CorruptFileError."""
        cached = self._metadata.get(instant)
        if cached is not None:
            return cached
        name = instant.file_name
        stamp = self.stamps.get(name)
        key = (self.storage.base_uri, name)
        if stamp is not None:
            cached = METADATA_CACHE.get(key, stamp)
        if cached is None:
            METADATA_CACHE.reads += 1
            cached = parse_commit_metadata(self.storage.read_bytes(f"{METAFOLDER}/{name}"),
                                           f"{self.storage.base_uri}/{METAFOLDER}/{name}")
            if stamp is not None and instant.is_completed:
                METADATA_CACHE.put(key, stamp, cached)
        self._metadata[instant] = cached
        return cached


PROPERTIES_FILE = "hoodie.properties"
_ZONES: dict[tuple[str, FileStamp], str] = {}     # (table, hoodie.properties size and mtime) -> timeline zone


def _table_zone(storage: Storage, stamp: FileStamp) -> str:
    """hoodie.table.timeline.timezone from hoodie.properties, read again only when the file changed."""
    key = (storage.base_uri, stamp)
    zone = _ZONES.get(key)
    if zone is None:
        where = f"{storage.base_uri}/{METAFOLDER}/{PROPERTIES_FILE}"
        value = None
        try:
            text = storage.read_bytes(f"{METAFOLDER}/{PROPERTIES_FILE}").decode("utf-8", "replace")
        except FileNotFoundError:
            text = ""
        for line in text.splitlines():
            name, sep, rest = line.partition("=")
            if sep and name.strip() == TIMELINE_TIMEZONE:
                value = rest.strip()
        zone = _ZONES[key] = check_timeline_zone(value, where)
    return zone


def has_archived_instants(storage: Storage, archive_folder: str = "archived") -> bool:
    """True once the archiver moved instants out of the active timeline (`.commits_.archive.*` files)."""
    return any(info.base_name.startswith(".commits_.archive.")
               for info in storage.list_files(f"{METAFOLDER}/{archive_folder}"))
