"""The Hudi timeline (table version 6, timeline layout 1): instants as files in `.hoodie/`.

An instant is (time, action, state). Its file name is `<time>.<action>[.<state suffix>]`, with one historical
quirk: `commit` and `deltacommit` inflight files for `commit` are named `<time>.inflight`. A write moves its
instant requested -> inflight -> completed; the completed file is published last and atomically, which is what
makes a commit visible to readers.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum
from functools import total_ordering
from typing import Iterable

from pyhudi.errors import ConfigError, CorruptFileError, TimelineError
from pyhudi.storage import Storage

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

ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, CLEAN, ROLLBACK, SAVEPOINT, COMPACTION, RESTORE, INDEXING,
           SCHEMA_COMMIT, LOG_COMPACTION)
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

    def _order(self):
        return (self.time, _STATE_ORDER[self.state], self.action)

    def __lt__(self, other: "Instant") -> bool:
        return self._order() < other._order()

    def __str__(self) -> str:
        return f"[{self.time}__{self.action}__{self.state.name}]"


_STATE_ORDER = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


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


# --- instant times ------------------------------------------------------------------------------------------
# hoodie.table.timeline.timezone (HoodieTableConfig.TIMELINE_TIMEZONE): the zone instant times are written in.
# Hudi's default is LOCAL (the writer's system zone; Java Hudi tables without the key are in local time); UTC is
# the other choice. The key lives in hoodie.properties and is read with the timeline (Timeline.zone).
TIMELINE_TIMEZONE = "hoodie.table.timeline.timezone"
LOCAL_ZONE = "LOCAL"
UTC_ZONE = "UTC"
TIMELINE_ZONES = (LOCAL_ZONE, UTC_ZONE)

_clock_lock = threading.Lock()
_last_instant = ["0"]


class ZonedInstantTime(str):
    """An instant time that knows the timeline zone it came from (Timeline.latest_time returns one), so
    new_instant_time(after=timeline.latest_time()) makes the next instant in the table's zone."""

    def __new__(cls, text: str, zone: str):
        value = super().__new__(cls, text)
        value.zone = zone
        return value


def check_timeline_zone(value: str | None, where: str = "") -> str:
    """LOCAL or UTC (any case); None/empty: Hudi's default LOCAL. Anything else raises ConfigError."""
    zone = str(value or LOCAL_ZONE).strip().upper()
    if zone not in TIMELINE_ZONES:
        raise ConfigError(f"{TIMELINE_TIMEZONE}={value!r}{' in ' + where if where else ''} is not LOCAL or UTC; "
                            "set it to LOCAL (Hudi's default) or UTC")
    return zone


def now_in_zone(zone: str) -> datetime:
    """The wall clock of a timeline zone, as an aware datetime (LOCAL: this process's system zone, as the JVM's)."""
    return datetime.now(timezone.utc) if zone == UTC_ZONE else datetime.now().astimezone()


