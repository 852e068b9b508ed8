"""Hudi log blocks (log format version 1, block content version 3): the model and the content codecs.

A log file is a sequence of blocks (see :mod:`pyhudi.file_group.log_file` for the framing). This module holds
what one block *is* and how its content bytes are encoded, as Apache Hudi 0.14/0.15 (table version 6) does:

* ``AVRO_DATA_BLOCK`` content: ``int version (=3)``, ``int record count``, then per record ``int length`` and the
  record as schemaless binary Avro written with the block's ``SCHEMA`` header.
* ``PARQUET_DATA_BLOCK`` content: the bytes of a complete parquet file holding the records (with the five
  ``_hoodie_*`` meta columns).
* ``DELETE_BLOCK`` content: ``int version (=3)``, ``int length``, then a binary ``HoodieDeleteRecordList`` Avro
  datum: for each key ``recordKey``, ``partitionPath`` and ``orderingVal`` (a union whose branch follows the
  ordering value's type).
* ``COMMAND_BLOCK`` content: empty; the header says ``COMMAND_BLOCK_TYPE`` (``"0"`` = rollback) and
  ``TARGET_INSTANT_TIME`` (the instant whose blocks are rolled back).

All integers of the framing are big-endian (Java ``DataOutputStream``).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import io
import json
import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Callable, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.errors import PyHudiError, SchemaError

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1          # HoodieLogFormat.CURRENT_VERSION: block type, header, content length, footer, length
LOG_BLOCK_VERSION = 3           # HoodieLogBlock.version: first int of avro/delete block content
DEFAULT_PARQUET_COMPRESSION = "gzip"   # hoodie.parquet.compression.codec default, used for parquet log blocks


class BlockType(IntEnum):
    """HoodieLogBlock.HoodieLogBlockType; serialized as the ordinal."""

    COMMAND_BLOCK = 0
    DELETE_BLOCK = 1
    CORRUPT_BLOCK = 2
    AVRO_DATA_BLOCK = 3
    HFILE_DATA_BLOCK = 4
    PARQUET_DATA_BLOCK = 5
    CDC_DATA_BLOCK = 6


class HeaderMetadataType(IntEnum):
    """HoodieLogBlock.HeaderMetadataType; serialized as the ordinal (header and footer keys)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7                                   # table version 8+
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8   # table version 8+


class CommandBlockType(IntEnum):
    """HoodieCommandBlock.HoodieCommandBlockTypeEnum; the header carries the ordinal as a decimal string."""

    ROLLBACK_BLOCK = 0


# --------------------------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------------------------

@dataclass
class DeleteRecord:
    """One key of a delete block (Hudi's DeleteRecord / HoodieDeleteRecord).

    ``ordering_type`` is the branch of the ``orderingVal`` union (see :data:`ORDERING_VAL_BRANCHES`) the value was
    (or will be) written with; None lets the writer pick it from the ordering field's Avro type.
    """

    record_key: str
    partition_path: str
    ordering_val: Any = None
    ordering_type: int | None = None

    @property
    def ordering_type_name(self) -> str | None:
        return None if self.ordering_type is None else ORDERING_VAL_BRANCHES[self.ordering_type]


