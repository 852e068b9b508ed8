"""Arrow -> Hudi's Avro writer schema, byte for byte as Java Hudi derives it (see the package docstring)."""

from __future__ import annotations

import json
from typing import Any, Iterable

import pyarrow as pa

from pyhudi.errors import SchemaError
from pyhudi.schema.storage import data_fields, storage_field
from pyhudi.schema.types import (AVRO_NAME, COMMENT, META_COLUMNS, META_SET, decimal_fixed_size, is_decimal,
                                 record_name_and_namespace, sanitize_avro_name, table_prefix, unsupported)


# --------------------------------------------------------------------------------------------------------------
# Arrow -> Avro


def _check_names(fields: Iterable[pa.Field], where: str, table_name: str | None) -> None:
    seen: dict[str, str] = {}
    for f in fields:
        path = f"{where}.{f.name}" if where else f.name
        if not AVRO_NAME.match(f.name):
            raise SchemaError(
                f"{table_prefix(table_name)}column `{path}` is not a valid Avro name (letters, digits and _ only, "
                f"not starting with a digit), so Hudi cannot store it. Fix: rename it, e.g. "
                f"`{path}` AS {sanitize_avro_name(f.name)}.")
        low = f.name.lower()
        if low in seen:
            raise SchemaError(
                f"{table_prefix(table_name)}columns `{seen[low]}` and `{f.name}`{' in `' + where + '`' if where else ''}"
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
        comment = (f.metadata or {}).get(COMMENT)
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
        elif is_decimal(t):
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
            raise unsupported(t, where, self.table_name)
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
                        f"{table_prefix(table_name)}two different Avro types would both be named `{full}`; "
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
    fields = [storage_field(f, f.name, table_name) for f in data_fields(schema)]
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
    out["fields"] = meta + [f for f in avro["fields"] if f["name"] not in META_SET]
    return out
