"""Avro inside log blocks: the block SCHEMA header -> Arrow (pyhudi.schema.avro_to_arrow) and the record codec
between fastavro's schemaless binary Avro and Arrow tables."""

from __future__ import annotations

import io
import functools
import json
from typing import Any, Callable, Iterable

import pyarrow as pa

from pyhudi.errors import SchemaError
from pyhudi.schema import avro_to_arrow


# --------------------------------------------------------------------------------------------------------------
# The Arrow schema of a block comes from pyhudi.schema.avro_to_arrow, the engine-wide mapping (one owner of the
# Avro -> Arrow rule). The value converters (fastavro values <-> Arrow pylist values) are private to log blocks.
# --------------------------------------------------------------------------------------------------------------

_PRIMITIVES = frozenset({"boolean", "int", "long", "float", "double", "bytes", "string"})


class _Names:
    """Named Avro types (record, enum, fixed) seen so far, for references by name."""

    def __init__(self) -> None:
        self.types: dict[str, dict] = {}

    def register(self, schema: dict, namespace: str | None) -> str | None:
        name = schema.get("name")
        if not name:
            return namespace
        ns = schema.get("namespace", namespace)
        full = name if "." in name or not ns else f"{ns}.{name}"
        self.types[full] = schema
        self.types.setdefault(name, schema)
        return full.rsplit(".", 1)[0] if "." in full else ns

    def lookup(self, name: str, namespace: str | None) -> dict:
        for candidate in ((f"{namespace}.{name}" if namespace and "." not in name else name), name):
            if candidate in self.types:
                return self.types[candidate]
        raise SchemaError(f"Avro schema refers to undefined type {name!r}; fix the block's SCHEMA header")


def _non_null_branch(union: list) -> tuple[Any, bool]:
    branches = [b for b in union if b != "null"]
    if len(branches) != 1:
        raise SchemaError(
            f"Avro union {json.dumps(union)} has {len(branches)} non-null branches; pyhudi only supports "
            "['null', T] unions in log blocks. Use a single type per field.")
    return branches[0], len(branches) != len(union)


def _is_nullable(schema: Any) -> bool:
    return schema == "null" or (isinstance(schema, list) and "null" in schema)


def avro_schema_to_arrow(avro_schema: str | dict) -> pa.Schema:
    """Arrow schema of the records of an Avro record schema (the SCHEMA header of a data block)."""
    if isinstance(avro_schema, str):   # every block of a write has the same header: parsed once
        return _arrow_schema_of_json(avro_schema)
    return _arrow_schema(avro_schema)


@functools.lru_cache(maxsize=64)
def _arrow_schema_of_json(avro_schema: str) -> pa.Schema:
    return _arrow_schema(json.loads(avro_schema))


def _arrow_schema(schema) -> pa.Schema:
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise SchemaError("A log block SCHEMA header must be an Avro record schema")
    return avro_to_arrow(schema)


# Value converters between fastavro's Python values and Arrow's to_pylist()/from_pylist() values.
# Only maps differ (fastavro: dict, Arrow to_pylist: list of (key, value) tuples); a converter is None when a
# subtree needs no conversion, so flat schemas cost nothing.

_Conv = Callable[[Any], Any] | None


def _to_avro_converter(schema: Any, names: _Names, namespace: str | None) -> _Conv:
    if isinstance(schema, list):
        branch, _ = _non_null_branch(schema)
        inner = _to_avro_converter(branch, names, namespace)
        return None if inner is None else (lambda v: None if v is None else inner(v))
    if isinstance(schema, str):
        if schema in _PRIMITIVES or schema == "null":
            return None
        return _to_avro_converter(names.lookup(schema, namespace), names, namespace)
    kind = schema.get("type")
    if kind == "record":
        inner_ns = names.register(schema, namespace)
        convs = [(f["name"], _to_avro_converter(f["type"], names, inner_ns)) for f in schema["fields"]]
        if all(c is None for _, c in convs):
            return None
        return lambda v: {k: (c(v.get(k)) if c is not None else v.get(k)) for k, c in convs}
    if kind == "array":
        inner = _to_avro_converter(schema["items"], names, namespace)
        return None if inner is None else (lambda v: [inner(x) for x in v])
    if kind == "map":
        inner = _to_avro_converter(schema["values"], names, namespace)

        def to_dict(v):
            items = v.items() if isinstance(v, dict) else v
            return {k: (inner(x) if inner is not None else x) for k, x in items}
        return to_dict
    if kind in ("enum", "fixed"):
        names.register(schema, namespace)
        return None
    if isinstance(kind, (list, dict)):
        return _to_avro_converter(kind, names, namespace)
    return None


