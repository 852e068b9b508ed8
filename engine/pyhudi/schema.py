"""Schemas: Arrow <-> Hudi's Avro writer schema, the storage (parquet) form, and write-time evolution.

Hudi keeps a table's schema as **Avro JSON**: every completed commit carries the writer schema (without the
five meta columns) in ``extraMetadata.schema``, and ``hoodie.properties`` keeps the schema of CREATE TABLE in
``hoodie.table.create.schema``.  Java Hudi derives both from a Spark ``StructType`` with Spark's
``SchemaConverters.toAvroType`` (Hudi keeps a copy of it) and, for commits, Hudi's
``AvroConversionUtils.convertStructTypeToAvroSchema``, which moves ``null`` first in every union and gives
nullable fields ``"default": null``.  pyhudi receives Spark data as Arrow, so this module reproduces those
conversions from Arrow types, byte for byte:

* top-level record ``<table>_record`` in namespace ``hoodie.<table>`` (the table name sanitised as by
  ``HoodieAvroUtils.sanitizeName``);
* a nested struct becomes a record named after its field, in namespace ``<full name of the parent record>``;
  array elements and map values reuse the field's name and namespace;
* ``decimal(p, s)`` becomes ``fixed`` named ``fixed`` in namespace ``<parent full name>.<field>``, of the fewest
  bytes that hold ``p`` digits, with ``logicalType: decimal``;
* nullable types are ``["null", T]`` (commits) or ``[T, "null"]`` (create schema);
* byte/short -> ``int``; date -> ``int``/``date``; timestamp -> ``long``/``timestamp-micros``;
  timestamp without time zone (Spark ``TIMESTAMP_NTZ``) -> ``long``/``local-timestamp-micros``.

Arrow -> Spark type correspondence used throughout (it is what Spark's own Arrow conversion produces):
int8 TINYINT, int16 SMALLINT, int32 INT, int64 BIGINT, float32 FLOAT, float64 DOUBLE, (large_)string STRING,
(large_)binary BINARY, decimal DECIMAL, date32 DATE, timestamp with tz TIMESTAMP, timestamp without tz
TIMESTAMP_NTZ, list ARRAY, map MAP, struct STRUCT.

The *storage schema* is the Arrow schema of the data as parquet-avro stores it (what a reader gets back from a
Java-written base file): int8/int16 -> int32, every timestamp -> microseconds (UTC when it has a zone),
large/view strings and binaries -> string/binary, date64 -> date32, decimal -> decimal128, lists with an
``element`` item, maps with a non-null string key.  pyhudi writes base files in this form.

Known differences with Java-written files, on purpose: parquet-avro writes lists in the legacy 2-level layout
(repeated ``array`` group, elements never null), pyhudi (like Spark's own writer) writes the standard 3-level
layout, which keeps the element's nullability; every Hudi reader reads both.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.errors import SchemaError

__all__ = [
    "META_COLUMNS",
    "arrow_to_avro",
    "avro_to_arrow",
    "storage_schema",
    "to_storage",
    "with_meta_columns",
    "check_compatible",
    "spark_ddl",
    "create_table_avro",
    "avro_json",
    "with_meta_fields_avro",
    "record_name_and_namespace",
    "sanitize_avro_name",
    "decimal_fixed_size",
    "spark_type_name",
]

META_COLUMNS = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
]

_META_SET = frozenset(META_COLUMNS)
_AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_COMMENT = b"comment"
MAX_DECIMAL_PRECISION = 38  # Spark's DecimalType.MAX_PRECISION


# --------------------------------------------------------------------------------------------------------------
# names


def sanitize_avro_name(name: str) -> str:
    """Make ``name`` a legal Avro name the way Hudi's ``HoodieAvroUtils.sanitizeName`` does.

    An illegal first character (the first match of ``[^A-Za-z_]``) becomes ``__``, then every remaining
    character outside ``[A-Za-z0-9_]`` becomes ``__``.
    """
    if not name:
        raise SchemaError("a Hudi table needs a non-empty name to derive its Avro record name; fix: name the table")
    if re.match(r"[^A-Za-z_]", name[0]):
        name = re.sub(r"[^A-Za-z_]", "__", name, count=1)
    return re.sub(r"[^A-Za-z0-9_]", "__", name)


def record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """``("<table>_record", "hoodie.<table>")``: the top-level Avro record name and namespace Hudi uses."""
    name = sanitize_avro_name(table_name)
    return f"{name}_record", f"hoodie.{name}"


def decimal_fixed_size(precision: int) -> int:
    """Fewest bytes of a two's-complement ``fixed`` holding ``precision`` decimal digits (Spark's
    ``Decimal.minBytesForPrecision``)."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


# --------------------------------------------------------------------------------------------------------------
# helpers: Spark type names, error text


def _is(pred: str, t: pa.DataType) -> bool:
    fn = getattr(pa.types, pred, None)
    return bool(fn and fn(t))


def _is_string(t: pa.DataType) -> bool:
    return _is("is_string", t) or _is("is_large_string", t) or _is("is_string_view", t)


def _is_binary(t: pa.DataType) -> bool:
    return (_is("is_binary", t) or _is("is_large_binary", t) or _is("is_binary_view", t)
            or _is("is_fixed_size_binary", t))


def _is_listlike(t: pa.DataType) -> bool:
    return (_is("is_list", t) or _is("is_large_list", t) or _is("is_fixed_size_list", t)
            or _is("is_list_view", t) or _is("is_large_list_view", t))


def _is_decimal(t: pa.DataType) -> bool:
    return _is("is_decimal", t)


