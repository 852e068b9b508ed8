"""Hudi's built-in key generators over Arrow batches.

One :class:`KeyGenerator` type covers them all; what differs between Hudi's classes is

* how the record key is built -- ``simple`` (the value of the one key field) or ``composite``
  (``f1:v1,f2:v2``; a null part is ``__null__``, an empty one ``__empty__``), and
* which partition *parts* make the partition path -- a plain field value (``simple``) or a formatted timestamp
  (``timestamp``), joined by ``/``; a null/empty plain value is ``__HIVE_DEFAULT_PARTITION__``.

=============================  ==============================  =========================================
Hudi class                     record key                      partition path
=============================  ==============================  =========================================
SimpleKeyGenerator             simple (exactly one field)      one simple part
ComplexKeyGenerator            composite (one field: simple,   simple parts (none: ``""``)
                               see ``COMPLEX_KEYGEN_...``)
NonpartitionedKeyGenerator     one field: simple, else comp.   ``""``
TimestampBasedKeyGenerator     simple (exactly one field)      one timestamp part
CustomKeyGenerator             one field: simple, else comp.   ``field:simple`` / ``field:timestamp`` parts
GlobalDeleteKeyGenerator       composite                       ``""``
=============================  ==============================  =========================================

``org.apache.spark.sql.hudi.command.SqlKeyGenerator`` (what Hudi's Spark SQL writes use) stands for the class in
``hoodie.sql.origin.keygen.class``; with ``hoodie.sql.partition.schema`` it also rewrites TIMESTAMP partition values
to ``yyyy-MM-dd HH:mm:ss`` (escaped) as Hudi's SQL writes do.

Generators hold only their configuration (strings, tuples, frozen dataclasses), so they pickle into Spark
executors and are safe to share between threads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ConfigError, PartitionPathError, RecordKeyError
from . import joda
from .pathcodec import DEFAULT_PARTITION_PATH, escape_array, unescape_path_name
from .timestamp import (TIME_UNITS, TIMESTAMP_TYPES, TimestampOptions, TimestampValueError,
                        split_input_formats, timestamp_partition_values)
from .values import FieldNotFound, UnsupportedKeyType, get_field, timestamp_micros, to_java_strings

# ---------------------------------------------------------------------------------------------- option keys

RECORDKEY_FIELD = "hoodie.datasource.write.recordkey.field"
PARTITIONPATH_FIELD = "hoodie.datasource.write.partitionpath.field"
KEYGENERATOR_CLASS = "hoodie.datasource.write.keygenerator.class"
KEYGENERATOR_TYPE = "hoodie.datasource.write.keygenerator.type"
HIVE_STYLE_PARTITIONING = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE_PARTITIONING = "hoodie.datasource.write.partitionpath.urlencode"
CONSISTENT_LOGICAL_TIMESTAMP = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"
#: ``true``: a ComplexKeyGenerator with ONE record key field writes the bare value (Hudi 0.14.1, 0.15.0, 1.0.0-1.0.2);
#: ``false``: it writes ``field:value`` (Hudi <= 0.14.0, and the default again from 0.14.2 / 0.15.1 / 1.1.0).
COMPLEX_KEYGEN_NEW_ENCODING = "hoodie.write.complex.keygen.new.encoding"
COMPLEX_KEYGEN_NEW_ENCODING_ALIASES = (COMPLEX_KEYGEN_NEW_ENCODING,
                                       "hoodie.datasource.write.complex.keygen.new.encoding")
#: pyhudi writes like Hudi 0.15.0 unless told otherwise (see the report in the package docstring).
COMPLEX_KEYGEN_NEW_ENCODING_DEFAULT = True

# the same settings as hoodie.properties stores them
TABLE_RECORDKEY_FIELDS = "hoodie.table.recordkey.fields"
TABLE_PARTITION_FIELDS = "hoodie.table.partition.fields"
TABLE_KEYGENERATOR_CLASS = "hoodie.table.keygenerator.class"
TABLE_KEYGENERATOR_TYPE = "hoodie.table.keygenerator.type"
SQL_ORIGIN_KEYGEN_CLASS = "hoodie.sql.origin.keygen.class"
SQL_PARTITION_SCHEMA = "hoodie.sql.partition.schema"

_TS_PREFIXES = ("hoodie.keygen.timebased.", "hoodie.deltastreamer.keygen.timebased.")
TIMESTAMP_TYPE = "hoodie.keygen.timebased.timestamp.type"
TIMESTAMP_SCALAR_UNIT = "hoodie.keygen.timebased.timestamp.scalar.time.unit"
TIMESTAMP_INPUT_FORMAT = "hoodie.keygen.timebased.input.dateformat"
TIMESTAMP_INPUT_FORMAT_DELIMITER = "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex"
TIMESTAMP_TIMEZONE = "hoodie.keygen.timebased.timezone"
TIMESTAMP_INPUT_TIMEZONE = "hoodie.keygen.timebased.input.timezone"
TIMESTAMP_OUTPUT_FORMAT = "hoodie.keygen.timebased.output.dateformat"
TIMESTAMP_OUTPUT_TIMEZONE = "hoodie.keygen.timebased.output.timezone"

NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"

# ---------------------------------------------------------------------------------------------- class names

SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM, GLOBAL_DELETE = (
    "SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE")

_PKG = "org.apache.hudi.keygen."
TYPE_TO_CLASS = {
    SIMPLE: _PKG + "SimpleKeyGenerator",
    COMPLEX: _PKG + "ComplexKeyGenerator",
    NON_PARTITION: _PKG + "NonpartitionedKeyGenerator",
    TIMESTAMP: _PKG + "TimestampBasedKeyGenerator",
    CUSTOM: _PKG + "CustomKeyGenerator",
    GLOBAL_DELETE: _PKG + "GlobalDeleteKeyGenerator",
}
_AVRO_CLASSES = {
    SIMPLE: _PKG + "SimpleAvroKeyGenerator",
    COMPLEX: _PKG + "ComplexAvroKeyGenerator",
    NON_PARTITION: _PKG + "NonpartitionedAvroKeyGenerator",
    TIMESTAMP: _PKG + "TimestampBasedAvroKeyGenerator",
    CUSTOM: _PKG + "CustomAvroKeyGenerator",
    GLOBAL_DELETE: _PKG + "GlobalAvroDeleteKeyGenerator",
}
CLASS_TO_TYPE = {**{c: t for t, c in TYPE_TO_CLASS.items()}, **{c: t for t, c in _AVRO_CLASSES.items()}}
SQL_KEYGEN_CLASS = "org.apache.spark.sql.hudi.command.SqlKeyGenerator"


def _table(table_name: str | None) -> str:
    return f"table '{table_name}'" if table_name else "the table"


def _split_fields(value: str | None) -> list[str]:
    """Hudi's ``StringUtils.split(value, ",")``: trimmed, empty entries dropped."""
    if value is None:
        return []
    return [part.strip() for part in str(value).split(",") if part.strip()]


