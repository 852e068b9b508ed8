"""Joda-Time zone ids as Hudi resolves them (legacy ids, UTC aliases, GMT+h custom ids, fixed offsets) and the
errors of the Joda helpers."""

from __future__ import annotations

import re
import zoneinfo


MS_PER_DAY = 86_400_000

# Joda's DateTimeZone conversion of old three-letter Java ids (DateTimeZone.getConvertedId).
_JODA_LEGACY_IDS = {
    "GMT": "UTC", "WET": "WET", "CET": "CET", "MET": "CET", "ECT": "CET", "EET": "EET",
    "MIT": "Pacific/Apia", "HST": "Pacific/Honolulu", "AST": "America/Anchorage",
    "PST": "America/Los_Angeles", "MST": "America/Denver", "PNT": "America/Phoenix",
    "CST": "America/Chicago", "EST": "America/New_York", "IET": "America/Indiana/Indianapolis",
    "PRT": "America/Puerto_Rico", "CNT": "America/St_Johns", "AGT": "America/Argentina/Buenos_Aires",
    "BET": "America/Sao_Paulo", "ART": "Africa/Cairo", "CAT": "Africa/Harare", "EAT": "Africa/Addis_Ababa",
    "NET": "Asia/Yerevan", "PLT": "Asia/Karachi", "IST": "Asia/Kolkata", "BST": "Asia/Dhaka",
    "VST": "Asia/Ho_Chi_Minh", "CTT": "Asia/Shanghai", "JST": "Asia/Tokyo", "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney", "SST": "Pacific/Guadalcanal", "NST": "Pacific/Auckland",
}
_UTC_IDS = {"UTC", "GMT", "UT", "Z", "ETC/UTC", "ETC/GMT", "UCT", "ETC/UCT", "UNIVERSAL", "ZULU", "GMT0"}
# java.util.TimeZone custom ids: GMT+h, GMT+hh, GMT+h:mm, GMT+hh:mm, GMT+hhmm
_CUSTOM_ID = re.compile(r"^GMT([+-])(\d{1,2})(?::(\d{2})|(\d{2}))?$")
_FIXED = re.compile(r"^([+-])(\d{2}):(\d{2})$")


class PatternError(ValueError):
    """A Joda pattern pyhudi cannot handle (the caller turns it into a ConfigError)."""


class ZoneError(ValueError):
    """A zone id neither Java nor pyhudi recognises (the caller turns it into a ConfigError)."""


class ParseFailure(ValueError):
    """Some values match none of the input formats, or name an impossible date."""

    def __init__(self, message: str, value: str | None = None):
        super().__init__(message)
        self.value = value


def fixed_id(offset_minutes: int) -> str:
    if offset_minutes == 0:
        return "UTC"
    sign = "+" if offset_minutes > 0 else "-"
    hh, mm = divmod(abs(offset_minutes), 60)
    return f"{sign}{hh:02d}:{mm:02d}"


def resolve_zone(zone_id: str | None) -> str | None:
    """Arrow zone for a Java zone id: ``None`` for blank, ``"UTC"``, ``"+08:00"`` or an IANA name.

    Raises :class:`ZoneError` for an id Java would silently turn into GMT (most likely a typo).
    """
    if zone_id is None or not zone_id.strip():
        return None
    zid = zone_id.strip()
    if zid.upper() in _UTC_IDS:
        return "UTC"
    m = _CUSTOM_ID.match(zid)
    if m:
        hours = int(m.group(2))
        minutes = int(m.group(3) or m.group(4) or 0)
        if hours > 23 or minutes > 59:
            raise ZoneError(zone_id)
        total = hours * 60 + minutes
        return fixed_id(-total if m.group(1) == "-" else total)
    m = _FIXED.match(zid)
    if m:
        total = int(m.group(2)) * 60 + int(m.group(3))
        return fixed_id(-total if m.group(1) == "-" else total)
    if zid in _JODA_LEGACY_IDS:
        zid = _JODA_LEGACY_IDS[zid]
        if zid == "UTC":
            return "UTC"
    try:
        zoneinfo.ZoneInfo(zid)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ZoneError(zone_id) from None
    return zid


def fixed_offset_ms(zone: str) -> int | None:
    if zone == "UTC":
        return 0
    m = _FIXED.match(zone)
    if not m:
        return None
    total = (int(m.group(2)) * 60 + int(m.group(3))) * 60_000
    return -total if m.group(1) == "-" else total
