"""Hudi's Avro schema -> Arrow: the one engine-wide mapping (base files, log blocks, readers)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from pyhudi.errors import SchemaError
from pyhudi.schema.types import COMMENT


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
        metadata = {COMMENT: doc.encode("utf-8")} if doc else None
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