def spark_type_name(t: pa.DataType) -> str:
    """The Spark SQL type (DDL spelling) Spark uses for an Arrow type, e.g. ``BIGINT`` or ``ARRAY<STRING>``."""
    if isinstance(t, pa.DictionaryType):
        return spark_type_name(t.value_type)
    if isinstance(t, pa.ExtensionType):
        return spark_type_name(t.storage_type)
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int8(t):
        return "TINYINT"
    if pa.types.is_int16(t) or pa.types.is_uint8(t):
        return "SMALLINT"
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return "INT"
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return "BIGINT"
    if pa.types.is_uint64(t):
        return "DECIMAL(20,0)"
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if _is_string(t):
        return "STRING"
    if _is_binary(t):
        return "BINARY"
    if _is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.tz else "TIMESTAMP_NTZ"
    if pa.types.is_null(t):
        return "VOID"
    if _is_listlike(t):
        return f"ARRAY<{spark_type_name(t.value_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{spark_type_name(t.key_type)}, {spark_type_name(t.item_type)}>"
    if pa.types.is_struct(t):
        inner = ", ".join(_ddl_field(t.field(i), struct=True) for i in range(t.num_fields))
        return f"STRUCT<{inner}>"
    raise SchemaError(f"Arrow type {t} has no Spark SQL equivalent; fix: cast the column to a Spark type "
                      f"(e.g. STRING or BIGINT)")


def _describe(t: pa.DataType) -> str:
    try:
        spark = spark_type_name(t)
    except SchemaError:
        return f"Arrow {t}"
    return f"{spark} (Arrow {t})"


def _table_prefix(table_name: str | None) -> str:
    return f"table `{table_name}`: " if table_name else ""


def _unsupported(t: pa.DataType, where: str, table_name: str | None) -> SchemaError:
    if pa.types.is_uint64(t):
        fix = f"cast `{where}` to BIGINT (int64) or DECIMAL(20,0)"
        why = "Hudi (Avro) has no unsigned 64-bit integer"
    elif pa.types.is_time(t):
        fix = f"cast `{where}` to STRING, or to an INT/BIGINT of seconds or microseconds since midnight"
        why = "Spark and Hudi have no TIME type"
    elif pa.types.is_null(t):
        fix = f"give `{where}` a type, e.g. CAST(NULL AS STRING) AS `{where}`"
        why = "a column of type VOID (all nulls, no type) cannot be stored in parquet or Avro"
    elif _is_decimal(t):
        fix = (f"cast `{where}` to DECIMAL({MAX_DECIMAL_PRECISION},{min(t.scale, MAX_DECIMAL_PRECISION)}) "
               "or to STRING")
        why = f"Spark decimals hold at most {MAX_DECIMAL_PRECISION} digits (and no negative scale)"
    elif pa.types.is_duration(t) or pa.types.is_interval(t):
        fix = f"cast `{where}` to BIGINT (e.g. microseconds) or STRING"
        why = "Hudi (Avro) has no interval type"
    elif pa.types.is_map(t):
        fix = f"cast the keys of `{where}` to STRING, or store it as an ARRAY of STRUCT<key, value>"
        why = f"Avro maps have string keys, not {spark_type_name(t.key_type) if _safe_spark(t.key_type) else t.key_type}"
    else:
        fix = f"cast `{where}` to a supported type (STRING, BIGINT, DOUBLE, DECIMAL, ...)"
        why = "Hudi cannot store this type"
    return SchemaError(f"{_table_prefix(table_name)}column `{where}` has type {_describe(t)}: {why}. Fix: {fix}.")


def _safe_spark(t: pa.DataType) -> bool:
    try:
        spark_type_name(t)
        return True
    except SchemaError:
        return False


# --------------------------------------------------------------------------------------------------------------
# storage schema


def _storage_field(f: pa.Field, where: str, table_name: str | None) -> pa.Field:
    return pa.field(f.name, _storage_type(f.type, where, table_name), nullable=f.nullable, metadata=f.metadata)


def _storage_type(t: pa.DataType, where: str, table_name: str | None) -> pa.DataType:
    if isinstance(t, pa.DictionaryType):
        return _storage_type(t.value_type, where, table_name)
    if isinstance(t, pa.ExtensionType):
        return _storage_type(t.storage_type, where, table_name)
    if pa.types.is_boolean(t):
        return t
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or pa.types.is_uint8(t) \
            or pa.types.is_uint16(t):
        return pa.int32()
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return pa.int64()
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return pa.float32()
    if pa.types.is_float64(t):
        return pa.float64()
    if _is_string(t):
        return pa.string()
    if _is_binary(t):
        return pa.binary()
    if _is_decimal(t):
        if t.precision > MAX_DECIMAL_PRECISION or t.scale < 0 or t.scale > t.precision:
            raise _unsupported(t, where, table_name)
        return pa.decimal128(t.precision, t.scale)
    if pa.types.is_date(t):
        return pa.date32()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC" if t.tz else None)
    if _is_listlike(t):
        vf = t.value_field
        return pa.list_(pa.field("element", _storage_type(vf.type, f"{where}.element", table_name),
                                 nullable=vf.nullable, metadata=vf.metadata))
    if pa.types.is_map(t):
        key = _storage_type(t.key_type, f"{where}.key", table_name)
        if key != pa.string():
            raise _unsupported(t, where, table_name)
        item_field = t.item_field
        return pa.map_(pa.field("key", pa.string(), nullable=False),
                       pa.field("value", _storage_type(item_field.type, f"{where}.value", table_name),
                                nullable=item_field.nullable, metadata=item_field.metadata))
    if pa.types.is_struct(t):
        return pa.struct([_storage_field(t.field(i), f"{where}.{t.field(i).name}", table_name)
                          for i in range(t.num_fields)])
    raise _unsupported(t, where, table_name)