def format_instant_time(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def new_instant_time(after: str | None = None, zone: str | None = None) -> str:
    """A fresh instant time `yyyyMMddHHmmssSSS` in the timeline zone (`zone`, else the zone `after` carries, else
    Hudi's default LOCAL), strictly greater than any this process produced (compared as moments: the floor is kept
    in UTC, so tables in other zones do not push each other's clocks) and than `after` (the latest instant on the
    timeline), even within one millisecond or under clock skew."""
    zone = check_timeline_zone(zone or getattr(after, "zone", None))
    with _clock_lock:
        now = now_in_zone(zone)
        offset = now.utcoffset() or timedelta(0)
        floor = max(_shift(_last_instant[0], offset), after or "0")
        candidate = format_instant_time(now)
        if candidate <= floor:
            if floor[:17].isdigit() and len(floor) >= 17:
                candidate = format_instant_time(parse_instant_time(floor) + timedelta(milliseconds=1))
            else:
                time.sleep(0.001)
                candidate = format_instant_time(now_in_zone(zone))
        _last_instant[0] = _shift(candidate, -offset)
        return candidate


def _shift(instant: str, offset: timedelta) -> str:
    """An instant time moved by `offset` (UTC <-> a zone's wall clock); anything not a full instant unchanged."""
    if not offset or len(instant) < 17 or not instant[:17].isdigit():
        return instant
    return format_instant_time(datetime.strptime(instant[:17], "%Y%m%d%H%M%S%f") + offset)


def parse_instant_time(text: str, zone: str = UTC_ZONE) -> datetime:
    """The moment an instant time names, read in its timeline zone (default UTC: only differences matter)."""
    wall = datetime.strptime(text[:17].ljust(17, "0"), "%Y%m%d%H%M%S%f")
    return wall.replace(tzinfo=timezone.utc) if zone == UTC_ZONE else wall.astimezone()


def instant_time_before(hours: float, zone: str, now: datetime | None = None) -> str:
    """The instant time `hours` before now on a timeline in `zone` (KEEP_LATEST_BY_HOURS' earliest time to keep:
    Hudi subtracts the hours from now and formats the result in the table's timeline zone)."""
    moment = (now or datetime.now(timezone.utc)) - timedelta(hours=hours)
    return format_instant_time(moment.astimezone(timezone.utc) if zone == UTC_ZONE else moment.astimezone())


def normalize_instant_argument(value: str) -> str:
    """Hudi accepts `yyyyMMddHHmmss[SSS]`, `yyyy-MM-dd HH:mm:ss[.SSS]` and `yyyy-MM-dd` for as.of.instant etc."""
    text = str(value).strip()
    if text.isdigit():
        if len(text) in (14, 17):
            return text
        if len(text) < 14:
            return text.ljust(17, "0")
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S",
                "%Y-%m-%d"):
        try:
            return format_instant_time(datetime.strptime(text, fmt))
        except ValueError:
            continue
    raise TimelineError(f"cannot read instant time {value!r}: use yyyyMMddHHmmssSSS, "
                        "'yyyy-MM-dd HH:mm:ss.SSS' or 'yyyy-MM-dd'")


# --- the timeline -----------------------------------------------------------------------------------------
class _MetadataCache:
    """Parsed commit metadata shared by every Timeline of this process, keyed by (table, instant file) and checked
    against the file's (size, mtime) from the listing that found it: completed instant files are written once,
    so a later timeline of the same table reads each commit's JSON only once (a file rewritten in place has
    another stamp and is read again). Bounded LRU."""

    def __init__(self, limit: int = 8192):
        self.limit = limit
        self._entries: OrderedDict[tuple[str, str], tuple[tuple, dict]] = OrderedDict()
        self._lock = threading.Lock()
        self.reads = 0   # metadata files read from storage (for tests)

    def get(self, key: tuple[str, str], stamp: tuple) -> dict | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit[0] != stamp:
                return None
            self._entries.move_to_end(key)
            return hit[1]

    def put(self, key: tuple[str, str], stamp: tuple, metadata: dict) -> None:
        with self._lock:
            self._entries[key] = (stamp, metadata)
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


METADATA_CACHE = _MetadataCache()


class Timeline:
    """A snapshot of `.hoodie/`: every instant in its latest state, sorted by time."""

    def __init__(self, storage: Storage, instants: Iterable[Instant], stamps: dict[str, tuple] | None = None,
                 zone: str = LOCAL_ZONE):
        self.storage = storage
        self.zone = zone          # hoodie.table.timeline.timezone of the table (LOCAL or UTC)
        # file name -> (size, mtime_ns) from the listing (Timeline.load): lets read_metadata use METADATA_CACHE
        self.stamps = stamps or {}
        latest: dict[tuple[str, str], Instant] = {}
        for instant in instants:
            # A completed compaction appears as `<t>.commit` next to `<t>.compaction.requested/inflight`.
            key = (instant.time, COMMIT if instant.action == COMPACTION and instant.is_completed else instant.action)
            if key not in latest or _STATE_ORDER[instant.state] > _STATE_ORDER[latest[key].state]:
                latest[key] = instant
        merged: dict[str, Instant] = {}
        for (time_part, action), instant in latest.items():
            if action == COMPACTION and (time_part, COMMIT) in latest:
                continue
            merged[(time_part, action)] = instant
        self.instants: list[Instant] = sorted(merged.values())
        self._metadata: dict[Instant, dict] = {}

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
    def fingerprint(self) -> frozenset:
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
        return new_instant_time(after=self.latest_time(), zone=self.zone)

    def now(self) -> datetime:
        """The wall clock of this table's timeline zone."""
        return now_in_zone(self.zone)

    def is_completed_write(self, instant_time: str) -> bool:
        return any(i.time == instant_time for i in self.completed_writes())

    def find(self, instant_time: str) -> Instant | None:
        for instant in self.instants:
            if instant.time == instant_time:
                return instant
        return None

    # --- metadata -----------------------------------------------------------------------------------------
    def read_metadata(self, instant: Instant) -> dict:
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
_ZONES: dict[tuple, str] = {}     # (table, hoodie.properties size and mtime) -> timeline zone