def _bool(options: dict, key: str, default: bool, table_name: str | None) -> bool:
    raw = options.get(key)
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"{_table(table_name)}: option {key}={raw!r} is not a boolean; use 'true' or 'false'.")


def _first(options: dict, *keys: str) -> str | None:
    for key in keys:
        value = options.get(key)
        if value is not None:
            return str(value)
    return None


# ---------------------------------------------------------------------------------------------- partition parts


@dataclass(frozen=True)
class _SimplePart:
    field: str
    segments: int = 1


@dataclass(frozen=True)
class _TimestampPart:
    field: str
    options: TimestampOptions

    @property
    def segments(self) -> int:
        return self.options.path_segments


_TRAVERSAL = r"(^|/)\.{1,2}(/|$)"


class KeyGenerator:
    """Computes ``_hoodie_record_key`` and ``_hoodie_partition_path`` for Arrow batches, like Hudi's key generators.

    Build one with :func:`build_key_generator`. Attributes:

    ``java_class``
        the Hudi class name (goes into ``hoodie.table.keygenerator.class``).
    ``key_generator_type``
        ``SIMPLE``, ``COMPLEX``, ``NON_PARTITION``, ``TIMESTAMP``, ``CUSTOM`` or ``GLOBAL_DELETE``.
    ``record_key_fields`` / ``partition_path_fields``
        source field names (``a.b`` for nested fields); for Custom, without the ``:simple``/``:timestamp`` types.
    ``hive_style_partitioning`` / ``url_encode_partition_path``
        the two path options.

    Columns are looked up by name (``a.b`` reaches into structs); values are rendered as Java's ``toString`` of
    the Avro value Hudi sees (see :mod:`pyhudi.keygen.values`).
    """

    def __init__(self, *, java_class: str, key_generator_type: str, record_key_fields: list[str],
                 record_key_mode: str, parts: list, hive_style_partitioning: bool,
                 url_encode_partition_path: bool, consistent_logical_timestamp: bool,
                 table_name: str | None, sql_timestamp_parts: tuple[int, ...] = (), sql_partition_count: int = 0):
        self.java_class = java_class
        self.key_generator_type = key_generator_type
        self.record_key_fields = list(record_key_fields)
        self.partition_path_fields = [p.field for p in parts]
        self.hive_style_partitioning = hive_style_partitioning
        self.url_encode_partition_path = url_encode_partition_path
        self.consistent_logical_timestamp = consistent_logical_timestamp
        self.table_name = table_name
        self._record_key_mode = record_key_mode  # "simple" | "composite"
        self._parts = tuple(parts)
        # Spark SQL writes (SqlKeyGenerator): parts whose column is a SQL TIMESTAMP are rewritten to
        # "yyyy-MM-dd HH:mm:ss", url-escaped, when the path has as many segments as the partition schema has fields
        self._sql_timestamp_parts = tuple(sql_timestamp_parts)
        self._sql_partition_count = sql_partition_count

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(java_class={self.java_class!r}, record_key_fields={self.record_key_fields}, "
                f"partition_path_fields={self.partition_path_fields}, "
                f"hive_style_partitioning={self.hive_style_partitioning}, "
                f"url_encode_partition_path={self.url_encode_partition_path})")

    # ------------------------------------------------------------------ helpers

    def _where(self) -> str:
        return _table(self.table_name)

    def _strings(self, data, field: str, role: str) -> pa.Array:
        error = RecordKeyError if role == "record key" else PartitionPathError
        option = RECORDKEY_FIELD if role == "record key" else PARTITIONPATH_FIELD
        try:
            arr = get_field(data, field)
        except FieldNotFound as exc:
            raise error(
                f"{self._where()}: {role} field '{field}' is not in the data. Available columns: "
                f"{', '.join(exc.available) or '(none)'}. Fix {option} (or add the column)."
            ) from None
        try:
            return to_java_strings(arr, self.consistent_logical_timestamp)
        except UnsupportedKeyType as exc:
            raise error(
                f"{self._where()}: {role} field '{field}' has type {exc.arrow_type}, which Hudi cannot turn into "
                f"a {role} string; cast it to a string or number first, or choose another field in {option}."
            ) from None

    @staticmethod
    def _first_bad(mask: pa.Array) -> tuple[int, int]:
        bad = mask.to_numpy(zero_copy_only=False)
        return int(bad.sum()), int(np.argmax(bad))

    # ------------------------------------------------------------------ record keys

    def record_keys(self, data: pa.RecordBatch | pa.Table) -> pa.StringArray:
        """``_hoodie_record_key`` of every row (a string array without nulls)."""
        n = data.num_rows
        if not self.record_key_fields:
            raise ConfigError(
                f"{self._where()}: no record key field is configured; set {RECORDKEY_FIELD} "
                "(SQL: primaryKey) or let the writer auto-generate record keys.")
        if self._record_key_mode == "simple":
            field = self.record_key_fields[0]
            values = self._strings(data, field, "record key")
            bad = pc.or_kleene(pc.is_null(values), pc.fill_null(pc.equal(values, ""), False))
            if n and pc.any(bad).as_py():
                count, first = self._first_bad(bad)
                raise RecordKeyError(
                    f"{self._where()}: record key field '{field}' is null or empty in {count} of {n} rows "
                    f"(first at row {first}). Hudi needs a non-empty record key for every record: fill or filter "
                    f"those rows, or choose another field in {RECORDKEY_FIELD}.")
            return values
        pieces: list = []
        all_bad = None
        for i, field in enumerate(self.record_key_fields):
            values = self._strings(data, field, "record key")
            is_null = pc.is_null(values)
            is_empty = pc.fill_null(pc.equal(values, ""), False)
            rendered = pc.if_else(is_null, NULL_RECORDKEY_PLACEHOLDER,
                                  pc.if_else(is_empty, EMPTY_RECORDKEY_PLACEHOLDER, values))
            part_bad = pc.or_(is_null, is_empty)
            all_bad = part_bad if all_bad is None else pc.and_(all_bad, part_bad)
            if i:
                pieces.append(pa.scalar(","))
            pieces.append(pa.scalar(f"{field}:"))
            pieces.append(rendered)
        if n and pc.any(all_bad).as_py():
            count, first = self._first_bad(all_bad)
            raise RecordKeyError(
                f"{self._where()}: all record key fields ({', '.join(self.record_key_fields)}) are null or empty "
                f"in {count} of {n} rows (first at row {first}). Hudi needs at least one non-empty key part: fill "
                f"or filter those rows, or change {RECORDKEY_FIELD}.")
        if n == 0:
            return pa.array([], pa.string())
        return pc.binary_join_element_wise(*pieces, "")

    # ------------------------------------------------------------------ partition paths

    def _render_part(self, data, part) -> pa.Array:
        if isinstance(part, _TimestampPart):
            try:
                arr = get_field(data, part.field)
            except FieldNotFound as exc:
                raise PartitionPathError(
                    f"{self._where()}: partition path field '{part.field}' is not in the data. Available columns: "
                    f"{', '.join(exc.available) or '(none)'}. Fix {PARTITIONPATH_FIELD} (or add the column)."
                ) from None
            try:
                values = timestamp_partition_values(arr, part.options)
            except TimestampValueError as exc:
                raise PartitionPathError(
                    f"{self._where()}: cannot build the partition path from timestamp field '{part.field}': {exc}"
                ) from None
            if self.url_encode_partition_path:
                values = escape_array(values)
        else:
            values = self._strings(data, part.field, "partition path")
            missing = pc.or_kleene(pc.is_null(values), pc.fill_null(pc.equal(values, ""), False))
            if self.url_encode_partition_path:
                values = escape_array(values)
            values = pc.if_else(missing, DEFAULT_PARTITION_PATH, values)
        if self.hive_style_partitioning:
            values = pc.binary_join_element_wise(pa.scalar(f"{part.field}="), values, "")
        return values

    def partition_paths(self, data: pa.RecordBatch | pa.Table) -> pa.StringArray:
        """``_hoodie_partition_path`` of every row (``""`` for non-partitioned tables)."""
        n = data.num_rows
        if not self._parts:
            return pa.array([""] * n, pa.string())
        if n == 0:
            return pa.array([], pa.string())
        rendered = [self._render_part(data, part) for part in self._parts]
        paths = self._join(rendered)
        if self._sql_timestamp_parts:
            converted = list(rendered)
            for i in self._sql_timestamp_parts:
                converted[i] = self._sql_timestamp_part(data, self._parts[i], rendered[i])
            segments = pc.add(pc.count_substring(paths, "/"), 1)
            paths = pc.if_else(pc.equal(segments, self._sql_partition_count), self._join(converted), paths)
        traversal = pc.match_substring_regex(paths, _TRAVERSAL)
        if pc.any(traversal).as_py():
            count, first = self._first_bad(traversal)
            raise PartitionPathError(
                f"{self._where()}: partition path '{paths[first].as_py()}' (row {first}, {count} rows in all) has a "
                f"'.' or '..' segment, which would put files outside their partition directory. Clean the values "
                f"of {', '.join(self.partition_path_fields)} first.")
        return paths

    @staticmethod
    def _join(rendered: list) -> pa.Array:
        if len(rendered) == 1:
            return rendered[0]
        pieces: list = []
        for i, values in enumerate(rendered):
            if i:
                pieces.append(pa.scalar("/"))
            pieces.append(values)
        return pc.binary_join_element_wise(*pieces, "")

    def _sql_timestamp_part(self, data, part, rendered: pa.Array) -> pa.Array:
        """SqlKeyGenerator.convertPartitionPathToSqlType for one TIMESTAMP partition column."""
        arr = get_field(data, part.field)
        if not pa.types.is_timestamp(arr.type):
            return rendered
        micros = timestamp_micros(arr)
        millis = pc.divide(micros, 1000)  # MILLISECONDS.convert(micros, MICROSECONDS): toward zero
        valid = pc.is_valid(millis).to_numpy(zero_copy_only=False)
        # Joda prints in the JVM's default zone: Spark's session zone (the Arrow column's zone), else UTC
        text = joda.format_millis(millis.fill_null(0).to_numpy(zero_copy_only=False), "yyyy-MM-dd HH:mm:ss",
                                  zone=arr.type.tz and joda.resolve_zone(arr.type.tz))
        text = escape_array(text)
        if self.hive_style_partitioning:
            text = pc.binary_join_element_wise(pa.scalar(f"{part.field}="), text, "")
        # Hudi fails on a null TIMESTAMP partition value here; pyhudi keeps the default partition instead
        return pc.if_else(pa.array(valid), text, rendered)

    def keys(self, data: pa.RecordBatch | pa.Table) -> tuple[pa.StringArray, pa.StringArray]:
        """``(record_keys(data), partition_paths(data))``."""
        return self.record_keys(data), self.partition_paths(data)

    # ------------------------------------------------------------------ readers

    def partition_values(self, partition_path: str) -> dict[str, str | None]:
        """The field values encoded in a partition path (the inverse of :meth:`partition_paths`).

        ``"region=us/2024"``-style hive prefixes are checked and stripped, url-encoding is undone, and
        ``__HIVE_DEFAULT_PARTITION__`` comes back as ``None`` (the value was null or empty). A timestamp part comes
        back as its formatted text (e.g. ``"2024/01/05"``).
        """
        if not self._parts:
            if partition_path in ("", None):
                return {}
            raise PartitionPathError(
                f"{self._where()} is not partitioned ({self.java_class}), but got partition path "
                f"'{partition_path}'.")
        path = partition_path.strip("/")
        if len(self._parts) == 1:
            texts = [path]
        else:
            segments = path.split("/")
            expected = sum(p.segments for p in self._parts)
            if len(segments) != expected:
                raise PartitionPathError(
                    f"{self._where()}: partition path '{partition_path}' has {len(segments)} segments but fields "
                    f"{', '.join(self.partition_path_fields)} make {expected}; is it a partition of this table?")
            texts, at = [], 0
            for part in self._parts:
                texts.append("/".join(segments[at:at + part.segments]))
                at += part.segments
        values: dict[str, str | None] = {}
        for part, text in zip(self._parts, texts):
            if self.hive_style_partitioning:
                prefix = f"{part.field}="
                if not text.startswith(prefix):
                    raise PartitionPathError(
                        f"{self._where()}: partition path '{partition_path}' should name field '{part.field}' "
                        f"hive-style ('{prefix}...'); check hoodie.datasource.write.hive_style_partitioning.")
                text = text[len(prefix):]
            if text == DEFAULT_PARTITION_PATH:
                values[part.field] = None
            else:
                values[part.field] = unescape_path_name(text) if self.url_encode_partition_path else text
        return values