def storage_schema(schema: pa.Schema, *, table_name: str | None = None) -> pa.Schema:
    """The Arrow schema parquet-avro (Java Hudi) would store for data of ``schema``.

    int8/int16/uint8/uint16 -> int32, uint32 -> int64, float16 -> float32, large/view string -> string,
    large/view/fixed-size binary -> binary, decimal -> decimal128, date64 -> date32, any timestamp ->
    microseconds (``tz="UTC"`` when it had a zone, none when it had none: Spark's TIMESTAMP_NTZ),
    dictionary -> its values, list-likes -> ``list<element>``, maps -> ``map<string not null, value>``.
    Names, nullability and field metadata are kept; schema-level metadata is dropped.
    Raises SchemaError for types Hudi cannot store (uint64, time, duration, null, non-string map keys,
    decimals over 38 digits).
    """
    return pa.schema([_storage_field(f, f.name, table_name) for f in schema])


def with_meta_columns(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the five ``_hoodie_*`` string meta columns first (replacing any already present)."""
    fields = [pa.field(name, pa.string(), nullable=True) for name in META_COLUMNS]
    fields += [f for f in schema if f.name not in _META_SET]
    return pa.schema(fields, metadata=schema.metadata)


def _data_fields(schema: pa.Schema) -> list[pa.Field]:
    return [f for f in schema if f.name not in _META_SET]


# --------------------------------------------------------------------------------------------------------------
# Arrow -> Avro


def _check_names(fields: Iterable[pa.Field], where: str, table_name: str | None) -> None:
    seen: dict[str, str] = {}
    for f in fields:
        path = f"{where}.{f.name}" if where else f.name
        if not _AVRO_NAME.match(f.name):
            raise SchemaError(
                f"{_table_prefix(table_name)}column `{path}` is not a valid Avro name (letters, digits and _ only, "
                f"not starting with a digit), so Hudi cannot store it. Fix: rename it, e.g. "
                f"`{path}` AS {sanitize_avro_name(f.name)}.")
        low = f.name.lower()
        if low in seen:
            raise SchemaError(
                f"{_table_prefix(table_name)}columns `{seen[low]}` and `{f.name}`{' in `' + where + '`' if where else ''}"
                f" differ only in case; Spark and Hudi treat them as the same column. Fix: rename one of them.")
        seen[low] = f.name


class _AvroBuilder:
    """Spark's ``SchemaConverters.toAvroType`` over storage-normalised Arrow types; ``hudi`` adds Hudi's
    ``getAvroSchemaWithDefaults`` (null first in unions, ``"default": null``)."""

    def __init__(self, hudi: bool, table_name: str | None):
        self.hudi = hudi
        self.table_name = table_name

    def nullable(self, schema: Any) -> Any:
        return ["null", schema] if self.hudi else [schema, "null"]

    def field(self, f: pa.Field, namespace: str, where: str) -> dict:
        avro_type = self.type(f.type, f.nullable, f.name, namespace, where)
        out: dict[str, Any] = {"name": f.name, "type": avro_type}
        comment = (f.metadata or {}).get(_COMMENT)
        if comment is not None:
            out["doc"] = comment.decode("utf-8")
        if self.hudi and isinstance(avro_type, list) and "null" in avro_type:
            out["default"] = None
        return out

    def record(self, fields: list[pa.Field], name: str, namespace: str, where: str) -> dict:
        _check_names(fields, where, self.table_name)
        child_ns = f"{namespace}.{name}" if namespace else name
        out: dict[str, Any] = {"type": "record", "name": name}
        if namespace:
            out["namespace"] = namespace
        out["fields"] = [self.field(f, child_ns, f"{where}.{f.name}" if where else f.name) for f in fields]
        return out

    def type(self, t: pa.DataType, nullable: bool, name: str, namespace: str, where: str) -> Any:
        if pa.types.is_boolean(t):
            schema: Any = "boolean"
        elif pa.types.is_int32(t):
            schema = "int"
        elif pa.types.is_int64(t):
            schema = "long"
        elif pa.types.is_float32(t):
            schema = "float"
        elif pa.types.is_float64(t):
            schema = "double"
        elif pa.types.is_string(t):
            schema = "string"
        elif pa.types.is_binary(t):
            schema = "bytes"
        elif pa.types.is_date32(t):
            schema = {"type": "int", "logicalType": "date"}
        elif pa.types.is_timestamp(t):
            schema = {"type": "long", "logicalType": "timestamp-micros" if t.tz else "local-timestamp-micros"}
        elif _is_decimal(t):
            schema = {"type": "fixed", "name": "fixed",
                      "namespace": f"{namespace}.{name}" if namespace else name,
                      "size": decimal_fixed_size(t.precision),
                      "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
        elif pa.types.is_list(t):
            vf = t.value_field
            schema = {"type": "array", "items": self.type(vf.type, vf.nullable, name, namespace, where)}
        elif pa.types.is_map(t):
            itf = t.item_field
            schema = {"type": "map", "values": self.type(itf.type, itf.nullable, name, namespace, where)}
        elif pa.types.is_struct(t):
            schema = self.record([t.field(i) for i in range(t.num_fields)], name, namespace, where)
        else:  # storage_type() rejected everything else already
            raise _unsupported(t, where, self.table_name)
        return self.nullable(schema) if nullable else schema


def _finalize_names(schema: Any, table_name: str | None) -> Any:
    """Apply Avro's JSON rules for named types (as Java's ``Schema.toString`` does): a namespace equal to
    the enclosing one is omitted, and a named type defined a second time is written as a reference."""
    defined: dict[str, Any] = {}

    def walk(s: Any, space: str | None) -> Any:
        if isinstance(s, list):
            return [walk(x, space) for x in s]
        if not isinstance(s, dict):
            return s
        kind = s.get("type")
        if kind in ("record", "fixed", "enum"):
            ns = s.get("namespace") or None
            full = f"{ns}.{s['name']}" if ns else s["name"]
            if full in defined:
                if defined[full] != s:
                    raise SchemaError(
                        f"{_table_prefix(table_name)}two different Avro types would both be named `{full}`; "
                        "fix: rename one of the nested columns")
                return s["name"] if ns == space else full
            defined[full] = s
            out = {}
            for k, v in s.items():
                if k == "namespace":
                    if (v or None) != space:
                        out[k] = v
                elif k == "fields":
                    out[k] = [{fk: (walk(fv, ns) if fk == "type" else fv) for fk, fv in f.items()} for f in v]
                else:
                    out[k] = v
            return out
        if kind == "array":
            return {**s, "items": walk(s["items"], space)}
        if kind == "map":
            return {**s, "values": walk(s["values"], space)}
        return s

    return walk(schema, None)


def _to_avro(schema: pa.Schema, table_name: str, hudi: bool) -> dict:
    fields = [_storage_field(f, f.name, table_name) for f in _data_fields(schema)]
    name, namespace = record_name_and_namespace(table_name)
    record = _AvroBuilder(hudi, table_name).record(fields, name, namespace, "")
    return _finalize_names(record, table_name)


def arrow_to_avro(schema: pa.Schema, table_name: str) -> dict:
    """The Hudi writer schema (as stored in a commit's ``extraMetadata.schema``) for data of ``schema``.

    Meta columns are left out; other columns keep their order. Types are normalised as by
    :func:`storage_schema` first. A field's Arrow metadata ``comment`` becomes its Avro ``doc``.
    Serialise with :func:`avro_json` to get the exact string Java Hudi writes.
    """
    return _to_avro(schema, table_name, hudi=True)


def create_table_avro(schema: pa.Schema, table_name: str) -> dict:
    """The schema Hudi's Spark SQL CREATE TABLE stores in ``hoodie.table.create.schema``: Spark's plain
    conversion, i.e. unions ``[T, "null"]`` and no defaults."""
    return _to_avro(schema, table_name, hudi=False)


def avro_json(avro: dict | list | str) -> str:
    """Compact JSON as Java's ``Schema.toString()`` writes it (no spaces, non-ASCII kept)."""
    return json.dumps(avro, separators=(",", ":"), ensure_ascii=False)


def with_meta_fields_avro(avro: dict) -> dict:
    """The writer schema with the five meta fields first, as Hudi writes it into a base file's
    ``parquet.avro.schema`` footer and into log blocks: ``{"name": ..., "type": ["null", "string"],
    "doc": "", "default": null}``."""
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_COLUMNS]
    out = {k: v for k, v in avro.items() if k != "fields"}
    out["fields"] = meta + [f for f in avro["fields"] if f["name"] not in _META_SET]
    return out


