"""The active timeline: a snapshot of the timeline folder (every instant in its latest state, sorted), its filters,
the commit metadata of its instants, and what hoodie.properties says about it: the timeline zone and the layout
(timeline/layout.py: `.hoodie/` for table versions 5 and 6, `.hoodie/timeline/` for 8 and 9)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable

from pyhudi.storage import Storage
from pyhudi.timeline.commit_metadata import METADATA_CACHE, CommitMetadata, FileStamp, parse_commit
from pyhudi.timeline.instant import METAFOLDER, STATE_ORDER, WRITE_ACTIONS, Instant
from pyhudi.timeline.layout import COMPLETES_AS, LAYOUT_1, TimelineLayout, layout_for
from pyhudi.timeline.lsm_history import read_history
from pyhudi.timeline import instant_time as clock
from pyhudi.timeline.instant_time import LOCAL_ZONE, TIMELINE_TIMEZONE, ZonedInstantTime, check_timeline_zone

class Timeline:
    """A snapshot of the timeline folder: every instant in its latest state, sorted by (requested) time."""

    def __init__(self, storage: Storage, instants: Iterable[Instant], stamps: dict[str, FileStamp] | None = None,
                 zone: str = LOCAL_ZONE, layout: TimelineLayout = LAYOUT_1):
        self.storage = storage
        self.zone = zone          # hoodie.table.timeline.timezone of the table (LOCAL or UTC)
        self.layout = layout
        # file name -> (size, mtime_ns) from the listing (Timeline.load): lets read_metadata use METADATA_CACHE
        self.stamps = stamps or {}
        latest: dict[tuple[str, str], Instant] = {}
        for instant in instants:
            # A completed compaction appears as `<t>.commit` next to `<t>.compaction.requested/inflight` (and a
            # clustering of layout 2 as `<t>_<c>.replacecommit` next to `<t>.clustering.*`).
            action = COMPLETES_AS.get(instant.action, instant.action) if instant.is_completed else instant.action
            key = (instant.time, action)
            if key not in latest or STATE_ORDER[instant.state] > STATE_ORDER[latest[key].state]:
                latest[key] = instant
        merged: dict[tuple[str, str], Instant] = {}
        for (time_part, action), instant in latest.items():
            if action in COMPLETES_AS and (time_part, COMPLETES_AS[action]) in latest:
                continue
            merged[(time_part, action)] = instant
        self.instants: list[Instant] = sorted(merged.values())
        self._metadata: dict[Instant, CommitMetadata] = {}
        self._completions: dict[str, str] | None = None
        self._archived: dict[str, str] | None = None
        self._times: frozenset[str] | None = None

    @classmethod
    def load(cls, storage: Storage) -> "Timeline":
        settings = TimelineSettings()
        listed = storage.list_files(METAFOLDER)
        for info in listed:
            if info.base_name == PROPERTIES_FILE:
                settings = _timeline_settings(storage, (info.size, info.mtime_ns))
        layout = settings.layout
        instants = []
        stamps = {}
        for info in (listed if layout.folder == METAFOLDER else storage.list_files(layout.folder)):
            instant = layout.parse(info.base_name)
            if instant is not None:
                instants.append(instant)
                stamps[info.base_name] = (info.size, info.mtime_ns)
        return cls(storage, instants, stamps, settings.zone, layout)

    def path_of(self, instant: Instant) -> str:
        """The instant's file, relative to the table (a completed instant of layout 2 as this timeline found it,
        with its completion time)."""
        if instant.is_completed and self.layout.version == 2 and instant.completion_time is None:
            instant = next((i for i in self.instants if i == instant), instant)
        return self.layout.path(instant)

    def completion_time(self, instant_time: str) -> str | None:
        """When the completed write requested at `instant_time` completed (layout 2; a write older than the active
        timeline as the LSM history recorded it); the requested time for a legacy instant or layout 1, where
        completion times are not kept; None when it did not complete (or is archived and not recorded). Cleans and
        commits are archived apart, so an archived write can be younger than the oldest active instant."""
        if self._completions is None:
            self._completions = {i.time: i.completion_time or i.time for i in self.completed_writes()}
        found = self._completions.get(instant_time)
        if found is None and self.layout.version == 2 and not self.has_time(instant_time):
            return self._archived_completions().get(instant_time)
        return found

    def has_time(self, instant_time: str) -> bool:
        """Whether some instant on this active timeline (any action, any state) was requested at `instant_time`."""
        if self._times is None:
            self._times = frozenset(i.time for i in self.instants)
        return instant_time in self._times

    def _archived_completions(self) -> dict[str, str]:
        """Completion times of the instants archived into the LSM history, read once (its cheap columns only)."""
        if self._archived is None:
            history = read_history(self.storage, self.layout.history_folder, with_payloads=False)
            self._archived = {i.time: i.completion_time for i in history if i.completion_time}
        return self._archived

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
        """Commit metadata JSON of a completed write instant (empty dict for empty files): read_commit's, as Hudi's
        JSON for the callers that hand it on as such."""
        return self.read_commit(instant).to_json()

    def read_commit(self, instant: Instant) -> CommitMetadata:
        """Commit metadata of a completed write instant (`.empty` for empty files), parsed once per process
        (METADATA_CACHE). A file that is not a JSON object of Hudi's shape raises CorruptFileError."""
        cached = self._metadata.get(instant)
        if cached is not None:
            return cached
        relative = self.path_of(instant)
        name = relative.rsplit("/", 1)[-1]
        stamp = self.stamps.get(name)
        key = (self.storage.base_uri, name)
        if stamp is not None:
            cached = METADATA_CACHE.get(key, stamp)
        if cached is None:
            METADATA_CACHE.reads += 1
            cached = parse_commit(self.storage.read_bytes(relative), f"{self.storage.base_uri}/{relative}")
            if stamp is not None and instant.is_completed:
                METADATA_CACHE.put(key, stamp, cached)
        self._metadata[instant] = cached
        return cached


