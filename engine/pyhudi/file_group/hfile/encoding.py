"""The two integer encodings and the protobuf subset an HFile uses.

HBase writes lengths in two different variable-length forms: protobuf varints (the trailer and the FileInfo block
are protobuf messages, each preceded by its varint length) and Hadoop's ``WritableUtils`` vlongs (key lengths in
index blocks, the MVCC timestamp after every cell). Only the handful of protobuf features those two messages need
(varint and length-delimited fields) is implemented, so no protobuf dependency is needed.
"""

from __future__ import annotations

from typing import Union

FieldValue = Union[int, bytes]

_UINT64 = 1 << 64


class MalformedError(Exception):
    """Bytes that do not decode; the reader turns it into a CorruptFileError naming the file."""


def write_uvarint(value: int) -> bytes:
    """Protobuf varint of `value` as a uint64 (a negative int64 takes ten bytes, as Java writes -1)."""
    value %= _UINT64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it."""
    result = 0
    for shift in range(0, 70, 7):
        if pos >= len(buf):
            raise MalformedError("varint runs past the end of its buffer")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result % _UINT64, pos
    raise MalformedError("varint longer than ten bytes")


def write_vlong(value: int) -> bytes:
    """Hadoop ``WritableUtils.writeVLong``: one byte for -112..127, else a length byte and big-endian bytes."""
    if -112 <= value <= 127:
        return bytes([value & 0xFF])
    marker = -112
    if value < 0:
        value = ~value
        marker = -120
    size = (value.bit_length() + 7) // 8
    return bytes([(marker - size) & 0xFF]) + value.to_bytes(size, "big")


def read_vlong(buf: bytes, pos: int) -> tuple[int, int]:
    """The Hadoop vlong at `pos` and the position after it."""
    if pos >= len(buf):
        raise MalformedError("vlong runs past the end of its buffer")
    first = buf[pos] - 256 if buf[pos] > 127 else buf[pos]
    if first >= -112:
        return first, pos + 1
    size = (-112 - first) if first >= -120 else (-120 - first)
    end = pos + 1 + size
    if end > len(buf):
        raise MalformedError("vlong runs past the end of its buffer")
    value = int.from_bytes(buf[pos + 1:end], "big")
    return (~value if first < -120 else value), end


def encode_message(fields: list[tuple[int, FieldValue]]) -> bytes:
    """A protobuf message of (field number, value) pairs: ints as varints, bytes as length-delimited."""
    out = bytearray()
    for number, value in fields:
        if isinstance(value, bytes):
            out += write_uvarint(number << 3 | 2) + write_uvarint(len(value)) + value
        else:
            out += write_uvarint(number << 3) + write_uvarint(value)
    return bytes(out)


def decode_message(buf: bytes) -> list[tuple[int, FieldValue]]:
    """The (field number, value) pairs of a protobuf message; fixed-width fields are skipped."""
    fields: list[tuple[int, FieldValue]] = []
    pos = 0
    while pos < len(buf):
        tag, pos = read_uvarint(buf, pos)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            value, pos = read_uvarint(buf, pos)
            fields.append((number, value))
        elif wire_type == 2:
            size, pos = read_uvarint(buf, pos)
            if pos + size > len(buf):
                raise MalformedError(f"protobuf field {number} runs past the end of its message")
            fields.append((number, buf[pos:pos + size]))
            pos += size
        elif wire_type in (1, 5):
            pos += 8 if wire_type == 1 else 4
        else:
            raise MalformedError(f"protobuf wire type {wire_type} of field {number} is not supported")
    return fields


def read_delimited(buf: bytes, pos: int) -> bytes:
    """The varint-length-prefixed message at `pos` (protobuf's writeDelimitedTo)."""
    size, pos = read_uvarint(buf, pos)
    if pos + size > len(buf):
        raise MalformedError("delimited protobuf message runs past the end of its block")
    return buf[pos:pos + size]