# --------------------------------------------------------------------------------------------------------------
# Avro -> Arrow


_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


class _ArrowBuilder:
    def __init__(self) -> None:
        self.named: dict[str, Any] = {}      # full name -> Avro definition
        self.converting: set[str] = set()     # records being converted (recursion guard)

    @staticmethod
    def full_name(s: dict, space: str | None) -> tuple[str, str | None]:
        name = s["name"]
        if "." in name:
            return name, name.rsplit(".", 1)[0]
        ns = s.get("namespace", space)
        ns = ns or None
        return (f"{ns}.{name}" if ns else name), ns

    def convert(self, s: Any, space: str | None) -> tuple[pa.DataType, bool]:
        """(Arrow type, nullable) of Avro schema ``s``."""
        if isinstance(s, list):
            return self.union(s, space)
        if isinstance(s, str):
            if s in _PRIMITIVES:
                return self.primitive(s, None, {}), s == "null"
            ref = s if "." in s or not space else f"{space}.{s}"
            target = self.named.get(ref) or self.named.get(s)
            if target is None:
                raise SchemaError(f"Avro schema refers to an undefined type `{s}`; fix: repair the schema JSON")
            definition, def_space = target
            return self.convert(definition, def_space)
        if not isinstance(s, dict):
            raise SchemaError(f"not an Avro schema: {s!r}")
        kind = s.get("type")
        if isinstance(kind, (dict, list)):
            return self.convert(kind, space)
        logical = s.get("logicalType")
        if kind in ("record", "error"):
            full, ns = self.full_name(s, space)
            if full in self.converting:
                raise SchemaError(f"Avro record `{full}` refers to itself; Arrow and Spark cannot represent "
                                  "recursive types. Fix: flatten the recursive field into a string (e.g. JSON)")
            self.named[full] = (s, space)
            self.converting.add(full)
            try:
                fields = [self.field(f, ns) for f in s.get("fields", [])]
            finally:
                self.converting.discard(full)
            return pa.struct(fields), False
        if kind == "enum":
            full, _ = self.full_name(s, space)
            self.named[full] = (s, space)
            return pa.string(), False
        if kind == "fixed":
            full, _ = self.full_name(s, space)
            self.named[full] = (s, space)
            if logical == "decimal":
                return self.decimal(s), False
            return pa.binary(s["size"]), False
        if kind == "array":
            item, item_null = self.convert(s["items"], space)
            return pa.list_(pa.field("element", item, nullable=item_null)), False
        if kind == "map":
            value, value_null = self.convert(s["values"], space)
            return pa.map_(pa.field("key", pa.string(), nullable=False),
                           pa.field("value", value, nullable=value_null)), False
        if kind in _PRIMITIVES:
            return self.primitive(kind, logical, s), kind == "null"
        raise SchemaError(f"unknown Avro type {kind!r}; fix: repair the schema JSON")

    @staticmethod
    def decimal(s: dict) -> pa.DataType:
        precision, scale = int(s["precision"]), int(s.get("scale", 0))
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)

    def primitive(self, kind: str, logical: str | None, s: dict) -> pa.DataType:
        if kind == "null":
            return pa.null()
        if kind == "boolean":
            return pa.bool_()
        if kind == "int":
            if logical == "date":
                return pa.date32()
            if logical == "time-millis":
                return pa.time32("ms")
            return pa.int32()
        if kind == "long":
            units = {"timestamp-millis": ("ms", "UTC"), "timestamp-micros": ("us", "UTC"),
                     "timestamp-nanos": ("ns", "UTC"), "local-timestamp-millis": ("ms", None),
                     "local-timestamp-micros": ("us", None), "local-timestamp-nanos": ("ns", None)}
            if logical in units:
                unit, tz = units[logical]
                return pa.timestamp(unit, tz=tz)
            if logical == "time-micros":
                return pa.time64("us")
            return pa.int64()
        if kind == "float":
            return pa.float32()
        if kind == "double":
            return pa.float64()
        if kind == "bytes":
            return self.decimal(s) if logical == "decimal" else pa.binary()
        return pa.string()  # string (uuid and other logical types included)

    def union(self, members: list, space: str | None) -> tuple[pa.DataType, bool]:
        def is_null(m: Any) -> bool:
            return m == "null" or (isinstance(m, dict) and m.get("type") == "null")

        rest = [m for m in members if not is_null(m)]
        has_null = len(rest) != len(members)
        if not rest:
            return pa.null(), True
        if len(rest) == 1:
            t, nullable = self.convert(rest[0], space)
            return t, nullable or has_null
        kinds = {(m if isinstance(m, str) else m.get("type")) for m in rest}
        if len(rest) == 2 and kinds == {"int", "long"} and all(
                isinstance(m, str) or "logicalType" not in m for m in rest):
            return pa.int64(), has_null
        if len(rest) == 2 and kinds == {"float", "double"}:
            return pa.float64(), has_null
        # Spark: other unions become a struct of member0..memberN, all nullable
        fields = [pa.field(f"member{i}", self.convert(m, space)[0], nullable=True) for i, m in enumerate(rest)]
        return pa.struct(fields), has_null

    def field(self, f: dict, space: str | None) -> pa.Field:
        t, nullable = self.convert(f["type"], space)
        doc = f.get("doc")
        metadata = {_COMMENT: doc.encode("utf-8")} if doc else None
        return pa.field(f["name"], t, nullable=nullable, metadata=metadata)