def _table_zone(storage: Storage, stamp: tuple) -> str:
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


# Top-level fields of HoodieCommitMetadata / HoodieReplaceCommitMetadata JSON and the JSON type each must have.
_METADATA_SHAPE = {"partitionToWriteStats": dict, "extraMetadata": dict, "partitionToReplaceFileIds": dict}


def parse_commit_metadata(data: bytes, where: str) -> dict:
    """Hudi's commit JSON, checked: UTF-8, a JSON object, and the fields readers use of the right type."""
    fix = "restore it from a backup, or roll back that instant (pyhudi.rollback_to_instant / CALL rollback)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(f"timeline file {where} is not text (undecodable byte at offset {exc.start}); "
                               f"{fix}") from None
    if not text.strip():
        return {}
    try:
        metadata = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptFileError(f"timeline file {where} is not valid JSON ({exc}); it may be truncated; "
                               f"{fix}") from None
    if not isinstance(metadata, dict):
        raise CorruptFileError(f"timeline file {where} holds a JSON {type(metadata).__name__}, not Hudi's commit "
                               f"metadata object; {fix}")
    for key, kind in _METADATA_SHAPE.items():
        value = metadata.get(key)
        if value is not None and not isinstance(value, kind):
            raise CorruptFileError(f"timeline file {where}: {key} is a JSON {type(value).__name__}, not an "
                                   f"object; {fix}")
    for partition, stats in (metadata.get("partitionToWriteStats") or {}).items():
        if not isinstance(stats, list) or not all(isinstance(s, dict) and "fileId" in s for s in stats):
            raise CorruptFileError(f"timeline file {where}: the write stats of partition {partition!r} are not a "
                                   f"list of file stats; {fix}")
    return metadata


def has_archived_instants(storage: Storage, archive_folder: str = "archived") -> bool:
    """True once the archiver moved instants out of the active timeline (`.commits_.archive.*` files)."""
    return any(info.base_name.startswith(".commits_.archive.")
               for info in storage.list_files(f"{METAFOLDER}/{archive_folder}"))


# --- transitions (the writer's side) ----------------------------------------------------------------------
def _publish(storage: Storage, instant: Instant, content: bytes) -> None:
    # An inflight file only announces a state: recovery reads the requested plan, the markers and completed
    # files, so only those are made durable before their name appears.
    durable = instant.state != State.INFLIGHT
    if not storage.create_if_absent(f"{METAFOLDER}/{instant.file_name}", content, durable=durable):
        raise TimelineError(f"instant {instant} already exists in {storage.base_uri}/{METAFOLDER}; "
                            "another writer used the same instant time")


def create_requested(storage: Storage, instant_time: str, action: str, content: bytes = b"") -> Instant:
    instant = Instant(instant_time, action, State.REQUESTED)
    _publish(storage, instant, content)
    return instant


def transition_to_inflight(storage: Storage, requested: Instant, content: bytes = b"") -> Instant:
    instant = requested.with_state(State.INFLIGHT)
    _publish(storage, instant, content)
    return instant


def transition_to_completed(storage: Storage, inflight: Instant, metadata: dict) -> Instant:
    instant = inflight.with_state(State.COMPLETED)
    _publish(storage, instant, commit_metadata_bytes(metadata))
    return instant


def commit_metadata_bytes(metadata: dict) -> bytes:
    return json.dumps(metadata, indent=2).encode("utf-8")
