"""Content of DELETE_BLOCKs: a binary HoodieDeleteRecordList (record key, partition path, ordering value as a union
whose branch follows the value's type), with Avro's zigzag varints written by hand."""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import struct
from typing import Any

from pyhudi.errors import SchemaError
from pyhudi.file_group.log_block.model import LOG_BLOCK_VERSION, ORDERING_VAL_BRANCHES, DeleteRecord


BRANCH = {name: i for i, name in enumerate(ORDERING_VAL_BRANCHES)}
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
            return BRANCH["decimal"]
        if logical == "date":
            return BRANCH["date"]
        if logical in ("time-millis",):
            return BRANCH["int"]
        if logical in ("time-micros", "timestamp-millis", "timestamp-micros",
                       "local-timestamp-millis", "local-timestamp-micros"):
            return BRANCH["long"]
        if base == "enum":
            return BRANCH["string"]
        return ordering_branch_for(base)
    if avro_type in BRANCH:
        return BRANCH[avro_type]
    if avro_type in (None,):
        return 0
    raise SchemaError(
        f"Ordering field type {avro_type!r} cannot be stored in a Hudi delete block (orderingVal supports "
        f"{', '.join(ORDERING_VAL_BRANCHES[1:])}); choose a numeric, string or date precombine field")


def branch_for_value(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return BRANCH["boolean"]
    if isinstance(value, int):
        return BRANCH["long"]
    if isinstance(value, float):
        return BRANCH["double"]
    if isinstance(value, str):
        return BRANCH["string"]
    if isinstance(value, (bytes, bytearray)):
        return BRANCH["bytes"]
    if isinstance(value, decimal.Decimal):
        return BRANCH["decimal"]
    if isinstance(value, _dt.datetime):
        return BRANCH["long"]          # Hudi keeps timestamp ordering values as Long (epoch micros)
    if isinstance(value, _dt.date):
        return BRANCH["date"]
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
                branch = ordering_branch if ordering_branch is not None else branch_for_value(key.ordering_val)
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