@dataclass
class LogBlock:
    """One block of a Hudi log file.

    ``header``/``footer`` map HeaderMetadataType names (``"INSTANT_TIME"``, ``"SCHEMA"``, ...) to strings, in the
    order they are (or were) serialized. Exactly one payload is set according to ``block_type``: ``records``
    (data blocks), ``delete_keys`` (delete block) or ``command`` (command block: ``"ROLLBACK_BLOCK"``).
    ``content`` is the encoded content when known: the factories fill it eagerly (so bad input fails before
    anything is written) and the writer uses it verbatim when present; blocks of types pyhudi does not decode
    (HFILE, CDC) keep their raw content there so they can be copied.
    ``offset``/``length`` say where a block read from a file starts (its magic) and how many bytes it spans.
    """

    block_type: BlockType
    header: dict[str, str] = field(default_factory=dict)
    footer: dict[str, str] = field(default_factory=dict)
    records: pa.Table | None = None
    delete_keys: list[DeleteRecord] | None = None
    command: str | None = None
    content: bytes | None = field(default=None, repr=False)
    offset: int | None = None
    length: int | None = None

    @property
    def instant_time(self) -> str | None:
        return self.header.get("INSTANT_TIME")

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get("TARGET_INSTANT_TIME")

    @property
    def schema(self) -> str | None:
        """The Avro schema JSON of the block's records (header SCHEMA)."""
        return self.header.get("SCHEMA")

    @property
    def is_data_block(self) -> bool:
        return self.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK,
                                   BlockType.HFILE_DATA_BLOCK, BlockType.CDC_DATA_BLOCK)

    @property
    def is_rollback(self) -> bool:
        return self.block_type == BlockType.COMMAND_BLOCK and self.command == CommandBlockType.ROLLBACK_BLOCK.name

    @property
    def num_records(self) -> int:
        if self.records is not None:
            return self.records.num_rows
        if self.delete_keys is not None:
            return len(self.delete_keys)
        return 0


# --------------------------------------------------------------------------------------------------------------
# Header / footer metadata maps
# --------------------------------------------------------------------------------------------------------------

def _metadata_key_ordinal(name: str) -> int:
    if name in HeaderMetadataType.__members__:
        return HeaderMetadataType[name].value
    if name.startswith("HEADER_") and name[7:].isdigit():   # unknown ordinal kept from a read
        return int(name[7:])
    raise PyHudiError(
        f"Unknown log block header key {name!r}; use one of {', '.join(HeaderMetadataType.__members__)}")


def _metadata_key_name(ordinal: int) -> str:
    try:
        return HeaderMetadataType(ordinal).name
    except ValueError:
        return f"HEADER_{ordinal}"


def encode_metadata(metadata: dict[str, str]) -> bytes:
    """HoodieLogBlock.getLogMetadataBytes: int count, then per entry int ordinal, int length, UTF-8 bytes."""
    out = [struct.pack(">i", len(metadata))]
    for key, value in metadata.items():
        data = str(value).encode("utf-8")
        out.append(struct.pack(">ii", _metadata_key_ordinal(key), len(data)))
        out.append(data)
    return b"".join(out)


def decode_metadata(data: bytes, pos: int) -> tuple[dict[str, str], int]:
    """Inverse of :func:`encode_metadata` starting at ``pos``; returns (metadata, position after it).

    Raises ValueError/struct.error when the bytes run out (the caller treats that as a corrupt block).
    """
    (count,) = struct.unpack_from(">i", data, pos)
    pos += 4
    if count < 0 or count > 1024:
        raise ValueError(f"implausible metadata entry count {count}")
    metadata: dict[str, str] = {}
    for _ in range(count):
        ordinal, size = struct.unpack_from(">ii", data, pos)
        pos += 8
        if size < 0 or pos + size > len(data):
            raise ValueError(f"metadata entry of {size} bytes runs past the block")
        metadata[_metadata_key_name(ordinal)] = data[pos:pos + size].decode("utf-8")
        pos += size
    return metadata, pos


# --------------------------------------------------------------------------------------------------------------
# Avro schema <-> Arrow. The Arrow schema comes from pyhudi.schema.avro_to_arrow (the engine-wide mapping) when
# it is importable; the private converter below is the fallback and agrees with it on ['null', T] schemas. The
# value converters (fastavro values <-> Arrow pylist values) are private to log blocks.
# --------------------------------------------------------------------------------------------------------------

try:
    from pyhudi.schema import avro_to_arrow as _shared_avro_to_arrow
except ImportError:  # pragma: no cover - pyhudi.schema is written alongside this module
    _shared_avro_to_arrow = None

_PRIMITIVE_ARROW = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}
_LOGICAL_ARROW = {
    "date": pa.date32(),
    "time-millis": pa.time32("ms"),
    "time-micros": pa.time64("us"),
    "timestamp-millis": pa.timestamp("ms", tz="UTC"),
    "timestamp-micros": pa.timestamp("us", tz="UTC"),
    "local-timestamp-millis": pa.timestamp("ms"),
    "local-timestamp-micros": pa.timestamp("us"),
    "uuid": pa.string(),
}


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


