"""Joda-Time date patterns and time zones, as Hudi's TimestampBasedKeyGenerator uses them.

Hudi formats partition paths with ``org.joda.time.format.DateTimeFormat.forPattern(...)`` and resolves zones with
``DateTimeZone.forTimeZone(TimeZone.getTimeZone(id))``. This module re-implements the parts of both that partition
paths need, vectorised over numpy/pyarrow:

* :func:`tokenize` splits a Joda pattern (``yyyy/MM/dd``, ``yyyy-MM-dd'T'HH:mm:ss.SSSZ``, ``yyyyMMddHH``...).
* :func:`format_millis` prints epoch milliseconds with a pattern in a zone (one named zone, or a fixed offset
  per row), with Joda's field semantics (``hh`` is 1-12, ``kk`` 1-24, ``SSS`` the milliseconds, ``Z`` ``+0800``,
  ``ZZ`` ``+08:00``, ``ZZZ`` the zone id, ``MMM`` ``Jan``, ``EEEE`` ``Monday``...).
* :func:`parse_strings` parses strings against a list of input patterns (first full match wins, like Joda's
  multi-parser), honouring an offset in the text, else the input zone, else UTC.
* :func:`resolve_zone` turns a Java zone id into an Arrow zone: ``GMT+8:00`` style custom ids become fixed offsets,
  Joda's legacy three-letter ids are converted as Joda does (``EST`` -> ``America/New_York``), ``UTC``/``GMT`` -> UTC.

Where Java would fall back to the JVM's default zone, pyhudi uses UTC (Spark clusters normally run in UTC).
"""

from __future__ import annotations

import datetime as _dt
import re
import zoneinfo
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .values import civil_from_days, days_from_civil

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


def _fixed_id(offset_minutes: int) -> str:
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
        return _fixed_id(-total if m.group(1) == "-" else total)
    m = _FIXED.match(zid)
    if m:
        total = int(m.group(2)) * 60 + int(m.group(3))
        return _fixed_id(-total if m.group(1) == "-" else total)
    if zid in _JODA_LEGACY_IDS:
        zid = _JODA_LEGACY_IDS[zid]
        if zid == "UTC":
            return "UTC"
    try:
        zoneinfo.ZoneInfo(zid)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ZoneError(zone_id) from None
    return zid


def _fixed_offset_ms(zone: str) -> int | None:
    if zone == "UTC":
        return 0
    m = _FIXED.match(zone)
    if not m:
        return None
    total = (int(m.group(2)) * 60 + int(m.group(3))) * 60_000
    return -total if m.group(1) == "-" else total


# ---------------------------------------------------------------------------------------------- patterns

_FORMAT_LETTERS = set("GCYxweEyDMdaKhHkmsSzZ")
_NUMERIC_LETTERS = set("CYxwedDyMdKhHkmsS")


@dataclass(frozen=True)
class Token:
    """A literal (``letter == ""``, text in ``text``) or a pattern field (``letter`` repeated ``count`` times)."""

    letter: str = ""
    count: int = 0
    text: str = ""

    @property
    def numeric(self) -> bool:
        if self.letter == "M":
            return self.count <= 2
        return self.letter in _NUMERIC_LETTERS