def avro_to_arrow(avro: dict | str) -> pa.Schema:
    """The Arrow schema of records of Avro record schema ``avro`` (dict or JSON text), as a reader of a
    Hudi base file gets them: ``["null", T]`` -> nullable T; fixed/bytes decimal -> decimal128;
    date -> date32; timestamp-micros/millis -> timestamp(us/ms, tz="UTC"); local-timestamp-* -> timestamp
    without zone; enum -> string; fixed -> fixed_size_binary; array -> ``list<element>``; map ->
    ``map<string, value>``; other unions as Spark reads them (int|long -> int64, float|double -> float64,
    otherwise a struct of ``member0..N``). A field's ``doc`` becomes Arrow field metadata ``comment``.
    Meta columns, when the schema has them, are kept.
    """
    if isinstance(avro, (str, bytes, bytearray)):
        try:
            avro = json.loads(avro)
        except ValueError as exc:
            raise SchemaError(f"the Avro schema is not valid JSON ({exc}); fix: repair the schema text") from exc
    builder = _ArrowBuilder()
    t, _ = builder.convert(avro, None)
    if not pa.types.is_struct(t):
        raise SchemaError(f"a Hudi table schema must be an Avro record, not {avro!r}; fix: repair the schema")
    return pa.schema([t.field(i) for i in range(t.num_fields)])


# --------------------------------------------------------------------------------------------------------------
# casting data into a storage schema


def _lookup(names: list[str], name: str) -> int | None:
    try:
        return names.index(name)
    except ValueError:
        pass
    low = name.lower()
    hits = [i for i, n in enumerate(names) if n.lower() == low]
    return hits[0] if len(hits) == 1 else None


def _cast_error(arr_type: pa.DataType, target: pa.DataType, where: str, table_name: str | None,
                exc: Exception) -> SchemaError:
    return SchemaError(
        f"{_table_prefix(table_name)}column `{where}` of type {_describe(arr_type)} cannot be converted to "
        f"{_describe(target)}: {exc}. Fix: cast `{where}` to {spark_type_name(target) if _safe_spark(target) else target} "
        "in the query, or clean the values that do not convert.")


def _null_mask(arr: pa.Array) -> pa.Array | None:
    return arr.is_null() if arr.null_count else None


