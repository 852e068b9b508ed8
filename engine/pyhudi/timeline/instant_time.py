"""Instant times `yyyyMMddHHmmssSSS`: new ones (strictly increasing per process, in the table's timeline zone),
parsing and formatting, and the time arguments Hudi accepts (as.of.instant, begin/end instant times)."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone

from pyhudi.errors import ConfigError, TimelineError

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

    zone: str   # hoodie.table.timeline.timezone of the timeline (LOCAL or UTC), set by __new__

    def __new__(cls, text: str, zone: str) -> ZonedInstantTime:
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


def instant_time_of_clock(epoch_ns: int, zone: str) -> str:
    """A wall-clock moment (e.g. a file's modification time) as an instant time in a timeline zone."""
    moment = datetime.fromtimestamp(epoch_ns / 1e9, tz=timezone.utc)
    return format_instant_time(moment if zone == UTC_ZONE else moment.astimezone())


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
