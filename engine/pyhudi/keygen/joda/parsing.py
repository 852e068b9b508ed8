"""Parsing strings with Joda input patterns (first pattern that matches wins) into epoch milliseconds."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.keygen.values import days_from_civil
from pyhudi.keygen.joda.formatting import DAY_NAMES, MONTH_NAMES
from pyhudi.keygen.joda.patterns import tokenize
from pyhudi.keygen.joda.zones import MS_PER_DAY, ParseFailure, PatternError, fixed_offset_ms


# ---------------------------------------------------------------------------------------------- parsing

_MONTH_RE = "(?i:" + "|".join(MONTH_NAMES + [m[:3] for m in MONTH_NAMES]) + ")"
_DAY_RE = "(?i:" + "|".join(DAY_NAMES + [d[:3] for d in DAY_NAMES]) + ")"
_PARSE_LETTERS = set("yYMdHkKhmsSaEZ")


def _re_literal(text: str) -> str:
    escaped = re.escape(text)
    return f"(?i:{escaped})" if any(ch.isalpha() for ch in text) else escaped


@dataclass(frozen=True)
class _InputFormat:
    pattern: str
    regex: str
    groups: tuple[tuple[str, str, int], ...]  # (group name, letter, count)


def compile_input(pattern: str) -> _InputFormat:
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
    formats = [compile_input(p) for p in patterns]
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
                    names = pa.array([m.lower() for m in MONTH_NAMES] + [m[:3].lower() for m in MONTH_NAMES])
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
    fixed = fixed_offset_ms(zone)
    if fixed is not None:
        return local - fixed
    naive = pa.array(local, pa.timestamp("ms"))
    try:
        aware = pc.assume_timezone(naive, timezone=zone, ambiguous="earliest", nonexistent="raise")
    except pa.ArrowInvalid as exc:
        raise ParseFailure(f"a local time does not exist in zone {zone} (daylight-saving gap): {exc}") from None
    return aware.cast(pa.int64()).to_numpy(zero_copy_only=False)