def _avro_to_arrow_type(schema: Any, names: _Names, namespace: str | None) -> pa.DataType:
    if isinstance(schema, list):
        branch, _ = _non_null_branch(schema)
        return _avro_to_arrow_type(branch, names, namespace)
    if isinstance(schema, str):
        if schema in _PRIMITIVE_ARROW:
            return _PRIMITIVE_ARROW[schema]
        if schema == "null":
            return pa.null()
        return _avro_to_arrow_type(names.lookup(schema, namespace), names, namespace)
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        if kind == "fixed":
            names.register(schema, namespace)
        precision, scale = int(schema["precision"]), int(schema.get("scale", 0))
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    if logical in _LOGICAL_ARROW:
        return _LOGICAL_ARROW[logical]
    if kind == "record":
        inner_ns = names.register(schema, namespace)
        return pa.struct([_avro_field_to_arrow(f, names, inner_ns) for f in schema["fields"]])
    if kind == "enum":
        names.register(schema, namespace)
        return pa.string()
    if kind == "fixed":
        names.register(schema, namespace)
        return pa.binary(int(schema["size"]))
    if kind == "array":
        items = schema["items"]
        return pa.list_(pa.field("element", _avro_to_arrow_type(items, names, namespace), _is_nullable(items)))
    if kind == "map":
        values = schema["values"]
        return pa.map_(pa.string(), pa.field("value", _avro_to_arrow_type(values, names, namespace),
                                            _is_nullable(values)))
    if isinstance(kind, (str, list, dict)):
        return _avro_to_arrow_type(kind, names, namespace)
    raise SchemaError(f"Unsupported Avro type {json.dumps(schema)} in a log block schema")


def _is_nullable(schema: Any) -> bool:
    return schema == "null" or (isinstance(schema, list) and "null" in schema)


def _avro_field_to_arrow(avro_field: dict, names: _Names, namespace: str | None) -> pa.Field:
    return pa.field(avro_field["name"], _avro_to_arrow_type(avro_field["type"], names, namespace),
                    _is_nullable(avro_field["type"]))


def avro_schema_to_arrow(avro_schema: str | dict) -> pa.Schema:
    """Arrow schema of the records of an Avro record schema (the SCHEMA header of a data block)."""
    schema = json.loads(avro_schema) if isinstance(avro_schema, str) else avro_schema
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise SchemaError("A log block SCHEMA header must be an Avro record schema")
    if _shared_avro_to_arrow is not None:
        return _shared_avro_to_arrow(schema)
    return _private_avro_schema_to_arrow(schema)


def _private_avro_schema_to_arrow(schema: dict) -> pa.Schema:
    names = _Names()
    namespace = names.register(schema, None)
    return pa.schema([_avro_field_to_arrow(f, names, namespace) for f in schema["fields"]])


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
        if schema in _PRIMITIVE_ARROW or schema == "null":
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
        if schema in _PRIMITIVE_ARROW or schema == "null":
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


class _AvroRecordCodec:
    """Encodes Arrow rows to / decodes from schemaless binary Avro with one writer schema (cached per schema)."""

    _cache: dict[str, "_AvroRecordCodec"] = {}

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
    def of(cls, schema_json: str) -> "_AvroRecordCodec":
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


# --------------------------------------------------------------------------------------------------------------
# Content codecs
# --------------------------------------------------------------------------------------------------------------

def encode_avro_content(records: pa.Table, schema_json: str) -> bytes:
    codec = _AvroRecordCodec.of(schema_json)
    payloads = codec.encode_rows(records)
    out = [struct.pack(">ii", LOG_BLOCK_VERSION, len(payloads))]
    for payload in payloads:
        out.append(struct.pack(">i", len(payload)))
        out.append(payload)
    return b"".join(out)


