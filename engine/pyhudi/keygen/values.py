"""Column lookup and the Java string form of values, as Hudi's key generators see them.

Spark datasource writes in Hudi 0.14/0.15 turn each row into an Avro record and call the key generator on it
(``HoodieAvroUtils.getNestedFieldValAsString``). So a key is ``toString()`` of the *Avro* value:

===================  =====================================  ==============================
Spark / Arrow type   Avro value                             string
===================  =====================================  ==============================
string               Utf8                                   as is
byte/short/int/long  Integer / Long                         ``"42"``, ``"-7"``
boolean              Boolean                                ``"true"`` / ``"false"``
float / double       Float / Double                         Java ``Float/Double.toString``
decimal(p, s)        BigDecimal                             ``BigDecimal.toString`` (``"12345.67890"``)
date                 LocalDate                              ``"2023-04-01"``
timestamp            Long micros (timestamp-micros)         ``"1680350460000000"``
===================  =====================================  ==============================

With ``hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled=true`` a timestamp becomes a
``java.sql.Timestamp`` of its milliseconds and renders as ``"2023-04-01 12:01:00.0"``; Java prints it in the
JVM's zone, here the Arrow column's zone (Spark's session zone) or UTC.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .pathcodec import map_distinct


class UnsupportedKeyType(TypeError):
    """A column type that Hudi cannot turn into a meaningful key string (binary, struct, list, map...)."""

    def __init__(self, arrow_type: pa.DataType):
        super().__init__(str(arrow_type))
        self.arrow_type = arrow_type


class FieldNotFound(KeyError):
    """A (possibly nested ``a.b``) field is not in the batch."""

    def __init__(self, field: str, available: list[str]):
        super().__init__(field)
        self.field = field
        self.available = available


# ---------------------------------------------------------------------------------------------- lookup


def _column(data, name: str):
    if isinstance(data, pa.Table):
        col = data.column(name)
        return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return data.column(name)


def available_fields(schema: pa.Schema) -> list[str]:
    """Top-level and nested (``a.b``) field names, for error messages."""
    names: list[str] = []

    def walk(prefix: str, fields) -> None:
        for f in fields:
            full = f"{prefix}{f.name}"
            names.append(full)
            if pa.types.is_struct(f.type) and len(names) < 200:
                walk(full + ".", f.type)

    walk("", schema)
    return names


def _match(names: list[str], wanted: str) -> str | None:
    """``wanted`` itself, else its only case-insensitive match (Spark resolves column names that way)."""
    if wanted in names:
        return wanted
    folded = [n for n in names if n.lower() == wanted.lower()]
    return folded[0] if len(folded) == 1 else None


def get_field(data: pa.RecordBatch | pa.Table, field: str) -> pa.Array:
    """The values of ``field`` (dotted for nested struct fields); a null parent struct gives null.

    Raises :class:`FieldNotFound` when the field is not there.
    """
    schema = data.schema
    top = _match(schema.names, field)
    if top is not None:
        return _column(data, top)
    parts = field.split(".")
    top = _match(schema.names, parts[0])
    if top is None:
        raise FieldNotFound(field, available_fields(schema))
    arr = _column(data, top)
    for part in parts[1:]:
        typ = arr.type
        child = _match([f.name for f in typ], part) if pa.types.is_struct(typ) else None
        if child is None:
            raise FieldNotFound(field, available_fields(schema))
        arr = pc.struct_field(arr, child)  # propagates the parent's nulls, like Hudi's nested lookup
    return arr


# ---------------------------------------------------------------------------------------------- Java toString


def java_double_str(value: float, single: bool = False) -> str:
    """``Double.toString`` (or ``Float.toString`` when ``single``): shortest round-trip digits in Java's layout."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sci = np.format_float_scientific(np.float32(value) if single else np.float64(value), unique=True, trim="-")
    mantissa, exp_text = sci.split("e")
    exponent = int(exp_text)
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "")
    if 1e-3 <= abs(value) < 1e7:
        point = exponent + 1  # digits before the decimal point
        if point <= 0:
            text = "0." + "0" * (-point) + digits
        elif point >= len(digits):
            text = digits + "0" * (point - len(digits)) + ".0"
        else:
            text = digits[:point] + "." + digits[point:]
        return sign + text
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def java_big_decimal_str(value: Decimal) -> str:
    """``BigDecimal.toString``: Python's ``str(Decimal)`` follows the same to-scientific-string rules."""
    return str(value)


