"""HBase's KeyValue cell layout, which wraps every Hudi record in an HFile data block.

Hudi's writer (``new KeyValue(recordKey, null, null, value)``) makes the record key the cell's row and leaves the
rest at HBase's defaults, so a cell on disk is::

    int32 key length | int32 value length | key | value | vlong MVCC timestamp (always 0: one 0x00 byte)
    key = int16 row length | row | int8 family length (0) | no family, no qualifier
          | int64 timestamp (Long.MAX_VALUE, HBase's LATEST_TIMESTAMP) | int8 type (4 = Put)

Index entries and ``hfile.LASTKEY`` hold such keys too. HBase indexes every data block but the first under a
"fake" key between the previous block's last row and the block's first row (``HFileWriterImpl.getMidpoint``):
the shortest such row, with type Maximum (255), which sorts before every real cell of that row.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from .encoding import MalformedError, read_vlong

LATEST_TIMESTAMP = (1 << 63) - 1
TYPE_PUT = 4
TYPE_MAXIMUM = 255
MAX_ROW_LENGTH = 32767

_CELL_LENGTHS = struct.Struct(">ii")
_KEY_TAIL = struct.Struct(">BqB")  # family length, timestamp, type
KEY_OVERHEAD = 2 + _KEY_TAIL.size


def cell_key(row: bytes, cell_type: int = TYPE_PUT) -> bytes:
    """The serialized KeyValue key of a Hudi record (or of an index entry, with TYPE_MAXIMUM)."""
    return struct.pack(">H", len(row)) + row + _KEY_TAIL.pack(0, LATEST_TIMESTAMP, cell_type)


def encode_cell(row: bytes, value: bytes) -> bytes:
    """A whole cell as it sits in a data block, MVCC timestamp 0 included."""
    key = cell_key(row)
    return _CELL_LENGTHS.pack(len(key), len(value)) + key + value + b"\x00"


def row_of_key(key: bytes) -> bytes:
    """The row (the Hudi record key) of a serialized KeyValue key."""
    if len(key) < 2:
        raise MalformedError(f"cell key of {len(key)} bytes has no row length")
    (row_length,) = struct.unpack_from(">H", key, 0)
    if 2 + row_length > len(key):
        raise MalformedError(f"cell key of {len(key)} bytes claims a {row_length}-byte row")
    return key[2:2 + row_length]


def iter_cells(payload: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(row, value) of every cell of an uncompressed data block payload."""
    pos = 0
    while pos < len(payload):
        if pos + _CELL_LENGTHS.size > len(payload):
            raise MalformedError(f"data block ends inside a cell header at byte {pos}")
        key_length, value_length = _CELL_LENGTHS.unpack_from(payload, pos)
        key_start = pos + _CELL_LENGTHS.size
        value_start = key_start + key_length
        value_end = value_start + value_length
        if key_length < KEY_OVERHEAD or value_length < 0 or value_end > len(payload):
            raise MalformedError(f"cell at byte {pos} has impossible lengths key={key_length} value={value_length}")
        row = row_of_key(payload[key_start:value_start])
        _, pos = read_vlong(payload, value_end)  # the MVCC timestamp
        yield row, payload[value_start:value_end]


def midpoint_row(left: bytes, right: bytes) -> bytes:
    """HBase's ``getMinimumMidpointArray``: a short row r with left < r <= right, used as a block's index key."""
    common = 0
    limit = min(len(left), len(right))
    while common < limit and left[common] == right[common]:
        common += 1
    if common < limit and left[common] < 0xFF and left[common] + 1 < right[common]:
        return left[:common] + bytes([left[common] + 1])
    return right[:common + 1]