def _check_not_null(arr: pa.Array, nullable: bool, outer_null: pa.Array | None, where: str,
                    table_name: str | None) -> None:
    """Raise if a NOT NULL column holds nulls (ignoring rows where an enclosing struct is itself null)."""
    if nullable or not arr.null_count:
        return
    count = arr.null_count
    if outer_null is not None:
        count = pc.sum(pc.and_(arr.is_null(), pc.invert(outer_null))).as_py() or 0
    if count:
        raise SchemaError(
            f"{_table_prefix(table_name)}column `{where}` is NOT NULL in the table schema but the batch has "
            f"{count} null value(s). Fix: filter or fill the nulls (e.g. COALESCE) before writing.")


def _rebase(offsets: pa.Array) -> tuple[pa.Array, int, int]:
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return offsets, start, end


def _convert(arr: pa.Array, target: pa.DataType, nullable: bool, where: str, table_name: str | None,
             outer_null: pa.Array | None = None) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage
    if isinstance(arr.type, pa.DictionaryType):
        arr = arr.dictionary_decode()
    _check_not_null(arr, nullable, outer_null, where, table_name)
    if arr.type == target:
        return arr
    src = arr.type
    if pa.types.is_struct(target):
        if not pa.types.is_struct(src):
            raise _cast_error(src, target, where, table_name, "not a struct")
        names = [src.field(i).name for i in range(src.num_fields)]
        own_null = _null_mask(arr)
        if own_null is None:
            child_outer = outer_null
        elif outer_null is None:
            child_outer = own_null
        else:
            child_outer = pc.or_(own_null, outer_null)
        children = []
        for i in range(target.num_fields):
            tf = target.field(i)
            idx = _lookup(names, tf.name)
            path = f"{where}.{tf.name}"
            if idx is None:
                if not tf.nullable:
                    raise SchemaError(f"{_table_prefix(table_name)}the batch has no field `{path}`, which is "
                                      "NOT NULL in the table. Fix: add it to the batch.")
                children.append(pa.nulls(len(arr), tf.type))
            else:
                children.append(_convert(arr.field(idx), tf.type, tf.nullable, path, table_name, child_outer))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=own_null)
    if pa.types.is_list(target):
        if not _is_listlike(src):
            raise _cast_error(src, target, where, table_name, "not a list")
        if not pa.types.is_list(src):
            try:
                arr = arr.cast(pa.list_(src.value_field))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise _cast_error(src, target, where, table_name, exc) from exc
        offsets, start, end = _rebase(arr.offsets)
        vf = target.value_field
        values = _convert(arr.values.slice(start, end - start), vf.type, vf.nullable, f"{where}.element",
                          table_name)
        return pa.ListArray.from_arrays(offsets, values, type=target, mask=_null_mask(arr))
    if pa.types.is_map(target):
        if not pa.types.is_map(src):
            raise _cast_error(src, target, where, table_name, "not a map")
        offsets, start, end = _rebase(arr.offsets)
        entries = arr.values.slice(start, end - start)
        keys = _convert(entries.field(0), target.key_type, False, f"{where}.key", table_name)
        itf = target.item_field
        items = _convert(entries.field(1), itf.type, itf.nullable, f"{where}.value", table_name)
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=_null_mask(arr))
    return _cast_scalar_type(arr, target, where, table_name)


def _cast_scalar_type(arr: pa.Array, target: pa.DataType, where: str, table_name: str | None) -> pa.Array:
    src = arr.type
    try:
        if pa.types.is_timestamp(src) and pa.types.is_timestamp(target):
            # truncating nanoseconds to microseconds is what parquet-avro (timestamp-micros) does
            return arr.cast(target, safe=False)
        if pa.types.is_floating(src) and _is_decimal(target):
            return pc.round(arr, ndigits=target.scale).cast(target, safe=False) if len(arr) else arr.cast(target)
        if pa.types.is_null(src):
            return pa.nulls(len(arr), target)
        if pa.types.is_integer(src) and _is_decimal(target):
            # Arrow wants a decimal wide enough for every integer of the type; go through one, then narrow
            # with a value check (a value that does not fit raises, as it does in Hudi)
            digits = 19 if src.bit_width == 64 else 10
            wide = digits + target.scale
            mid = pa.decimal128(wide, target.scale) if wide <= 38 else pa.decimal256(wide, target.scale)
            return arr.cast(mid).cast(target)
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise _cast_error(src, target, where, table_name, exc) from exc


def to_storage(table_or_batch: pa.Table | pa.RecordBatch, target: pa.Schema, *,
               table_name: str | None = None) -> pa.Table | pa.RecordBatch:
    """Cast, reorder and complete ``table_or_batch`` into the storage schema ``target``.

    Columns (and nested struct fields) are matched by name, exactly first, then case-insensitively as Spark
    does; columns the target lacks are dropped; target columns the data lacks are filled with nulls when
    nullable (SchemaError otherwise). Values are cast to the target types (int8 -> int32, ns -> us
    timestamps, int -> long or string promotions, ...); a failed cast, or nulls in a NOT NULL column, raise
    SchemaError naming the column. Returns the same kind (Table or RecordBatch), with ``target``'s metadata.
    """
    is_batch = isinstance(table_or_batch, pa.RecordBatch)
    data = table_or_batch
    names = list(data.schema.names)
    n = data.num_rows
    columns = []
    for f in target:
        idx = _lookup(names, f.name)
        if idx is None:
            if not f.nullable:
                raise SchemaError(
                    f"{_table_prefix(table_name)}the batch has no column `{f.name}`, which is NOT NULL in the "
                    f"table ({_describe(f.type)}). Fix: add `{f.name}` to the batch.")
            col = pa.nulls(n, f.type)
            columns.append(col if is_batch else pa.chunked_array([col], type=f.type))
            continue
        col = data.column(idx)
        if is_batch:
            columns.append(_convert(col, f.type, f.nullable, f.name, table_name))
        else:
            chunks = [_convert(c, f.type, f.nullable, f.name, table_name) for c in col.chunks]
            columns.append(pa.chunked_array(chunks, type=f.type))
    if is_batch:
        return pa.RecordBatch.from_arrays(columns, schema=target)
    return pa.Table.from_arrays(columns, schema=target)