def decode_avro_content(content: bytes, schema_json: str | None) -> pa.Table:
    if not schema_json:
        raise ValueError("avro data block has no SCHEMA header")
    version, count = struct.unpack_from(">ii", content, 0)
    if version != LOG_BLOCK_VERSION:
        raise ValueError(f"avro data block content version {version} (only {LOG_BLOCK_VERSION} is supported)")
    pos = 8
    payloads = []
    for _ in range(count):
        (size,) = struct.unpack_from(">i", content, pos)
        pos += 4
        if size < 0 or pos + size > len(content):
            raise ValueError(f"avro record of {size} bytes runs past the block content")
        payloads.append(content[pos:pos + size])
        pos += size
    return _AvroRecordCodec.of(schema_json).decode_rows(payloads)


def conform_records(records: pa.Table, schema_json: str) -> pa.Table:
    """``records`` with the columns of the Avro schema, in its order, cast to the Arrow types it implies.

    Raises SchemaError naming missing/extra columns or a column whose values do not fit the Avro type.
    """
    target = avro_schema_to_arrow(schema_json)
    names = set(records.column_names)
    missing = [f.name for f in target if f.name not in names]
    extra = [n for n in records.column_names if n not in set(target.names)]
    if missing or extra:
        raise SchemaError(
            f"Log block records do not match the block's Avro schema: missing columns {missing}, extra columns "
            f"{extra}. Write the records with exactly the table schema's columns (meta fields included).")
    table = records.select(target.names)
    if table.schema.equals(target, check_metadata=False):
        return table.replace_schema_metadata(None)
    columns = []
    for column, target_field in zip(table.columns, target):
        if column.type.equals(target_field.type):
            columns.append(column)
            continue
        try:
            columns.append(column.cast(target_field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise SchemaError(f"Column {target_field.name!r} of type {column.type} cannot be written as Avro type "
                              f"{target_field.type} of the block schema: {exc}") from exc
    for column, target_field in zip(columns, target):
        if not target_field.nullable and column.null_count:
            raise SchemaError(f"Column {target_field.name!r} has nulls but its Avro type is not nullable; "
                              "make the field a ['null', T] union or fill the nulls")
    return pa.Table.from_arrays(columns, schema=target)


def encode_parquet_content(records: pa.Table, schema_json: str | None = None,
                           compression: str = DEFAULT_PARQUET_COMPRESSION) -> bytes:
    if schema_json:
        table = conform_records(records, schema_json)
        table = table.replace_schema_metadata({b"parquet.avro.schema": schema_json.encode("utf-8")})
    else:
        table = records
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return sink.getvalue().to_pybytes()


def decode_parquet_content(content: bytes) -> pa.Table:
    return pq.read_table(pa.BufferReader(content))


# HoodieDeleteRecord.orderingVal union branches (hudi-common/src/main/avro/HoodieDeleteRecord.avsc): a union of
# one-field wrapper records (BooleanWrapper, IntWrapper, ...), whose binary form is the wrapped value's. Java's
# SQL DELETE writes Integer 0 as branch 2 (IntWrapper), as the Java-written fixture tables show; hudi-rs reads
# these branches.
ORDERING_VAL_BRANCHES = (
    "null", "boolean", "int", "long", "float", "double", "bytes", "string", "date", "decimal",
    "time-micros", "timestamp-micros",
)
_BRANCH = {name: i for i, name in enumerate(ORDERING_VAL_BRANCHES)}
_DECIMAL_SCALE = 15           # {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_DATE = _dt.date(1970, 1, 1)

DELETE_RECORD_LIST_SCHEMA = {
    "namespace": "org.apache.hudi.avro.model",
    "type": "record",
    "name": "HoodieDeleteRecordList",
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": {
        "name": "HoodieDeleteRecord", "type": "record",
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": ["null"] + [
                {"type": "record", "name": f"Ordering{name}Wrapper", "fields": [{"name": "value", "type": avro}]}
                for name, avro in (
                    ("Boolean", "boolean"), ("Int", "int"), ("Long", "long"), ("Float", "float"),
                    ("Double", "double"), ("Bytes", "bytes"), ("String", "string"), ("Date", "int"),
                    ("Decimal", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
                    ("TimeMicros", {"type": "long", "logicalType": "time-micros"}), ("TimestampMicros", "long"))
            ], "default": None},
        ]}}}],
}