PROPERTIES_FILE = "hoodie.properties"


@dataclass(frozen=True)
class TimelineSettings:
    zone: str = LOCAL_ZONE
    layout: TimelineLayout = LAYOUT_1


# (table, hoodie.properties size and mtime) -> its timeline settings
_SETTINGS: dict[tuple[str, FileStamp], TimelineSettings] = {}
_LAYOUT_KEYS = ("hoodie.timeline.layout.version", "hoodie.timeline.path", "hoodie.timeline.history.path")


def _timeline_settings(storage: Storage, stamp: FileStamp) -> TimelineSettings:
    """The timeline zone and layout from hoodie.properties, read again only when the file changed."""
    key = (storage.base_uri, stamp)
    settings = _SETTINGS.get(key)
    if settings is None:
        where = f"{storage.base_uri}/{METAFOLDER}/{PROPERTIES_FILE}"
        values: dict[str, str] = {}
        try:
            text = storage.read_bytes(f"{METAFOLDER}/{PROPERTIES_FILE}").decode("utf-8", "replace")
        except FileNotFoundError:
            text = ""
        for line in text.splitlines():
            name, sep, rest = line.partition("=")
            if sep:
                values[name.strip()] = rest.strip()
        layout = layout_for(*(values.get(k) for k in _LAYOUT_KEYS))
        settings = _SETTINGS[key] = TimelineSettings(check_timeline_zone(values.get(TIMELINE_TIMEZONE), where),
                                                      layout)
    return settings


def current_settings(storage: Storage) -> TimelineSettings:
    """The timeline zone and layout of the table at `storage` (hoodie.properties as it is now: one stat, parsed
    when it changed)."""
    info = storage.fs.get_file_info(storage.full(f"{METAFOLDER}/{PROPERTIES_FILE}"))
    if info.size is None:
        return TimelineSettings()
    return _timeline_settings(storage, (info.size, info.mtime_ns))


def timeline_layout(storage: Storage) -> TimelineLayout:
    """The layout of the table at `storage` (current_settings)."""
    return current_settings(storage).layout


def instant_file(storage: Storage, instant: Instant) -> str:
    """The file of `instant`, relative to the table, in the table's layout. Layout 2 names a completed instant by
    its completion time too: when `instant` does not carry it, the timeline folder is listed for it (an instant
    not found keeps the legacy name `<time>.<action>`, which is also what an upgraded instant is called)."""
    layout = timeline_layout(storage)
    if layout.version == 1 or not instant.is_completed or instant.completion_time:
        return layout.path(instant)
    action = COMPLETES_AS.get(instant.action, instant.action)
    for info in storage.list_files(layout.folder):
        found = layout.parse(info.base_name)
        if found is not None and found.is_completed and found.time == instant.time and found.action == action:
            return f"{layout.folder}/{info.base_name}"
    return layout.path(instant)


def has_archived_instants(storage: Storage, archive_folder: str = "archived") -> bool:
    """True once the archiver moved instants out of the active timeline (`.commits_.archive.*` files)."""
    return any(info.base_name.startswith(".commits_.archive.")
               for info in storage.list_files(f"{METAFOLDER}/{archive_folder}"))
