"""The columns a file slice's merge works on: a base file's or log block's records conformed to the output
schema (missing columns null, narrower types cast, names matched case-insensitively as a fallback), plus the
internal key / ordering / sequence / is-deleted columns the merge compares. Split from file_slice_reader so the
reading and the merge rules each stay one concern."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.errors import CorruptFileError, PyHudiError, SchemaError
from pyhudi.merge import IS_DELETED_FIELD, RECORD_KEY
from pyhudi.schema import to_storage
from pyhudi.storage import Storage

# Internal columns carried next to the output schema while merging (dropped before returning).
KEY = "__pyhudi_key"
ORD = "__pyhudi_ord"
SEQ = "__pyhudi_seq"
DEL = "__pyhudi_is_deleted"
INTERNAL = (KEY, ORD, SEQ, DEL)


def lookup_column(names: list[str], name: str) -> str | None:
    if name in names:
        return name
    low = name.lower()
    hits = [n for n in names if n.lower() == low]
    return hits[0] if len(hits) == 1 else None


def read_base_columns(storage: Storage, relative: str, schema: pa.Schema, ordering_field: str | None) -> pa.Table:
    """A base file's columns that the output schema or the merge needs."""
    wanted = list(schema.names) + [RECORD_KEY]
    if ordering_field:
        wanted.append(ordering_field.split(".", 1)[0])
    try:
        with storage.fs.open_input_file(storage.full(relative)) as source:
            parquet = pq.ParquetFile(source)
            names = parquet.schema_arrow.names
            columns = []
            for name in wanted:
                hit = lookup_column(names, name)
                if hit is not None and hit not in columns:
                    columns.append(hit)
            return parquet.read(columns=columns)
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowInvalid) as exc:
        raise CorruptFileError(f"Hudi base file {relative} cannot be read: {exc}. Restore the file, or roll back "
                               "the instant that wrote it.") from exc


def conform(raw: pa.Table, schema: pa.Schema, where: str) -> pa.Table:
    """``raw`` in exactly ``schema``: columns matched by name (case-insensitively as a fallback), missing ones
    null, types cast to the schema's."""
    if raw.schema.equals(schema, check_metadata=False):
        return raw.replace_schema_metadata(schema.metadata)
    relaxed = pa.schema([f.with_nullable(True) for f in schema], metadata=schema.metadata)
    try:
        converted = to_storage(raw, relaxed)
    except SchemaError as exc:
        raise SchemaError(f"{where}: its records cannot be read in the table schema: {exc}") from exc
    return pa.Table.from_arrays(converted.columns, schema=schema)


def _ordering_column(table: pa.Table, ordering_field: str) -> pa.ChunkedArray | None:
    head, _, rest = ordering_field.partition(".")
    name = lookup_column(table.column_names, head)
    if name is None:
        return None
    column = table[name]
    for part in rest.split(".") if rest else []:
        if not pa.types.is_struct(column.type):
            return None
        names = [column.type.field(i).name for i in range(column.type.num_fields)]
        hit = lookup_column(names, part)
        if hit is None:
            return None
        column = pc.struct_field(column, hit)
    return column


def _schema_field_type(schema: pa.Schema, ordering_field: str) -> pa.DataType | None:
    head, _, rest = ordering_field.partition(".")
    name = lookup_column(schema.names, head)
    if name is None:
        return None
    t = schema.field(name).type
    for part in rest.split(".") if rest else []:
        if not pa.types.is_struct(t):
            return None
        names = [t.field(i).name for i in range(t.num_fields)]
        hit = lookup_column(names, part)
        if hit is None:
            return None
        t = t.field(hit).type
    return t


def ordering_field_type(schema: pa.Schema, ordering_field: str) -> pa.DataType | None:
    """The type of the (possibly dotted) ordering field in ``schema``, or None when the schema lacks it."""
    return _schema_field_type(schema, ordering_field)


def ordering_type(schema: pa.Schema, ordering_field: str | None, sources: list[pa.Table]) -> pa.DataType | None:
    """The type ordering values are compared in: the schema's, else the first file's that has the field."""
    if not ordering_field:
        return None
    t = _schema_field_type(schema, ordering_field)
    if t is not None:
        return t
    for source in sources:
        column = _ordering_column(source, ordering_field)
        if column is not None:
            return column.type
    return None


def ordering_values(raw: pa.Table, ordering_field: str | None, ord_type: pa.DataType | None,
                     where: str) -> pa.ChunkedArray | pa.Array:
    n = raw.num_rows
    if ordering_field is None or ord_type is None:
        return pa.nulls(n, pa.null())
    column = _ordering_column(raw, ordering_field)
    if column is None:
        return pa.nulls(n, ord_type)
    if not column.type.equals(ord_type):
        try:
            column = column.cast(ord_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise SchemaError(f"{where}: ordering field {ordering_field!r} of type {column.type} cannot be compared "
                              f"as {ord_type}: {exc}") from exc
    return column


def record_keys(raw: pa.Table, where: str) -> pa.ChunkedArray:
    name = lookup_column(raw.column_names, RECORD_KEY)
    if name is None:
        raise PyHudiError(
            f"{where} has no {RECORD_KEY} column: the table was written without meta fields "
            "(hoodie.populate.meta.fields=false), and pyhudi merges log records by that column. Read the table "
            "read-optimized, or compact it with Hudi first.")
    keys = raw[name]
    if not pa.types.is_string(keys.type):
        keys = keys.cast(pa.string())
    if keys.null_count:
        raise CorruptFileError(f"{where} holds {keys.null_count} record(s) with a null {RECORD_KEY}; every Hudi "
                               "record needs its key. Restore the file, or roll back the instant that wrote it.")
    return keys


def with_internals(conformed: pa.Table, raw: pa.Table, ordering_field: str | None, ord_type: pa.DataType | None,
                    where: str) -> pa.Table:
    table = conformed.append_column(KEY, record_keys(raw, where))
    return table.append_column(ORD, ordering_values(raw, ordering_field, ord_type, where))


def is_deleted_flags(raw: pa.Table) -> pa.ChunkedArray | pa.Array:
    name = lookup_column(raw.column_names, IS_DELETED_FIELD)
    if name is None or not pa.types.is_boolean(raw[name].type):
        return pa.array([False] * raw.num_rows, pa.bool_())
    return pc.fill_null(raw[name], False)


def empty_internal(schema: pa.Schema, ord_type: pa.DataType | None) -> pa.Table:
    fields = list(schema) + [pa.field(KEY, pa.string()), pa.field(ORD, ord_type or pa.null()),
                             pa.field(SEQ, pa.int64()), pa.field(DEL, pa.bool_())]
    return pa.schema(fields).empty_table()
