"""Formatting epoch milliseconds with a Joda pattern in a zone, vectorised over Arrow arrays."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.keygen.values import civil_from_days, days_from_civil
from pyhudi.keygen.joda.patterns import tokenize
from pyhudi.keygen.joda.zones import MS_PER_DAY, PatternError, fixed_id, fixed_offset_ms


# ---------------------------------------------------------------------------------------------- formatting

MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
DAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


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
        zone_ids = pa.array([fixed_id(int(o) // 60_000) for o in offs], pa.string()) if any(
            t.letter in "zZ" and (t.letter == "z" or t.count >= 3) for t in tokens) else None
    else:
        zone = zone or "UTC"
        fixed = fixed_offset_ms(zone)
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
                pieces.append(_text(MONTH_NAMES, month - 1))
            elif k == 3:
                pieces.append(_text([m[:3] for m in MONTH_NAMES], month - 1))
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
            names = DAY_NAMES if k >= 4 else [d[:3] for d in DAY_NAMES]
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
            elif fixed_offset_ms(zone or "UTC") is not None:
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