def _to_arrow_converter(schema: Any, names: _Names, namespace: str | None) -> _Conv:
    if isinstance(schema, list):
        branch, _ = _non_null_branch(schema)
        inner = _to_arrow_converter(branch, names, namespace)
        return None if inner is None else (lambda v: None if v is None else inner(v))
    if isinstance(schema, str):
        if schema in _PRIMITIVES or schema == "null":
            return None
        return _to_arrow_converter(names.lookup(schema, namespace), names, namespace)
    kind = schema.get("type")
    if kind == "record":
        inner_ns = names.register(schema, namespace)
        convs = [(f["name"], c) for f in schema["fields"]
                 if (c := _to_arrow_converter(f["type"], names, inner_ns)) is not None]
        if not convs:
            return None

        def conv_record(v):
            v = dict(v)
            for k, c in convs:
                v[k] = c(v.get(k))
            return v
        return conv_record
    if kind == "array":
        inner = _to_arrow_converter(schema["items"], names, namespace)
        return None if inner is None else (lambda v: [inner(x) for x in v])
    if kind == "map":
        inner = _to_arrow_converter(schema["values"], names, namespace)
        return lambda v: [(k, inner(x) if inner is not None else x) for k, x in v.items()]
    if kind in ("enum", "fixed"):
        names.register(schema, namespace)
        return None
    if isinstance(kind, (list, dict)):
        return _to_arrow_converter(kind, names, namespace)
    return None


class AvroRecordCodec:
    """Encodes Arrow rows to / decodes from schemaless binary Avro with one writer schema (cached per schema)."""

    _cache: dict[str, "AvroRecordCodec"] = {}

    def __init__(self, schema_json: str) -> None:
        import fastavro

        self.schema_dict = json.loads(schema_json)
        self.parsed = fastavro.parse_schema(self.schema_dict)
        self.arrow_schema = avro_schema_to_arrow(self.schema_dict)
        self.to_avro = _to_avro_converter(self.schema_dict, _Names(), None)
        self.to_arrow = _to_arrow_converter(self.schema_dict, _Names(), None)
        self.field_names = [f["name"] for f in self.schema_dict["fields"]]
        self.defaults = {f["name"]: f.get("default") for f in self.schema_dict["fields"]}

    @classmethod
    def of(cls, schema_json: str) -> "AvroRecordCodec":
        codec = cls._cache.get(schema_json)
        if codec is None:
            if len(cls._cache) > 64:
                cls._cache.clear()
            codec = cls._cache[schema_json] = cls(schema_json)
        return codec

    def encode_rows(self, table: pa.Table) -> list[bytes]:
        from fastavro import schemaless_writer

        missing = [n for n in self.field_names if n not in table.column_names and self.defaults[n] is None
                   and not _is_nullable(_field_type(self.schema_dict, n))]
        extra = [n for n in table.column_names if n not in set(self.field_names)]
        if missing or extra:
            raise SchemaError(f"Log block records do not match the block's Avro schema: missing non-nullable "
                              f"columns {missing}, extra columns {extra}. Write the records with the table "
                              "schema's columns (meta fields included).")
        rows = table.to_pylist()
        out = []
        buf = io.BytesIO()
        for row in rows:
            record = {n: row.get(n, self.defaults[n]) for n in self.field_names}
            if self.to_avro is not None:
                record = self.to_avro(record)
            buf.seek(0)
            buf.truncate()
            try:
                schemaless_writer(buf, self.parsed, record)
            except Exception as exc:  # fastavro raises ValueError/TypeError/... for values that do not fit
                raise SchemaError(f"Record {row!r} does not match the block's Avro schema: {exc}") from exc
            out.append(buf.getvalue())
        return out

    def decode_rows(self, payloads: Iterable[bytes]) -> pa.Table:
        from fastavro import schemaless_reader

        rows = [schemaless_reader(io.BytesIO(p), self.parsed, None) for p in payloads]
        if self.to_arrow is not None:
            rows = [self.to_arrow(r) for r in rows]
        return pa.Table.from_pylist(rows, schema=self.arrow_schema)


def _field_type(schema: dict, name: str) -> Any:
    for f in schema["fields"]:
        if f["name"] == name:
            return f["type"]
    return None
