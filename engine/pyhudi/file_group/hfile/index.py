"""Block indexes: where each data (or meta) block starts and the key it starts with.

The root index block (``IDXROOT2``) lists its entries back to back as ``int64 offset | int32 on-disk size |
vint key length | key``; data index keys are serialized cell keys, meta index keys are the meta block names.
Non-root index blocks (``IDXLEAF2``/``IDXINTE2``, only in files whose root index outgrew HBase's 128 KB chunk) hold
``int32 count | int32 offsets[count + 1] | entries of int64 offset, int32 size, key``. pyhudi writes a
single-level root index, as Hudi's own Java writer does; it reads multi-level ones too.
"""

from __future__ import annotations

import bisect
import struct
from typing import NamedTuple

from .cell import row_of_key
from .encoding import MalformedError, read_vlong, write_vlong

_OFFSET_SIZE = struct.Struct(">qi")


class IndexEntry(NamedTuple):
    """A block's start `key`, `offset` in the file and on-disk `size` including its header."""

    key: bytes
    offset: int
    size: int


def encode_root_index(entries: list[IndexEntry]) -> bytes:
    """The payload of a root index block."""
    return b"".join(_OFFSET_SIZE.pack(e.offset, e.size) + write_vlong(len(e.key)) + e.key for e in entries)


def decode_root_index(payload: bytes, count: int) -> list[IndexEntry]:
    """The first `count` entries of a root index payload (a multi-level root may carry mid-key data after them)."""
    entries = []
    pos = 0
    for _ in range(count):
        if pos + _OFFSET_SIZE.size > len(payload):
            raise MalformedError(f"root index holds fewer than the trailer's {count} entries")
        offset, size = _OFFSET_SIZE.unpack_from(payload, pos)
        key_length, pos = read_vlong(payload, pos + _OFFSET_SIZE.size)
        if key_length < 0 or pos + key_length > len(payload):
            raise MalformedError("root index entry key runs past the end of its block")
        entries.append(IndexEntry(payload[pos:pos + key_length], offset, size))
        pos += key_length
    return entries


def decode_non_root_index(payload: bytes) -> list[IndexEntry]:
    """The entries of a leaf or intermediate index payload."""
    if len(payload) < 4:
        raise MalformedError("non-root index block is too short for its entry count")
    (count,) = struct.unpack_from(">i", payload, 0)
    base = 4 + 4 * (count + 1)
    if count < 0 or base > len(payload):
        raise MalformedError(f"non-root index block claims {count} entries")
    starts = struct.unpack_from(f">{count + 1}i", payload, 4)
    entries = []
    for i in range(count):
        start, end = base + starts[i], base + starts[i + 1]
        if not (base <= start and start + _OFFSET_SIZE.size <= end <= len(payload)):
            raise MalformedError(f"non-root index entry {i} has impossible bounds")
        offset, size = _OFFSET_SIZE.unpack_from(payload, start)
        entries.append(IndexEntry(payload[start + _OFFSET_SIZE.size:end], offset, size))
    return entries


def find_block(entries: list[IndexEntry], rows: list[bytes], row: bytes) -> IndexEntry | None:
    """The entry of the block that would hold `row`: the last one whose key row is <= `row`."""
    position = bisect.bisect_right(rows, row)
    return entries[position - 1] if position else None


def entry_rows(entries: list[IndexEntry]) -> list[bytes]:
    """The rows of data index keys, in entry order, for `find_block`."""
    return [row_of_key(entry.key) for entry in entries]