# ---------------------------------------------------------------------------------------------- building


def _ts_option(options: dict, key: str) -> str | None:
    suffix = key[len(_TS_PREFIXES[0]):]
    return _first(options, *(prefix + suffix for prefix in _TS_PREFIXES))


def _ts_has(options: dict, key: str) -> bool:
    suffix = key[len(_TS_PREFIXES[0]):]
    return any(prefix + suffix in options for prefix in _TS_PREFIXES)


def _timestamp_options(options: dict, consistent: bool, table_name: str | None) -> TimestampOptions:
    where = _table(table_name)
    ts_type = (_ts_option(options, TIMESTAMP_TYPE) or "").strip().upper()
    if not ts_type:
        raise ConfigError(f"{where}: the timestamp-based key generator needs {TIMESTAMP_TYPE} "
                          f"(one of {', '.join(TIMESTAMP_TYPES)}).")
    if ts_type not in TIMESTAMP_TYPES:
        raise ConfigError(f"{where}: {TIMESTAMP_TYPE}={ts_type!r} is not one of {', '.join(TIMESTAMP_TYPES)}.")
    unit = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS",
            "EPOCHMICROSECONDS": "MICROSECONDS"}.get(ts_type)
    if ts_type == "SCALAR":
        unit = (_ts_option(options, TIMESTAMP_SCALAR_UNIT) or "SECONDS").strip().upper()
        if unit not in TIME_UNITS:
            raise ConfigError(f"{where}: {TIMESTAMP_SCALAR_UNIT}={unit!r} is not a java TimeUnit; use one of "
                              f"{', '.join(TIME_UNITS)}.")
    output_format = _ts_option(options, TIMESTAMP_OUTPUT_FORMAT)
    if not output_format:
        raise ConfigError(f"{where}: the timestamp-based key generator needs {TIMESTAMP_OUTPUT_FORMAT} "
                          "(a Joda pattern such as yyyy/MM/dd).")
    try:
        joda.tokenize(output_format)
    except joda.PatternError as exc:
        raise ConfigError(f"{where}: {TIMESTAMP_OUTPUT_FORMAT}: {exc}.") from None
    input_formats: tuple[str, ...] = ()
    if ts_type in ("DATE_STRING", "MIXED"):
        raw = _ts_option(options, TIMESTAMP_INPUT_FORMAT) or ""
        delimiter = (_ts_option(options, TIMESTAMP_INPUT_FORMAT_DELIMITER) or "").strip() or ","
        input_formats = tuple(f for f in split_input_formats(raw, delimiter) if f)
        if not input_formats:
            raise ConfigError(f"{where}: {TIMESTAMP_TYPE}={ts_type} needs {TIMESTAMP_INPUT_FORMAT} "
                              "(Joda patterns such as yyyy-MM-dd'T'HH:mm:ss.SSSZ, comma separated).")
        for fmt in input_formats:
            try:
                joda._compile_input(fmt)
            except joda.PatternError as exc:
                raise ConfigError(f"{where}: {TIMESTAMP_INPUT_FORMAT}: {exc}.") from None
    if _ts_has(options, TIMESTAMP_TIMEZONE):
        zone_text = _ts_option(options, TIMESTAMP_TIMEZONE)
        input_text = output_text = zone_text
        zone_key = TIMESTAMP_TIMEZONE
    else:
        input_text = _ts_option(options, TIMESTAMP_INPUT_TIMEZONE)
        output_text = _ts_option(options, TIMESTAMP_OUTPUT_TIMEZONE)
        zone_key = None
    zones = []
    for text, key in ((input_text, zone_key or TIMESTAMP_INPUT_TIMEZONE),
                      (output_text, zone_key or TIMESTAMP_OUTPUT_TIMEZONE)):
        try:
            zones.append(joda.resolve_zone(text))
        except joda.ZoneError:
            raise ConfigError(
                f"{where}: {key}={text!r} is not a time zone Java knows (Java would silently use GMT). Use an "
                "IANA id such as 'UTC', 'Asia/Shanghai', or a fixed offset such as 'GMT+8:00'.") from None
    return TimestampOptions(ts_type, unit, input_formats, zones[0], output_format, zones[1], consistent)


