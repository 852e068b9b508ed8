"""Casting a batch into a storage schema (to_storage): field order, nullability and type changes Hudi allows."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.errors import SchemaError
from pyhudi.schema.types import describe, is_decimal, is_listlike, safe_spark, spark_type_name, table_prefix


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
        f"{table_prefix(table_name)}column `{where}` of type {describe(arr_type)} cannot be converted to "
        f"{describe(target)}: {exc}. Fix: cast `{where}` to {spark_type_name(target) if safe_spark(target) else target} "
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
            f"{table_prefix(table_name)}column `{where}` is NOT NULL in the table schema but the batch has "
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
                    raise SchemaError(f"{table_prefix(table_name)}the batch has no field `{path}`, which is "
                                      "NOT NULL in the table. Fix: add it to the batch.")
                children.append(pa.nulls(len(arr), tf.type))
            else:
                children.append(_convert(arr.field(idx), tf.type, tf.nullable, path, table_name, child_outer))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=own_null)
    if pa.types.is_list(target):
        if not is_listlike(src):
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
        if pa.types.is_floating(src) and is_decimal(target):
            return pc.round(arr, ndigits=target.scale).cast(target, safe=False) if len(arr) else arr.cast(target)
        if pa.types.is_null(src):
            return pa.nulls(len(arr), target)
        if pa.types.is_integer(src) and is_decimal(target):
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
                    f"{table_prefix(table_name)}the batch has no column `{f.name}`, which is NOT NULL in the "
                    f"table ({describe(f.type)}). Fix: add `{f.name}` to the batch.")
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
