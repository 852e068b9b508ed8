"""The storage schema: the Arrow schema of data as parquet-avro stores it (what pyhudi writes in base files)."""

from __future__ import annotations

import pyarrow as pa

from pyhudi.schema.types import (MAX_DECIMAL_PRECISION, META_COLUMNS, META_SET, is_binary, is_decimal, is_listlike,
                                 is_string, unsupported)


# --------------------------------------------------------------------------------------------------------------
# storage schema


def storage_field(f: pa.Field, where: str, table_name: str | None) -> pa.Field:
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
    if is_string(t):
        return pa.string()
    if is_binary(t):
        return pa.binary()
    if is_decimal(t):
        if t.precision > MAX_DECIMAL_PRECISION or t.scale < 0 or t.scale > t.precision:
            raise unsupported(t, where, table_name)
        return pa.decimal128(t.precision, t.scale)
    if pa.types.is_date(t):
        return pa.date32()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC" if t.tz else None)
    if is_listlike(t):
        vf = t.value_field
        return pa.list_(pa.field("element", _storage_type(vf.type, f"{where}.element", table_name),
                                 nullable=vf.nullable, metadata=vf.metadata))
    if pa.types.is_map(t):
        key = _storage_type(t.key_type, f"{where}.key", table_name)
        if key != pa.string():
            raise unsupported(t, where, table_name)
        item_field = t.item_field
        return pa.map_(pa.field("key", pa.string(), nullable=False),
                       pa.field("value", _storage_type(item_field.type, f"{where}.value", table_name),
                                nullable=item_field.nullable, metadata=item_field.metadata))
    if pa.types.is_struct(t):
        return pa.struct([storage_field(t.field(i), f"{where}.{t.field(i).name}", table_name)
                          for i in range(t.num_fields)])
    raise unsupported(t, where, table_name)


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
    return pa.schema([storage_field(f, f.name, table_name) for f in schema])


def with_meta_columns(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the five ``_hoodie_*`` string meta columns first (replacing any already present)."""
    fields = [pa.field(name, pa.string(), nullable=True) for name in META_COLUMNS]
    fields += [f for f in schema if f.name not in META_SET]
    return pa.schema(fields, metadata=schema.metadata)


def data_fields(schema: pa.Schema) -> list[pa.Field]:
    return [f for f in schema if f.name not in META_SET]