def _resolve_type(options: dict, record_key_fields: list[str], partition_raw: str,
                  table_name: str | None) -> tuple[str, str]:
    """(key generator type, java class) from the class option, the type option, or Hudi's inference."""
    where = _table(table_name)
    cls = _first(options, KEYGENERATOR_CLASS, TABLE_KEYGENERATOR_CLASS)
    cls = cls.strip() if cls else None
    if cls == SQL_KEYGEN_CLASS:
        cls = (_first(options, SQL_ORIGIN_KEYGEN_CLASS) or "").strip() or None
    if cls:
        full = cls if "." in cls else _PKG + cls
        if full not in CLASS_TO_TYPE:
            raise ConfigError(
                f"{where}: key generator class '{cls}' is not supported by pyhudi. Use one of "
                f"{', '.join(sorted(TYPE_TO_CLASS.values()))} (or set {KEYGENERATOR_TYPE}).")
        return CLASS_TO_TYPE[full], full
    typ = _first(options, KEYGENERATOR_TYPE, TABLE_KEYGENERATOR_TYPE)
    if typ and typ.strip():
        name = typ.strip().upper()
        avro = name.endswith("_AVRO")
        base = name[:-5] if avro else name
        if base not in TYPE_TO_CLASS:
            raise ConfigError(f"{where}: {KEYGENERATOR_TYPE}={typ!r} is not one of "
                              f"{', '.join(TYPE_TO_CLASS)}.")
        return base, (_AVRO_CLASSES if avro else TYPE_TO_CLASS)[base]
    # KeyGenUtils.inferKeyGeneratorType
    partition_fields = [p.strip() for p in partition_raw.split(",")] if partition_raw.strip() else []
    if not partition_fields:
        inferred = NON_PARTITION
    elif ":" in partition_fields[0]:
        inferred = CUSTOM
    elif len(partition_fields) == 1:
        inferred = COMPLEX if len(record_key_fields) > 1 else SIMPLE
    else:
        inferred = COMPLEX
    return inferred, TYPE_TO_CLASS[inferred]