def java_timestamp_str(millis: int) -> str:
    """``java.sql.Timestamp.toString`` of wall-clock milliseconds (``yyyy-mm-dd hh:mm:ss.f...``)."""
    days, ms = divmod(millis, 86_400_000)
    y, m, d = civil_from_days(np.array([days], dtype=np.int64))
    secs, frac = divmod(ms, 1000)
    hh, rem = divmod(secs, 3600)
    mm, ss = divmod(rem, 60)
    nanos = f"{frac * 1_000_000:09d}".rstrip("0") or "0"
    return f"{int(y[0]):04d}-{int(m[0]):02d}-{int(d[0]):02d} {hh:02d}:{mm:02d}:{ss:02d}.{nanos}"


def civil_from_days(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Proleptic Gregorian (year, month, day) of days since 1970-01-01 (H. Hinnant's algorithm), vectorised."""
    z = days.astype(np.int64) + 719468
    era = np.floor_divide(z, 146097)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = np.where(mp < 10, mp + 3, mp - 9)
    y = np.where(m <= 2, y + 1, y)
    return y, m, d


def days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of a proleptic Gregorian date, vectorised."""
    y = np.asarray(y, dtype=np.int64)
    m = np.asarray(m, dtype=np.int64)
    d = np.asarray(d, dtype=np.int64)
    y = np.where(m <= 2, y - 1, y)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = np.where(m > 2, m - 3, m + 9)
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def timestamp_micros(arr: pa.Array) -> pa.Array:
    """Any Arrow timestamp as int64 microseconds since the epoch (what Spark's Avro conversion stores)."""
    unit = arr.type.unit
    raw = arr.cast(pa.int64())
    if unit == "us":
        return raw
    if unit == "ns":
        return pc.divide(raw, 1000)  # Arrow integer division truncates toward zero, like Java
    factor = {"s": 1_000_000, "ms": 1000}[unit]
    return pc.multiply_checked(raw, factor)


def to_java_strings(arr: pa.Array, consistent_logical_timestamp: bool = False) -> pa.Array:
    """The Java string of each value (nulls stay null) as a Hudi key generator renders it.

    Raises :class:`UnsupportedKeyType` for types without a meaningful string form.
    """
    typ = arr.type
    if pa.types.is_dictionary(typ):
        return to_java_strings(arr.dictionary_decode(), consistent_logical_timestamp)
    if pa.types.is_string(typ):
        return arr
    if pa.types.is_large_string(typ) or getattr(pa.types, "is_string_view", lambda t: False)(typ):
        return arr.cast(pa.string())
    if pa.types.is_null(typ):
        return pa.nulls(len(arr), pa.string())
    if pa.types.is_integer(typ) or pa.types.is_boolean(typ):
        return arr.cast(pa.string())
    if pa.types.is_floating(typ):
        single = typ in (pa.float32(), pa.float16())
        return map_distinct(arr, lambda v: java_double_str(float(v), single=single))
    if pa.types.is_decimal(typ):
        if typ.scale <= 6 and typ.scale >= 0:
            # BigDecimal.toString stays in plain notation while the adjusted exponent is >= -6, which holds
            # for every value of a type with scale <= 6; Arrow's cast prints exactly that plain form.
            return arr.cast(pa.string())
        return map_distinct(arr, java_big_decimal_str)
    if pa.types.is_date(typ):
        return arr.cast(pa.date32()).cast(pa.string())
    if pa.types.is_timestamp(typ):
        if consistent_logical_timestamp and typ.tz is not None:
            # java.sql.Timestamp(micros / 1000).toString() in the session zone
            micros = timestamp_micros(arr)
            millis = pc.divide(micros, 1000)
            wall = pc.local_timestamp(millis.cast(pa.timestamp("ms", tz=typ.tz))).cast(pa.int64())
            return map_distinct(wall, java_timestamp_str)
        return timestamp_micros(arr).cast(pa.string())
    raise UnsupportedKeyType(typ)