# --------------------------------------------------------------------------------------------------------------
# write-time schema evolution


def _kind(t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t):
        return "string"
    if pa.types.is_binary(t):
        return "bytes"
    if _is_decimal(t):
        return "decimal"
    if pa.types.is_date32(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    if pa.types.is_list(t):
        return "array"
    if pa.types.is_map(t):
        return "map"
    if pa.types.is_struct(t):
        return "struct"
    return str(t)


# (incoming kind, table kind): the batch's values are converted to the table's type, which stays.
# Hudi 0.14's canonicalisation (AvroSchemaEvolutionUtils.reconcileSchemaRequirements / the "Type Promotions"
# chart of the schema evolution docs).
_TO_TABLE_TYPE = {
    ("int", "long"), ("int", "float"), ("int", "double"), ("int", "string"), ("int", "decimal"),
    ("long", "float"), ("long", "double"), ("long", "string"), ("long", "decimal"),
    ("float", "double"), ("float", "string"), ("float", "decimal"),
    ("double", "string"), ("double", "decimal"),
    ("decimal", "string"),
    ("string", "bytes"), ("string", "decimal"), ("string", "date"),
    ("bytes", "string"),
    ("date", "string"),
}
# (incoming kind, table kind): the table's column widens to the batch's type (existing data is read with
# Avro's promotions, and Hudi's number -> string).
_TO_BATCH_TYPE = {
    ("long", "int"), ("float", "int"), ("double", "int"), ("string", "int"),
    ("float", "long"), ("double", "long"), ("string", "long"),
    ("double", "float"), ("string", "float"),
    ("string", "double"),
}


class _Evolution:
    def __init__(self, table_name: str, *, case_sensitive: bool, missing: str):
        self.table_name = table_name
        self.case_sensitive = case_sensitive
        self.missing = missing  # "error" | "fill" | "drop"

    def clash(self, where: str, table_t: pa.DataType, batch_t: pa.DataType, why: str = "") -> SchemaError:
        fix_type = spark_type_name(table_t) if _safe_spark(table_t) else str(table_t)
        return SchemaError(
            f"table `{self.table_name}`: column `{where}` is {_describe(table_t)} in the table but "
            f"{_describe(batch_t)} in the batch{': ' + why if why else ''}; Hudi cannot evolve the column "
            f"between these types. Fix: cast it in the query, e.g. CAST(`{where}` AS {fix_type}), or write the "
            "batch to a new table.")

    def match(self, names: list[str], name: str) -> int | None:
        if name in names:
            return names.index(name)
        if self.case_sensitive:
            return None
        low = name.lower()
        hits = [i for i, n in enumerate(names) if n.lower() == low]
        return hits[0] if len(hits) == 1 else None

    def check_duplicates(self, fields: list[pa.Field], where: str) -> None:
        seen: dict[str, str] = {}
        for f in fields:
            key = f.name if self.case_sensitive else f.name.lower()
            if key in seen:
                place = f" in `{where}`" if where else ""
                raise SchemaError(
                    f"table `{self.table_name}`: the batch has columns `{seen[key]}` and `{f.name}`{place}, which "
                    "Spark and Hudi treat as the same column. Fix: drop or rename one of them.")
            seen[key] = f.name

    def fields(self, table_fields: list[pa.Field], batch_fields: list[pa.Field], where: str) -> list[pa.Field]:
        self.check_duplicates(batch_fields, where)
        batch_names = [f.name for f in batch_fields]
        used: set[int] = set()
        out: list[pa.Field] = []
        missing: list[pa.Field] = []
        for tf in table_fields:
            idx = self.match(batch_names, tf.name)
            path = f"{where}.{tf.name}" if where else tf.name
            if idx is None:
                missing.append(tf)
                if self.missing == "fill":
                    if not tf.nullable:
                        raise SchemaError(
                            f"table `{self.table_name}`: the batch has no column `{path}`, which is NOT NULL in "
                            f"the table ({_describe(tf.type)}), so it cannot be filled with nulls. Fix: add "
                            f"`{path}` to the batch.")
                    out.append(tf)
                continue
            used.add(idx)
            bf = batch_fields[idx]
            merged = self.type(tf.type, bf.type, path)
            metadata = bf.metadata or tf.metadata
            out.append(pa.field(tf.name, merged, nullable=tf.nullable or bf.nullable, metadata=metadata))
        if missing and self.missing == "error":
            cols = ", ".join(f"`{(where + '.') if where else ''}{f.name}` ({spark_type_name(f.type)})"
                             for f in missing)
            raise SchemaError(
                f"table `{self.table_name}`: the batch lacks column(s) {cols} that the table has; Hudi does not "
                "drop columns on write. Fix: add them to the batch (e.g. CAST(NULL AS <type>) AS <column>), or "
                "set hoodie.write.set.null.for.missing.columns=true to fill them with nulls.")
        for i, bf in enumerate(batch_fields):
            if i in used:
                continue
            path = f"{where}.{bf.name}" if where else bf.name
            if not bf.nullable:
                raise SchemaError(
                    f"table `{self.table_name}`: the batch adds column `{path}` ({_describe(bf.type)}) as NOT NULL; "
                    "Hudi can only add nullable columns (existing rows have no value for it). Fix: make it "
                    "nullable in the query, or add it first with ALTER TABLE ... ADD COLUMNS.")
            out.append(bf)
        return out

    def type(self, table_t: pa.DataType, batch_t: pa.DataType, where: str) -> pa.DataType:
        tk, bk = _kind(table_t), _kind(batch_t)
        if tk == "struct" and bk == "struct":
            return pa.struct(self.fields([table_t.field(i) for i in range(table_t.num_fields)],
                                         [batch_t.field(i) for i in range(batch_t.num_fields)], where))
        if tk == "array" and bk == "array":
            tv, bv = table_t.value_field, batch_t.value_field
            element = self.type(tv.type, bv.type, f"{where}.element")
            return pa.list_(pa.field("element", element, nullable=tv.nullable or bv.nullable,
                                     metadata=bv.metadata or tv.metadata))
        if tk == "map" and bk == "map":
            ti, bi = table_t.item_field, batch_t.item_field
            value = self.type(ti.type, bi.type, f"{where}.value")
            return pa.map_(pa.field("key", pa.string(), nullable=False),
                           pa.field("value", value, nullable=ti.nullable or bi.nullable,
                                    metadata=bi.metadata or ti.metadata))
        if table_t == batch_t:
            return table_t
        if tk == "decimal" and bk == "decimal":
            if batch_t.scale <= table_t.scale and \
                    batch_t.precision - batch_t.scale <= table_t.precision - table_t.scale:
                return table_t
            raise self.clash(where, table_t, batch_t,
                             "the batch's decimal does not fit the table's precision/scale")
        if (bk, tk) in _TO_TABLE_TYPE:
            return table_t
        if (bk, tk) in _TO_BATCH_TYPE:
            return batch_t
        why = ""
        if {tk, bk} == {"timestamp", "timestamp_ntz"}:
            why = "TIMESTAMP (with time zone) and TIMESTAMP_NTZ (without) are different types"
        raise self.clash(where, table_t, batch_t, why)


def check_compatible(table_schema: pa.Schema, incoming: pa.Schema, table_name: str, *,
                     set_null_for_missing_columns: bool = False,
                     allow_column_drop: bool = False,
                     reconcile_schema: bool = False,
                     case_sensitive: bool = False) -> pa.Schema:
    """Apply Hudi's write-time schema evolution; return the storage schema to write the batch with.

    ``table_schema`` is the table's current schema and ``incoming`` the batch's (meta columns in either are
    ignored; both are normalised with :func:`storage_schema`). Columns match by name, case-insensitively
    like Spark unless ``case_sensitive``; the result keeps the table's names and order, with new columns
    at the end. Per column (recursively into structs, array elements and map values):

    * same type -> kept; a batch type Hudi promotes to the table's (int -> long/float/double/string/decimal,
      long -> float/double/string/decimal, float -> double/string/decimal, double -> string/decimal,
      decimal -> wider decimal/string, string -> bytes/decimal/date, bytes -> string, date -> string)
      -> the table's type (the batch is cast on write);
    * a batch type the table's type promotes to (int -> long/float/double/string, long -> float/double/string,
      float -> double/string, double -> string) -> the batch's type (the table's column widens);
    * anything else -> SchemaError naming the table, the column, both types and the fix.

    Nullability widens (nullable if either side is). New columns must be nullable. Columns the batch lacks
    raise SchemaError, as in Hudi by default, unless ``set_null_for_missing_columns``
    (``hoodie.write.set.null.for.missing.columns``) or ``reconcile_schema``
    (``hoodie.datasource.write.reconcile.schema``) is set, which keep them (filled with nulls by
    :func:`to_storage`), or ``allow_column_drop``
    (``hoodie.datasource.write.schema.allow.auto.evolution.column.drop``), which drops them from the result.
    """
    table_fields = [_storage_field(f, f.name, table_name) for f in _data_fields(table_schema)]
    batch_fields = [_storage_field(f, f.name, table_name) for f in _data_fields(incoming)]
    if allow_column_drop:
        missing = "drop"
    elif set_null_for_missing_columns or reconcile_schema:
        missing = "fill"
    else:
        missing = "error"
    evolution = _Evolution(table_name, case_sensitive=case_sensitive, missing=missing)
    return pa.schema(evolution.fields(table_fields, batch_fields, ""))


# --------------------------------------------------------------------------------------------------------------
# Spark DDL


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _ddl_field(f: pa.Field, struct: bool) -> str:
    sep = ": " if struct else " "
    out = f"{_quote(f.name)}{sep}{spark_type_name(f.type)}"
    if not f.nullable:
        out += " NOT NULL"
    comment = (f.metadata or {}).get(_COMMENT)
    if comment is not None:
        out += f" COMMENT {_sql_string(comment.decode('utf-8'))}"
    return out


def spark_ddl(schema: pa.Schema) -> str:
    """A Spark DDL column list for ``schema``, e.g. ```id` INT NOT NULL, `s` STRUCT<`a`: STRING>``.

    Arrow types map to the Spark types Spark's own Arrow conversion uses (see :func:`spark_type_name`);
    names are backquoted; non-nullable columns and struct fields get NOT NULL; Arrow field metadata
    ``comment`` becomes COMMENT. (Spark DDL cannot say that array elements or map values are non-null.)
    """
    return ", ".join(_ddl_field(f, struct=False) for f in schema)