def ordering_branch_for(avro_type: Any) -> int:
    """Branch of the delete block's orderingVal union for values of the ordering field's Avro type.

    ``avro_type`` is the field's Avro type as in the table schema (``"long"``, ``["null", "long"]``,
    ``{"type": "int", "logicalType": "date"}``, ...) or a branch name from :data:`ORDERING_VAL_BRANCHES`.
    Hudi resolves the union by the Java class of the ordering value as Hudi's Avro path produces it: dates become
    LocalDate (``date``), decimals BigDecimal (``decimal``), while timestamps stay Long (``long``).
    """
    if isinstance(avro_type, list):
        branches = [b for b in avro_type if b != "null"]
        if not branches:
            return 0
        if len(branches) > 1:
            raise SchemaError(f"Ordering field type {json.dumps(avro_type)} is a multi-type union; "
                              "use a single-typed precombine field")
        avro_type = branches[0]
    if isinstance(avro_type, dict):
        logical = avro_type.get("logicalType")
        base = avro_type.get("type")
        if logical == "decimal":
            return _BRANCH["decimal"]
        if logical == "date":
            return _BRANCH["date"]
        if logical in ("time-millis",):
            return _BRANCH["int"]
        if logical in ("time-micros", "timestamp-millis", "timestamp-micros",
                       "local-timestamp-millis", "local-timestamp-micros"):
            return _BRANCH["long"]
        if base == "enum":
            return _BRANCH["string"]
        return ordering_branch_for(base)
    if avro_type in _BRANCH:
        return _BRANCH[avro_type]
    if avro_type in (None,):
        return 0
    raise SchemaError(
        f"Ordering field type {avro_type!r} cannot be stored in a Hudi delete block (orderingVal supports "
        f"{', '.join(ORDERING_VAL_BRANCHES[1:])}); choose a numeric, string or date precombine field")