def build_key_generator(options: dict[str, str], table_name: str | None = None) -> KeyGenerator:
    """A key generator configured from Hudi datasource options (or ``hoodie.properties`` keys).

    Reads ``hoodie.datasource.write.{recordkey.field, partitionpath.field, keygenerator.class, keygenerator.type,
    hive_style_partitioning, partitionpath.urlencode, keygenerator.consistent.logical.timestamp.enabled}``, the
    ``hoodie.keygen.timebased.*`` settings, ``hoodie.write.complex.keygen.new.encoding``, and falls back to the
    ``hoodie.table.{recordkey.fields, partition.fields, keygenerator.class, keygenerator.type}`` keys of
    ``hoodie.properties``. Without a class or type the generator is inferred as Hudi does: no partition field ->
    Nonpartitioned; ``field:type`` partition fields -> Custom; several record key or partition fields -> Complex;
    else Simple. Raises :class:`~pyhudi.errors.ConfigError` for inconsistent settings.
    """
    options = {k: v for k, v in (options or {}).items() if v is not None}
    where = _table(table_name)
    record_key_fields = _split_fields(_first(options, RECORDKEY_FIELD, TABLE_RECORDKEY_FIELDS))
    partition_raw = _first(options, PARTITIONPATH_FIELD, TABLE_PARTITION_FIELDS) or ""
    ktype, java_class = _resolve_type(options, record_key_fields, partition_raw, table_name)
    hive = _bool(options, HIVE_STYLE_PARTITIONING, False, table_name)
    encode = _bool(options, URL_ENCODE_PARTITIONING, False, table_name)
    consistent = _bool(options, CONSISTENT_LOGICAL_TIMESTAMP, False, table_name)
    new_encoding = COMPLEX_KEYGEN_NEW_ENCODING_DEFAULT
    for key in COMPLEX_KEYGEN_NEW_ENCODING_ALIASES:
        if key in options:
            new_encoding = _bool(options, key, COMPLEX_KEYGEN_NEW_ENCODING_DEFAULT, table_name)
            break
    partition_fields = _split_fields(partition_raw)
    class_name = java_class.rsplit(".", 1)[-1]

    if ktype in (SIMPLE, TIMESTAMP):
        if len(record_key_fields) > 1:
            raise ConfigError(
                f"{where}: {class_name} takes one record key field but {RECORDKEY_FIELD} lists "
                f"{len(record_key_fields)} ({', '.join(record_key_fields)}); use "
                f"org.apache.hudi.keygen.ComplexKeyGenerator (or CustomKeyGenerator) for composite keys.")
        if len(partition_fields) != 1:
            raise ConfigError(
                f"{where}: {class_name} takes exactly one partition field but {PARTITIONPATH_FIELD} lists "
                f"{len(partition_fields)}; use ComplexKeyGenerator for several fields, NonpartitionedKeyGenerator "
                f"for none.")
        if ":" in partition_fields[0]:
            raise ConfigError(f"{where}: partition field '{partition_fields[0]}' has a ':type' suffix, which only "
                              f"org.apache.hudi.keygen.CustomKeyGenerator understands.")
    if ktype == SIMPLE:
        parts = [_SimplePart(partition_fields[0])]
        mode = "simple"
    elif ktype == TIMESTAMP:
        parts = [_TimestampPart(partition_fields[0], _timestamp_options(options, consistent, table_name))]
        mode = "simple"
    elif ktype == COMPLEX:
        for field in partition_fields:
            if ":" in field:
                raise ConfigError(f"{where}: partition field '{field}' has a ':type' suffix, which only "
                                  f"org.apache.hudi.keygen.CustomKeyGenerator understands.")
        parts = [_SimplePart(f) for f in partition_fields]
        mode = "simple" if len(record_key_fields) == 1 and new_encoding else "composite"
    elif ktype == NON_PARTITION:
        parts = []
        mode = "simple" if len(record_key_fields) == 1 else "composite"
    elif ktype == GLOBAL_DELETE:
        parts = []
        mode = "composite"
    else:  # CUSTOM
        parts = []
        timestamp_options = None
        for field in partition_fields:
            name, sep, kind = field.partition(":")
            kind = kind.strip().upper()
            if not sep or not name.strip() or ":" in kind:
                raise ConfigError(
                    f"{where}: CustomKeyGenerator needs partition fields as field:type, e.g. "
                    f"'region:simple,ts:timestamp'; got '{field}' in {PARTITIONPATH_FIELD}.")
            if kind == "SIMPLE":
                parts.append(_SimplePart(name.strip()))
            elif kind == "TIMESTAMP":
                if timestamp_options is None:
                    timestamp_options = _timestamp_options(options, consistent, table_name)
                parts.append(_TimestampPart(name.strip(), timestamp_options))
            else:
                raise ConfigError(f"{where}: partition type '{kind}' in '{field}' is not SIMPLE or TIMESTAMP.")
        mode = "simple" if len(record_key_fields) == 1 else "composite"

    sql_parts: tuple[int, ...] = ()
    sql_count = 0
    if str(options.get(KEYGENERATOR_CLASS, "")).strip() == SQL_KEYGEN_CLASS and options.get(SQL_PARTITION_SCHEMA):
        schema = _ddl_fields(str(options[SQL_PARTITION_SCHEMA]))
        sql_count = len(schema)
        sql_parts = tuple(i for i, (_, typ) in enumerate(schema) if i < len(parts) and typ == "TIMESTAMP")
    return KeyGenerator(
        java_class=java_class, key_generator_type=ktype, record_key_fields=record_key_fields,
        record_key_mode=mode, parts=parts, hive_style_partitioning=hive, url_encode_partition_path=encode,
        consistent_logical_timestamp=consistent, table_name=table_name, sql_timestamp_parts=sql_parts,
        sql_partition_count=sql_count)


def _ddl_fields(ddl: str) -> list[tuple[str, str]]:
    """``(name, TYPE)`` of a Spark DDL field list such as ```ts` TIMESTAMP, amount DECIMAL(10,2)``."""
    fields, depth, current = [], 0, []
    for ch in ddl + ",":
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            text = "".join(current).strip()
            current = []
            if text:
                if text.startswith("`"):
                    end = text.index("`", 1)
                    name, rest = text[1:end], text[end + 1:]
                else:
                    name, _, rest = text.partition(" ")
                fields.append((name, rest.strip().split(" ")[0].split("(")[0].upper().rstrip(":")))
            continue
        current.append(ch)
    return fields


def auto_record_keys(instant_time: str, partition_id: int, first_row: int, count: int) -> pa.StringArray:
    """Record keys Hudi generates when no record key field is set: ``<instant>_<sparkPartitionId>_<rowId>``."""
    ids = pa.array(np.arange(first_row, first_row + count, dtype=np.int64)).cast(pa.string())
    return pc.binary_join_element_wise(pa.scalar(f"{instant_time}_{partition_id}_"), ids, "")