def tokenize(pattern: str) -> list[Token]:
    """Split a Joda pattern into tokens; raises :class:`PatternError` on unknown letters or open quotes."""
    tokens: list[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ("a" <= ch <= "z") or ("A" <= ch <= "Z"):
            j = i
            while j < n and pattern[j] == ch:
                j += 1
            if ch not in _FORMAT_LETTERS:
                raise PatternError(f"illegal pattern component '{pattern[i:j]}' in '{pattern}'")
            tokens.append(Token(ch, j - i))
            i = j
        elif ch == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                tokens.append(Token(text="'"))
                i += 2
                continue
            j = i + 1
            buf = []
            while True:
                if j >= n:
                    raise PatternError(f"unterminated quote in '{pattern}'")
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        buf.append("'")
                        j += 2
                        continue
                    break
                buf.append(pattern[j])
                j += 1
            tokens.append(Token(text="".join(buf)))
            i = j + 1
        else:
            tokens.append(Token(text=ch))
            i += 1
    # merge adjacent literals
    merged: list[Token] = []
    for tok in tokens:
        if not tok.letter and merged and not merged[-1].letter:
            merged[-1] = Token(text=merged[-1].text + tok.text)
        else:
            merged.append(tok)
    return merged


def literal_slashes(pattern: str) -> int:
    """How many ``/`` a formatted value of this pattern contains (partition-path segments minus one)."""
    return sum(tok.text.count("/") for tok in tokenize(pattern) if not tok.letter)


# ---------------------------------------------------------------------------------------------- formatting

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _num(values: np.ndarray, width: int) -> pa.Array:
    values = np.asarray(values, dtype=np.int64)
    text = pa.array(np.abs(values)).cast(pa.string())
    if width > 1:
        text = pc.utf8_lpad(text, width=width, padding="0")
    negative = values < 0
    if negative.any():
        text = pc.if_else(pa.array(negative), pc.binary_join_element_wise("-", text, ""), text)
    return text


def _text(names: list[str], index: np.ndarray) -> pa.Array:
    return pa.array(names, pa.string()).take(pa.array(np.asarray(index, dtype=np.int64)))


def _offset_text(offsets_ms: np.ndarray, colon: bool) -> pa.Array:
    minutes = np.asarray(offsets_ms, dtype=np.int64) // 60_000
    sign = pa.array(np.where(minutes < 0, "-", "+"))
    hh = _num(np.abs(minutes) // 60, 2)
    mm = _num(np.abs(minutes) % 60, 2)
    return pc.binary_join_element_wise(sign, hh, ":" if colon else "", mm, "")


def format_millis(millis: np.ndarray, pattern: str, zone: str | None = None,
                  offsets: np.ndarray | None = None) -> pa.Array:
    """Format epoch milliseconds with a Joda pattern.

    Either ``zone`` (an Arrow zone from :func:`resolve_zone`; ``None`` means UTC) applies to all rows, or
    ``offsets`` gives a fixed UTC offset (ms) per row (Joda's "offset parsed" zones).
    """
    tokens = tokenize(pattern)
    millis = np.asarray(millis, dtype=np.int64)
    n = len(millis)
    zone_ids: pa.Array | None = None
    if offsets is not None:
        offs = np.asarray(offsets, dtype=np.int64)
        zone_ids = pa.array([_fixed_id(int(o) // 60_000) for o in offs], pa.string()) if any(
            t.letter in "zZ" and (t.letter == "z" or t.count >= 3) for t in tokens) else None
    else:
        zone = zone or "UTC"
        fixed = _fixed_offset_ms(zone)
        if fixed is not None:
            offs = np.full(n, fixed, dtype=np.int64)
        else:
            ts = pa.array(millis, pa.timestamp("ms", tz=zone))
            local = pc.local_timestamp(ts).cast(pa.int64()).to_numpy(zero_copy_only=False)
            offs = local - millis
    local = millis + offs
    days = np.floor_divide(local, MS_PER_DAY)
    ms_of_day = local - days * MS_PER_DAY
    year, month, day = civil_from_days(days)
    hour = ms_of_day // 3_600_000
    minute = (ms_of_day // 60_000) % 60
    second = (ms_of_day // 1000) % 60
    milli = ms_of_day % 1000
    iso_dow = (days + 3) % 7 + 1  # 1 = Monday; 1970-01-01 was a Thursday

    def year_of_era(y):
        return np.where(y <= 0, 1 - y, y)

    def week_fields():
        thursday = days - (iso_dow - 1) + 3
        wy, _, _ = civil_from_days(thursday)
        week = (thursday - days_from_civil(wy, np.ones_like(wy), np.ones_like(wy))) // 7 + 1
        return wy, week

    pieces: list = []
    for tok in tokens:
        if not tok.letter:
            pieces.append(pa.scalar(tok.text, pa.string()))
            continue
        c, k = tok.letter, tok.count
        if c == "y" or c == "Y" or c == "x":
            value = year if c == "y" else (year_of_era(year) if c == "Y" else week_fields()[0])
            if k == 2:
                pieces.append(_num(np.abs(value) % 100, 2))
            else:
                pieces.append(_num(value, k))
        elif c == "M":
            if k >= 4:
                pieces.append(_text(_MONTHS, month - 1))
            elif k == 3:
                pieces.append(_text([m[:3] for m in _MONTHS], month - 1))
            else:
                pieces.append(_num(month, k))
        elif c == "d":
            pieces.append(_num(day, k))
        elif c == "H":
            pieces.append(_num(hour, k))
        elif c == "k":
            pieces.append(_num(np.where(hour == 0, 24, hour), k))
        elif c == "K":
            pieces.append(_num(hour % 12, k))
        elif c == "h":
            h12 = hour % 12
            pieces.append(_num(np.where(h12 == 0, 12, h12), k))
        elif c == "m":
            pieces.append(_num(minute, k))
        elif c == "s":
            pieces.append(_num(second, k))
        elif c == "S":
            if k <= 3:
                pieces.append(_num(milli // (10 ** (3 - k)), k))
            else:
                pieces.append(pc.binary_join_element_wise(_num(milli, 3), "0" * (k - 3), ""))
        elif c == "a":
            pieces.append(_text(["AM", "PM"], (hour >= 12).astype(np.int64)))
        elif c == "E":
            names = _DAYS if k >= 4 else [d[:3] for d in _DAYS]
            pieces.append(_text(names, iso_dow - 1))
        elif c == "e":
            pieces.append(_num(iso_dow, k))
        elif c == "D":
            doy = days - days_from_civil(year, np.ones_like(year), np.ones_like(year)) + 1
            pieces.append(_num(doy, k))
        elif c == "w":
            pieces.append(_num(week_fields()[1], k))
        elif c == "G":
            pieces.append(_text(["BC", "AD"], (year > 0).astype(np.int64)))
        elif c == "C":
            pieces.append(_num(year_of_era(year) // 100, k))
        elif c == "Z":
            if k >= 3:
                pieces.append(zone_ids if zone_ids is not None else pa.scalar(zone or "UTC", pa.string()))
            else:
                pieces.append(_offset_text(offs, colon=(k == 2)))
        elif c == "z":
            if k >= 4:
                raise PatternError(f"full time zone names ('{'z' * k}') are not supported in '{pattern}'")
            if zone_ids is not None:
                pieces.append(zone_ids)
            elif _fixed_offset_ms(zone or "UTC") is not None:
                pieces.append(pa.scalar(zone or "UTC", pa.string()))
            else:
                pieces.append(pc.strftime(pa.array(millis, pa.timestamp("ms", tz=zone)), format="%Z"))
        else:  # pragma: no cover - tokenize() rejects the rest
            raise PatternError(f"unsupported pattern letter '{c}' in '{pattern}'")
    arrays = [p for p in pieces if isinstance(p, (pa.Array, pa.ChunkedArray))]
    if not arrays:
        return pa.array(["".join(p.as_py() for p in pieces)] * n, pa.string())
    if len(pieces) == 1:
        return pieces[0]
    return pc.binary_join_element_wise(*pieces, "")


# ---------------------------------------------------------------------------------------------- parsing

_MONTH_RE = "(?i:" + "|".join(_MONTHS + [m[:3] for m in _MONTHS]) + ")"
_DAY_RE = "(?i:" + "|".join(_DAYS + [d[:3] for d in _DAYS]) + ")"
_PARSE_LETTERS = set("yYMdHkKhmsSaEZ")


def _re_literal(text: str) -> str:
    escaped = re.escape(text)
    return f"(?i:{escaped})" if any(ch.isalpha() for ch in text) else escaped


@dataclass(frozen=True)
class _InputFormat:
    pattern: str
    regex: str
    groups: tuple[tuple[str, str, int], ...]  # (group name, letter, count)


def _compile_input(pattern: str) -> _InputFormat:
    tokens = tokenize(pattern)
    parts = ["^"]
    groups = []
    for i, tok in enumerate(tokens):
        if not tok.letter:
            parts.append(_re_literal(tok.text))
            continue
        c, k = tok.letter, tok.count
        if c not in _PARSE_LETTERS or (c == "Z" and k >= 3):
            raise PatternError(f"pattern letter '{c * k}' is not supported in input date formats ('{pattern}')")
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        next_numeric = nxt is not None and bool(nxt.letter) and nxt.numeric
        name = f"g{i}"
        if c in "yY":
            if k == 2:
                # Joda: two digits pivot around (this year - 30); when no number follows, the parse is lenient
                # and any other digit count is taken as the full year
                body = r"\d{2}" if next_numeric else r"[-+]?\d{1,9}"
            else:
                body = r"[-+]?\d{1,%d}" % (k if next_numeric else 9)
        elif c == "M":
            body = _MONTH_RE if k >= 3 else r"\d{1,2}"
        elif c in "dHkKhms":
            body = r"\d{1,2}"
        elif c == "S":
            body = r"\d{1,%d}" % k  # appendFractionOfSecond(k, k): at most k digits
        elif c == "a":
            body = "(?i:AM|PM)"
        elif c == "E":
            body = _DAY_RE
        else:  # Z, ZZ
            body = r"Z|z|[+-]\d{2}(?::?\d{2})?"
        parts.append(f"(?P<{name}>{body})")
        groups.append((name, c, k))
    parts.append("$")
    return _InputFormat(pattern, "".join(parts), tuple(groups))


def _ints(arr: pa.Array) -> np.ndarray:
    arr = pc.replace_substring_regex(arr, pattern=r"^\+", replacement="")
    return arr.cast(pa.int64()).to_numpy(zero_copy_only=False)


def _two_digit_year(yy: np.ndarray) -> np.ndarray:
    pivot = _dt.date.today().year - 30  # Joda's default pivot for 'yy'
    low = pivot - 50
    t = low % 100 if low >= 0 else 99 + ((low + 1) % 100)
    return yy + low + np.where(yy < t, 100, 0) - t


def _offset_ms(arr: pa.Array) -> np.ndarray:
    """Milliseconds of ``+hh:mm`` / ``+hhmm`` / ``+hh`` offsets; ``Z`` and null are 0."""
    parts = pc.extract_regex(arr, pattern=r"^(?P<sign>[+-])(?P<hh>\d{2}):?(?P<mm>\d{2})?$")
    if not pc.any(pc.is_valid(parts)).as_py():
        return np.zeros(len(arr), dtype=np.int64)

    def part(name: str, default: str) -> pa.Array:
        values = pc.fill_null(pc.struct_field(parts, name), default)
        return pc.if_else(pc.equal(values, ""), default, values)

    hours = _ints(part("hh", "0"))
    minutes = _ints(part("mm", "0"))
    sign = np.where(pc.equal(part("sign", "+"), "-").to_numpy(zero_copy_only=False), -1, 1)
    return sign * (hours * 60 + minutes) * 60_000


def parse_strings(values: pa.Array, patterns: list[str], input_zone: str | None
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    """Parse non-null strings with the first Joda pattern that matches the whole text.

    Returns ``(millis, offsets)``: ``offsets`` is ``None`` when the parsed zone is ``input_zone`` for every row,
    else the per-row fixed offset (ms) Joda would attach to the parsed value (the offset in the text, or UTC).
    Raises :class:`ParseFailure` for values that match no pattern or name an impossible date-time.
    """
    formats = [_compile_input(p) for p in patterns]
    n = len(values)
    millis = np.zeros(n, dtype=np.int64)
    offsets = np.zeros(n, dtype=np.int64)
    pending = pc.is_valid(values).to_numpy(zero_copy_only=False)
    for fmt in formats:
        if not pending.any():
            break
        idx = np.nonzero(pending)[0]
        subset = values.take(pa.array(idx))
        extracted = pc.extract_regex(subset, pattern=fmt.regex)
        matched = pc.is_valid(extracted).to_numpy(zero_copy_only=False)
        if not matched.any():
            continue
        rows = idx[matched]
        ext = extracted.filter(pa.array(matched))
        m = len(rows)
        year = np.full(m, 1970, dtype=np.int64)
        month = np.ones(m, dtype=np.int64)
        day = np.ones(m, dtype=np.int64)
        hour = np.zeros(m, dtype=np.int64)
        minute = np.zeros(m, dtype=np.int64)
        second = np.zeros(m, dtype=np.int64)
        milli = np.zeros(m, dtype=np.int64)
        halfday = None
        h12 = None
        offset = None
        for name, c, k in fmt.groups:
            col = pc.struct_field(ext, name)
            if c in "yY":
                v = _ints(col)
                if k == 2:
                    two = pc.match_substring_regex(col, r"^\d{2}$").to_numpy(zero_copy_only=False)
                    v = np.where(two, _two_digit_year(v), v)
                year = v
            elif c == "M":
                if k >= 3:
                    names = pa.array([m.lower() for m in _MONTHS] + [m[:3].lower() for m in _MONTHS])
                    index = pc.index_in(pc.utf8_lower(col), value_set=names).to_numpy(zero_copy_only=False)
                    month = index.astype(np.int64) % 12 + 1
                else:
                    month = _ints(col)
            elif c == "d":
                day = _ints(col)
            elif c == "H":
                hour = _ints(col)
                _check(hour, 0, 23, "hourOfDay", subset, matched)
            elif c == "k":
                v = _ints(col)
                _check(v, 1, 24, "clockhourOfDay", subset, matched)
                hour = v % 24
            elif c == "K":
                h12 = _ints(col)
                _check(h12, 0, 11, "hourOfHalfday", subset, matched)
            elif c == "h":
                v = _ints(col)
                _check(v, 1, 12, "clockhourOfHalfday", subset, matched)
                h12 = v % 12
            elif c == "m":
                minute = _ints(col)
                _check(minute, 0, 59, "minuteOfHour", subset, matched)
            elif c == "s":
                second = _ints(col)
                _check(second, 0, 59, "secondOfMinute", subset, matched)
            elif c == "S":
                padded = pc.utf8_slice_codeunits(pc.utf8_rpad(col, width=3, padding="0"), 0, 3)
                milli = _ints(padded)
            elif c == "a":
                halfday = pc.equal(pc.utf8_upper(col), "PM").to_numpy(zero_copy_only=False).astype(np.int64)
            elif c == "Z":
                offset = _offset_ms(col)
        if h12 is not None:
            hour = h12 + 12 * (halfday if halfday is not None else 0)
        _check(month, 1, 12, "monthOfYear", subset, matched)
        first = days_from_civil(year, month, np.ones_like(month))
        next_month = days_from_civil(np.where(month == 12, year + 1, year), np.where(month == 12, 1, month + 1),
                                     np.ones_like(month))
        _check(day, 1, next_month - first, "dayOfMonth", subset, matched)
        local = (first + day - 1) * MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + milli
        if offset is not None:
            instant = local - offset
            row_offset = offset
        elif input_zone is not None:
            instant = _local_to_instant(local, input_zone, subset, matched)
            row_offset = np.zeros(m, dtype=np.int64)
        else:
            instant = local
            row_offset = np.zeros(m, dtype=np.int64)
        millis[rows] = instant
        offsets[rows] = row_offset
        pending[rows] = False
    if pending.any():
        bad = values[int(np.nonzero(pending)[0][0])].as_py()
        raise ParseFailure(f"'{bad}' matches none of the input date formats {patterns}", bad)
    return millis, (None if input_zone is not None else offsets)


def _check(values: np.ndarray, low, high, what: str, subset: pa.Array, matched: np.ndarray) -> None:
    bad = (values < low) | (values > high)
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        text = subset.filter(pa.array(matched))[i].as_py()
        raise ParseFailure(f"'{text}': value {int(values[i])} for {what} is out of range", text)


def _local_to_instant(local: np.ndarray, zone: str, subset: pa.Array, matched: np.ndarray) -> np.ndarray:
    fixed = _fixed_offset_ms(zone)
    if fixed is not None:
        return local - fixed
    naive = pa.array(local, pa.timestamp("ms"))
    try:
        aware = pc.assume_timezone(naive, timezone=zone, ambiguous="earliest", nonexistent="raise")
    except pa.ArrowInvalid as exc:
        raise ParseFailure(f"a local time does not exist in zone {zone} (daylight-saving gap): {exc}") from None
    return aware.cast(pa.int64()).to_numpy(zero_copy_only=False)
