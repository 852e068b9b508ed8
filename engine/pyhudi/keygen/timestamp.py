"""Partition values of Hudi's TimestampBasedKeyGenerator (``TimestampBasedAvroKeyGenerator`` in Hudi 0.14/0.15).

How a value becomes epoch milliseconds, by ``hoodie.keygen.timebased.timestamp.type``:

* ``UNIX_TIMESTAMP`` / ``EPOCHMILLISECONDS`` / ``EPOCHMICROSECONDS`` / ``SCALAR`` (with
  ``...timestamp.scalar.time.unit``, default ``SECONDS``): the value is a number of that unit, converted with Java's
  ``TimeUnit`` (truncating toward zero). Numbers are whatever Avro holds: ints/longs, doubles truncated to long,
  decimals truncated, a *date* as its epoch day, a Spark *timestamp* as its epoch microseconds (so use
  ``EPOCHMICROSECONDS`` for timestamp columns) -- unless ``consistent.logical.timestamp.enabled`` is on, in which case
  a timestamp is taken as its milliseconds directly.
* ``DATE_STRING`` / ``MIXED``: the value is a string parsed with the first matching ``...input.dateformat``
  (a list split by ``...input.dateformat.list.delimiter.regex``, default ``,``).

A null value becomes ``1`` of the unit (``DATE_STRING``: 1 ms after the epoch, printed with the first input format
and parsed back), as in Hudi -- never ``__HIVE_DEFAULT_PARTITION__``.

Zones: ``...timezone`` (if set) is both input and output zone; else ``...input.timezone`` / ``...output.timezone``.
With no output zone a parsed string keeps the zone it was parsed in (its own offset, or the input zone), and a
number is printed in UTC (Java: the JVM default zone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from . import joda
from .values import timestamp_micros

TIMESTAMP_TYPES = ("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR")

# java.util.concurrent.TimeUnit -> (multiply, divide) to get milliseconds
TIME_UNITS = {
    "NANOSECONDS": (1, 1_000_000),
    "MICROSECONDS": (1, 1000),
    "MILLISECONDS": (1, 1),
    "SECONDS": (1000, 1),
    "MINUTES": (60_000, 1),
    "HOURS": (3_600_000, 1),
    "DAYS": (86_400_000, 1),
}

_INT64_MAX = np.iinfo(np.int64).max


class TimestampValueError(ValueError):
    """A partition value cannot be turned into a timestamp (the caller adds table and field)."""


@dataclass(frozen=True)
class TimestampOptions:
    """The ``hoodie.keygen.timebased.*`` settings, validated."""

    timestamp_type: str
    time_unit: str | None            # None for DATE_STRING / MIXED
    input_formats: tuple[str, ...]   # Joda patterns, in order
    input_zone: str | None           # Arrow zone ids (see joda.resolve_zone)
    output_format: str
    output_zone: str | None
    consistent_logical_timestamp: bool = False

    @property
    def parses_strings(self) -> bool:
        return self.timestamp_type in ("DATE_STRING", "MIXED")

    @property
    def path_segments(self) -> int:
        """How many ``/``-separated segments one formatted value spans."""
        return joda.literal_slashes(self.output_format) + 1


def split_input_formats(text: str, delimiter_regex: str) -> tuple[str, ...]:
    """Java ``String.split(regex)`` (trailing empties dropped), each format trimmed."""
    parts = re.split(delimiter_regex, text) if delimiter_regex else [text]
    while parts and parts[-1] == "":
        parts.pop()
    return tuple(p.strip() for p in parts)


def _to_millis(longs: np.ndarray, unit: str) -> np.ndarray:
    mul, div = TIME_UNITS[unit]
    if div != 1:
        # Java long division truncates toward zero
        return np.sign(longs) * (np.abs(longs) // div)
    if mul != 1:
        limit = _INT64_MAX // mul
        if (np.abs(longs) > limit).any():
            bad = int(longs[np.abs(longs) > limit][0])
            raise TimestampValueError(f"{bad} {unit.lower()} is out of the representable time range")
        return longs * mul
    return longs


def _as_longs(arr: pa.Array, opts: TimestampOptions) -> tuple[np.ndarray, np.ndarray | None]:
    """The Java long Hudi converts with the time unit, and (consistent timestamps) a mask of ready millis."""
    typ = arr.type
    n = len(arr)
    if pa.types.is_dictionary(typ):
        return _as_longs(arr.dictionary_decode(), opts)
    if pa.types.is_null(typ):
        return np.zeros(n, dtype=np.int64), None
    if pa.types.is_integer(typ):
        return arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), None
    if pa.types.is_floating(typ):
        values = arr.cast(pa.float64()).fill_null(0).to_numpy(zero_copy_only=False)
        values = np.nan_to_num(np.trunc(values), nan=0.0, posinf=float(_INT64_MAX), neginf=float(-_INT64_MAX - 1))
        return np.clip(values, -2.0 ** 63, 2.0 ** 63 - 1024).astype(np.int64), None
    if pa.types.is_decimal(typ):
        # BigDecimal.longValue(): drop the fraction (toward zero)
        return np.array([0 if v is None else int(v) for v in arr.to_pylist()], dtype=np.int64), None
    if pa.types.is_date(typ):
        return arr.cast(pa.date32()).cast(pa.int32()).cast(pa.int64()).fill_null(0).to_numpy(
            zero_copy_only=False), None
    if pa.types.is_timestamp(typ):
        micros = timestamp_micros(arr).fill_null(0).to_numpy(zero_copy_only=False)
        if opts.consistent_logical_timestamp and typ.tz is not None:
            # a java.sql.Timestamp of micros / 1000: its getTime() is used as milliseconds directly
            return np.sign(micros) * (np.abs(micros) // 1000), np.ones(n, dtype=bool)
        return micros, None
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        raise TimestampValueError(
            f"timestamp.type {opts.timestamp_type} expects numbers but the column holds strings; set "
            "hoodie.keygen.timebased.timestamp.type=DATE_STRING and hoodie.keygen.timebased.input.dateformat")
    raise TimestampValueError(f"values of type {typ} cannot be read as a timestamp")


def timestamp_partition_values(arr: pa.Array, opts: TimestampOptions) -> pa.Array:
    """Formatted partition values (not yet url-encoded, no ``field=`` prefix), one per row, never null."""
    n = len(arr)
    if n == 0:
        return pa.array([], pa.string())
    if opts.parses_strings:
        typ = arr.type
        if pa.types.is_dictionary(typ):
            arr = arr.dictionary_decode()
            typ = arr.type
        if pa.types.is_null(typ) or pa.types.is_large_string(typ):
            arr = arr.cast(pa.string())
        elif not pa.types.is_string(typ):
            hint = ""
            if pa.types.is_date(typ):
                hint = " (for a date column use timestamp.type SCALAR with scalar.time.unit DAYS)"
            elif pa.types.is_timestamp(typ):
                hint = " (for a timestamp column use timestamp.type EPOCHMICROSECONDS)"
            elif pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ):
                hint = " (for epoch numbers use UNIX_TIMESTAMP, EPOCHMILLISECONDS, EPOCHMICROSECONDS or SCALAR)"
            raise TimestampValueError(
                f"timestamp.type {opts.timestamp_type} expects strings but the column is {typ}{hint}")
        if arr.null_count:
            zone = opts.input_zone or opts.output_zone or "UTC"
            default = joda.format_millis(np.array([1], dtype=np.int64), opts.input_formats[0], zone=zone)[0]
            arr = arr.fill_null(default)
        try:
            millis, offsets = joda.parse_strings(arr, list(opts.input_formats), opts.input_zone)
        except joda.ParseFailure as exc:
            raise TimestampValueError(f"unable to parse input partition field value: {exc}") from None
        if opts.output_zone is not None:
            return joda.format_millis(millis, opts.output_format, zone=opts.output_zone)
        if offsets is None:
            return joda.format_millis(millis, opts.output_format, zone=opts.input_zone)
        return joda.format_millis(millis, opts.output_format, offsets=offsets)

    longs, ready = _as_longs(arr, opts)
    nulls = arr.is_null().to_numpy(zero_copy_only=False)
    if nulls.any():
        longs = np.where(nulls, 1, longs)  # Hudi's default partition value: 1L of the unit
        if ready is not None:
            ready = ready & ~nulls
    millis = _to_millis(longs if ready is None else np.where(ready, 0, longs), opts.time_unit)
    if ready is not None:
        millis = np.where(ready, longs, millis)
    return joda.format_millis(millis, opts.output_format, zone=opts.output_zone)