def _branch_for_value(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return _BRANCH["boolean"]
    if isinstance(value, int):
        return _BRANCH["long"]
    if isinstance(value, float):
        return _BRANCH["double"]
    if isinstance(value, str):
        return _BRANCH["string"]
    if isinstance(value, (bytes, bytearray)):
        return _BRANCH["bytes"]
    if isinstance(value, decimal.Decimal):
        return _BRANCH["decimal"]
    if isinstance(value, _dt.datetime):
        return _BRANCH["long"]          # Hudi keeps timestamp ordering values as Long (epoch micros)
    if isinstance(value, _dt.date):
        return _BRANCH["date"]
    raise SchemaError(f"Ordering value {value!r} of type {type(value).__name__} cannot be stored in a delete block")


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_long(data: bytes, pos: int) -> tuple[int, int]:
    shift = 0
    result = 0
    while True:
        if pos >= len(data):
            raise ValueError("avro varint runs past the data")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 63:
            raise ValueError("avro varint too long")
    return (result >> 1) ^ -(result & 1), pos


def _avro_bytes(data: bytes) -> bytes:
    return _zigzag(len(data)) + data


def _read_bytes(data: bytes, pos: int) -> tuple[bytes, int]:
    size, pos = _read_long(data, pos)
    if size < 0 or pos + size > len(data):
        raise ValueError("avro bytes run past the data")
    return data[pos:pos + size], pos + size


def _nullable_string(value: str | None) -> bytes:
    return b"\x00" if value is None else b"\x02" + _avro_bytes(value.encode("utf-8"))


def _read_nullable_string(data: bytes, pos: int) -> tuple[str | None, int]:
    branch, pos = _read_long(data, pos)
    if branch == 0:
        return None, pos
    if branch != 1:
        raise ValueError(f"bad union branch {branch} for a nullable string")
    raw, pos = _read_bytes(data, pos)
    return raw.decode("utf-8"), pos


def _micros(value: Any) -> int:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return (value - _EPOCH) // _dt.timedelta(microseconds=1)
    return int(value)


def _encode_ordering_val(value: Any, branch: int) -> bytes:
    name = ORDERING_VAL_BRANCHES[branch]
    if value is None or name == "null":
        return b"\x00"
    head = _zigzag(branch)
    if name == "boolean":
        return head + (b"\x01" if value else b"\x00")
    if name in ("int", "long"):
        if isinstance(value, _dt.datetime):
            value = _micros(value)
        elif isinstance(value, _dt.date):
            value = (value - _EPOCH_DATE).days
        elif isinstance(value, _dt.time):
            value = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond
            if name == "int":
                value //= 1000
        return head + _zigzag(int(value))
    if name == "float":
        return head + struct.pack("<f", float(value))
    if name == "double":
        return head + struct.pack("<d", float(value))
    if name == "bytes":
        return head + _avro_bytes(bytes(value))
    if name == "string":
        return head + _avro_bytes(str(value).encode("utf-8"))
    if name == "decimal":
        unscaled = int(decimal.Decimal(value).scaleb(_DECIMAL_SCALE).to_integral_value(decimal.ROUND_HALF_UP))
        bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
        size = bits // 8 + 1                      # minimal two's complement, like BigInteger.toByteArray()
        return head + _avro_bytes(unscaled.to_bytes(size, "big", signed=True))
    if name == "date":
        days = (value - _EPOCH_DATE).days if isinstance(value, _dt.date) else int(value)
        return head + _zigzag(days)
    if name == "time-micros":
        if isinstance(value, _dt.time):
            return head + _zigzag(((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000
                                  + value.microsecond)
        return head + _zigzag(int(value))
    if name == "timestamp-micros":
        return head + _zigzag(_micros(value))
    raise AssertionError(name)


def _decode_ordering_val(data: bytes, pos: int) -> tuple[Any, int, int]:
    branch, pos = _read_long(data, pos)
    if not 0 <= branch < len(ORDERING_VAL_BRANCHES):
        raise ValueError(f"bad orderingVal union branch {branch}")
    name = ORDERING_VAL_BRANCHES[branch]
    if name == "null":
        return None, branch, pos
    if name == "boolean":
        return data[pos] != 0, branch, pos + 1
    if name in ("int", "long"):
        value, pos = _read_long(data, pos)
        return value, branch, pos
    if name == "float":
        return struct.unpack_from("<f", data, pos)[0], branch, pos + 4
    if name == "double":
        return struct.unpack_from("<d", data, pos)[0], branch, pos + 8
    if name == "bytes":
        raw, pos = _read_bytes(data, pos)
        return raw, branch, pos
    if name == "string":
        raw, pos = _read_bytes(data, pos)
        return raw.decode("utf-8"), branch, pos
    if name == "decimal":
        raw, pos = _read_bytes(data, pos)
        unscaled = int.from_bytes(raw, "big", signed=True) if raw else 0
        return decimal.Decimal(unscaled).scaleb(-_DECIMAL_SCALE), branch, pos
    value, pos = _read_long(data, pos)
    if name == "date":
        return _EPOCH_DATE + _dt.timedelta(days=value), branch, pos
    if name == "time-micros":
        return (_dt.datetime.min + _dt.timedelta(microseconds=value)).time(), branch, pos
    return _EPOCH + _dt.timedelta(microseconds=value), branch, pos   # timestamp-micros


def encode_delete_content(keys: list[DeleteRecord], ordering_branch: int | None = None) -> bytes:
    """Delete block content: version 3, length, binary HoodieDeleteRecordList (one array block, then 0)."""
    body = bytearray()
    if keys:
        body += _zigzag(len(keys))
        for key in keys:
            branch = key.ordering_type
            if branch is None:
                branch = ordering_branch if ordering_branch is not None else _branch_for_value(key.ordering_val)
            if key.ordering_val is None:
                branch = 0
            body += _nullable_string(key.record_key)
            body += _nullable_string(key.partition_path)
            body += _encode_ordering_val(key.ordering_val, branch)
    body += b"\x00"
    return struct.pack(">ii", LOG_BLOCK_VERSION, len(body)) + bytes(body)


def decode_delete_content(content: bytes) -> list[DeleteRecord]:
    version, size = struct.unpack_from(">ii", content, 0)
    if version != LOG_BLOCK_VERSION:
        raise ValueError(f"delete block content version {version} holds Java-serialized keys; only version "
                         f"{LOG_BLOCK_VERSION} (Avro HoodieDeleteRecordList) is supported")
    if size < 0 or 8 + size > len(content):
        raise ValueError("delete record list runs past the block content")
    data = content[8:8 + size]
    pos = 0
    keys: list[DeleteRecord] = []
    while True:
        count, pos = _read_long(data, pos)
        if count == 0:
            break
        if count < 0:                       # negative count: block byte size follows
            count = -count
            _, pos = _read_long(data, pos)
        for _ in range(count):
            record_key, pos = _read_nullable_string(data, pos)
            partition_path, pos = _read_nullable_string(data, pos)
            value, branch, pos = _decode_ordering_val(data, pos)
            keys.append(DeleteRecord(record_key, partition_path, value, branch))
    return keys


def encode_content(block: LogBlock) -> bytes:
    """The content bytes of ``block`` (its ``content`` when already encoded)."""
    if block.content is not None:
        return block.content
    kind = block.block_type
    if kind == BlockType.PARQUET_DATA_BLOCK:
        if block.records is None:
            raise PyHudiError("A parquet data block needs records")
        return encode_parquet_content(block.records, block.schema)
    if kind == BlockType.AVRO_DATA_BLOCK:
        if block.records is None or not block.schema:
            raise PyHudiError("An avro data block needs records and a SCHEMA header")
        return encode_avro_content(block.records, block.schema)
    if kind == BlockType.DELETE_BLOCK:
        return encode_delete_content(block.delete_keys or [])
    if kind == BlockType.COMMAND_BLOCK:
        return b""
    raise PyHudiError(f"pyhudi cannot encode {kind.name} blocks from records; pass the raw content")


def decode_content(block_type: BlockType, header: dict[str, str], content: bytes) -> dict[str, Any]:
    """The payload fields (records / delete_keys / command / content) of a block read from a file."""
    if block_type == BlockType.PARQUET_DATA_BLOCK:
        return {"records": decode_parquet_content(content)}
    if block_type == BlockType.AVRO_DATA_BLOCK:
        return {"records": decode_avro_content(content, header.get("SCHEMA"))}
    if block_type == BlockType.DELETE_BLOCK:
        return {"delete_keys": decode_delete_content(content)}
    if block_type == BlockType.COMMAND_BLOCK:
        raw = header.get("COMMAND_BLOCK_TYPE")
        try:
            command = CommandBlockType(int(raw)).name
        except (TypeError, ValueError):
            raise ValueError(f"unknown COMMAND_BLOCK_TYPE {raw!r}") from None
        return {"command": command}
    return {"content": content}


# --------------------------------------------------------------------------------------------------------------
# Factories
# --------------------------------------------------------------------------------------------------------------

def _check_instant(instant_time: str, what: str = "instant_time") -> str:
    if not isinstance(instant_time, str) or not instant_time.isdigit():
        raise PyHudiError(f"Log block {what} must be a Hudi instant time like '20250117083136333', "
                          f"got {instant_time!r}")
    return instant_time


def parquet_data_block(records: pa.Table, instant_time: str, avro_schema_json: str,
                       compression: str = DEFAULT_PARQUET_COMPRESSION) -> LogBlock:
    """A PARQUET_DATA_BLOCK holding ``records`` (with the ``_hoodie_*`` meta columns) written at ``instant_time``.

    ``avro_schema_json`` is the records' Avro schema (meta fields included), stored in the SCHEMA header as Hudi
    does; Hudi readers use it as the block's writer schema.
    """
    header = {"INSTANT_TIME": _check_instant(instant_time), "SCHEMA": avro_schema_json}
    content = encode_parquet_content(records, avro_schema_json, compression)
    return LogBlock(BlockType.PARQUET_DATA_BLOCK, header, {}, records=records, content=content)


def avro_data_block(records: pa.Table, instant_time: str, avro_schema_json: str) -> LogBlock:
    """An AVRO_DATA_BLOCK: records encoded as schemaless binary Avro with ``avro_schema_json`` (the SCHEMA header)."""
    header = {"INSTANT_TIME": _check_instant(instant_time), "SCHEMA": avro_schema_json}
    content = encode_avro_content(records, avro_schema_json)
    return LogBlock(BlockType.AVRO_DATA_BLOCK, header, {}, records=records, content=content)


def natural_delete(record_key: str, partition_path: str) -> DeleteRecord:
    """A delete without an ordering value of its own: Hudi's natural ordering value, Integer 0 (what Java writes
    for the delete operation and SQL DELETE); it wins over any stored record."""
    return DeleteRecord(record_key, partition_path, 0, _BRANCH["int"])


def delete_block(keys: Iterable[tuple[str, str, Any] | DeleteRecord], instant_time: str,
                 ordering_avro_type: Any = None, avro_schema_json: str | None = None) -> LogBlock:
    """A DELETE_BLOCK for ``keys`` = (record_key, partition_path, ordering_value) tuples or DeleteRecords.

    ``ordering_avro_type`` is the precombine field's Avro type (it picks the orderingVal union branch, see
    :func:`ordering_branch_for`); None infers the branch from each value's Python type. ``avro_schema_json`` (the
    table schema) goes into the SCHEMA header as Hudi writes it; it is optional for readers.
    """
    branch = None if ordering_avro_type is None else ordering_branch_for(ordering_avro_type)
    records: list[DeleteRecord] = []
    for key in keys:
        if isinstance(key, DeleteRecord):
            record = DeleteRecord(key.record_key, key.partition_path, key.ordering_val, key.ordering_type)
        else:
            record_key, partition_path, ordering_val = key
            record = DeleteRecord(record_key, partition_path, ordering_val)
        if record.record_key is None or record.record_key == "":
            raise PyHudiError("A delete block key has a null or empty record key; every deleted record needs "
                              "its record key")
        if record.ordering_type is None:
            record.ordering_type = 0 if record.ordering_val is None else (
                branch if branch is not None else _branch_for_value(record.ordering_val))
        records.append(record)
    header = {"INSTANT_TIME": _check_instant(instant_time)}
    if avro_schema_json:
        header["SCHEMA"] = avro_schema_json
    content = encode_delete_content(records)
    return LogBlock(BlockType.DELETE_BLOCK, header, {}, delete_keys=records, content=content)


def rollback_command_block(instant_time: str, target_instant_time: str) -> LogBlock:
    """A COMMAND_BLOCK (ROLLBACK_BLOCK) written by rollback ``instant_time``.

    It voids the blocks that ``target_instant_time`` wrote earlier in the file group's log.
    """
    header = {
        "INSTANT_TIME": _check_instant(instant_time),
        "TARGET_INSTANT_TIME": _check_instant(target_instant_time, "target_instant_time"),
        "COMMAND_BLOCK_TYPE": str(CommandBlockType.ROLLBACK_BLOCK.value),
    }
    return LogBlock(BlockType.COMMAND_BLOCK, header, {}, command=CommandBlockType.ROLLBACK_BLOCK.name, content=b"")


__all__ = [
    "MAGIC", "LOG_FORMAT_VERSION", "LOG_BLOCK_VERSION", "BlockType", "HeaderMetadataType", "CommandBlockType",
    "DeleteRecord", "LogBlock", "ORDERING_VAL_BRANCHES", "DELETE_RECORD_LIST_SCHEMA", "ordering_branch_for",
    "avro_schema_to_arrow", "conform_records", "encode_metadata", "decode_metadata", "encode_content", "decode_content",
    "parquet_data_block", "avro_data_block", "delete_block", "rollback_command_block",
]
