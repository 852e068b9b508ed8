"""Writing an HFile v3 the way HBase 2.x's ``HFileWriterImpl`` does for Hudi's metadata table.

File layout, in order: data blocks | meta blocks (one per name, sorted by name) | load-on-open section: root data
index, meta index (present even when empty), FileInfo | trailer. A data block is closed before the next cell is
added once its uncompressed payload is at least ``block_size`` bytes, so a block overshoots by up to one cell.
The data index is single-level (HBase would add leaf index blocks only once the root index passed 128 KB, i.e.
thousands of data blocks; Hudi's own Java writer never does).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .block import CODEC_IDS, DATA, FILE_INFO, HEADER_SIZE, META, ROOT_INDEX, encode_block
from .cell import KEY_OVERHEAD, MAX_ROW_LENGTH, TYPE_MAXIMUM, cell_key, encode_cell, midpoint_row
from .file_info import RESERVED_KEYS, RESERVED_PREFIX, encode_file_info, hbase_file_info
from .index import IndexEntry, encode_root_index
from .trailer import HOODIE_KV_COMPARATOR, TRAILER_SIZE, Trailer, encode_trailer


class HFileWriter:
    """Accumulates cells into blocks; `finish` returns the file. Records must come in ascending key order."""

    def __init__(self, *, block_size: int = 64 * 1024, compression: str = "none",
                 comparator: str = HOODIE_KV_COMPARATOR) -> None:
        if compression not in CODEC_IDS:
            raise ValueError(f"HFile compression must be one of {sorted(CODEC_IDS)}, not {compression!r}")
        if block_size <= 0:
            raise ValueError(f"HFile block size must be positive, not {block_size}")
        self._block_size, self._codec, self._comparator = block_size, compression, comparator
        self._out = bytearray()
        self._prev_offsets: dict[bytes, int] = {}
        self._block_cells: list[bytes] = []
        self._block_bytes = 0
        self._block_first_row = b""
        self._last_row: bytes | None = None
        self._previous_block_last_row = b""
        self._data_index: list[IndexEntry] = []
        self._first_data_offset = self._last_data_offset = -1
        self._entries = self._key_bytes = self._value_bytes = 0
        self._total_uncompressed = 0

    def append(self, key: bytes, value: bytes) -> None:
        """Add one record; raises ValueError if `key` does not sort strictly after the previous key."""
        if self._last_row is not None and key <= self._last_row:
            problem = "duplicates" if key == self._last_row else "sorts before"
            raise ValueError(f"HFile record keys must ascend with no duplicates: {key!r} {problem} {self._last_row!r}")
        if len(key) > MAX_ROW_LENGTH:
            raise ValueError(f"HFile record key of {len(key)} bytes exceeds HBase's {MAX_ROW_LENGTH}-byte row limit")
        if self._block_bytes >= self._block_size:
            self._flush_data_block()
        cell = encode_cell(key, value)
        if not self._block_cells:
            self._block_first_row = key
        self._block_cells.append(cell)
        self._block_bytes += len(cell)
        self._last_row = key
        self._entries += 1
        self._key_bytes += KEY_OVERHEAD + len(key)
        self._value_bytes += len(value)

    def _write_block(self, magic: bytes, payload: bytes) -> tuple[int, int]:
        """Append a block; returns its offset and on-disk size."""
        offset = len(self._out)
        self._out += encode_block(magic, payload, self._prev_offsets.get(magic, -1), self._codec)
        self._prev_offsets[magic] = offset
        return offset, len(self._out) - offset

    def _flush_data_block(self) -> None:
        """Write the data block under construction (if any) and index it."""
        if not self._block_cells:
            return
        offset, size = self._write_block(DATA, b"".join(self._block_cells))
        first_row = self._block_first_row
        if self._data_index:  # HBase indexes later blocks under a fake key just after the previous block's last row
            key = cell_key(midpoint_row(self._previous_block_last_row, first_row), TYPE_MAXIMUM)
        else:
            key = cell_key(first_row)
            self._first_data_offset = offset
        self._data_index.append(IndexEntry(key, offset, size))
        self._last_data_offset = offset
        self._total_uncompressed += HEADER_SIZE + self._block_bytes
        self._previous_block_last_row = self._last_row if self._last_row is not None else b""
        self._block_cells, self._block_bytes = [], 0

    def finish(self, file_info: Mapping[bytes, bytes], meta_blocks: Mapping[bytes, bytes]) -> bytes:
        """Close the last data block and write meta blocks, the load-on-open section and the trailer."""
        self._flush_data_block()
        meta_index = []
        for name in sorted(meta_blocks):
            meta_index.append(IndexEntry(name, *self._write_counted_block(META, meta_blocks[name])))
        load_on_open = len(self._out)
        data_index_payload = encode_root_index(self._data_index)
        self._write_block(ROOT_INDEX, data_index_payload)
        self._write_counted_block(ROOT_INDEX, encode_root_index(meta_index))
        file_info_offset = len(self._out)
        self._write_counted_block(FILE_INFO, encode_file_info({**file_info, **self._hbase_file_info()}))
        trailer = Trailer(
            file_info_offset, load_on_open, len(data_index_payload), self._total_uncompressed + TRAILER_SIZE,
            len(self._data_index), len(meta_index), self._entries, 1, self._first_data_offset,
            self._last_data_offset, self._comparator, CODEC_IDS[self._codec])
        return bytes(self._out + encode_trailer(trailer))

    def _write_counted_block(self, magic: bytes, payload: bytes) -> tuple[int, int]:
        """A non-data block HBase counts in the trailer's total uncompressed bytes (the root data index is not)."""
        self._total_uncompressed += HEADER_SIZE + len(payload)
        return self._write_block(magic, payload)

    def _hbase_file_info(self) -> dict[bytes, bytes]:
        entries = self._entries
        last_key = cell_key(self._last_row) if self._last_row is not None else None
        return hbase_file_info(last_key, self._key_bytes // entries if entries else 0,
                               self._value_bytes // entries if entries else 0)


def write_hfile(records: Iterable[tuple[bytes, bytes]], *, file_info: Mapping[bytes, bytes] | None = None,
                block_size: int = 64 * 1024, compression: str = "none",
                meta_blocks: Mapping[bytes, bytes] | None = None,
                comparator: str = HOODIE_KV_COMPARATOR) -> bytes:
    """The bytes of an HFile v3 holding `records` (key, value), which must ascend in unsigned byte order of key
    with no duplicates (ValueError otherwise).

    `file_info`: extra FileInfo entries (Hudi stores the Avro schema under b"schema"); keys starting with
    ``hfile.`` and HBase's own MVCC keys are reserved. `meta_blocks`: named meta blocks (Hudi stores its bloom
    filter under b"bloomFilter"). `compression`: "none" or "gz" (what Java's metadata table writes).
    `comparator`: the class name recorded in the trailer (readers ignore it)."""
    user_info = dict(file_info or {})
    for key in user_info:
        if key.startswith(RESERVED_PREFIX) or key in RESERVED_KEYS:
            raise ValueError(f"FileInfo key {key!r} is reserved for HBase's own entries")
    writer = HFileWriter(block_size=block_size, compression=compression, comparator=comparator)
    for key, value in records:
        writer.append(bytes(key), bytes(value))
    return writer.finish(user_info, dict(meta_blocks or {}))
