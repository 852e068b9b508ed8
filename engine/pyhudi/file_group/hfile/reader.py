"""Reading an HFile v3 held in memory: the trailer, the load-on-open section, then data blocks on demand.

Opening reads the trailer and the load-on-open section (root data index, meta index, FileInfo). `get` walks the
index from the root down to one data block (through leaf/intermediate index blocks in multi-level files written
by HBase); `records` walks the data blocks in file order. Every block's checksums are verified when it is read,
and any malformed byte surfaces as a CorruptFileError naming the file.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable, Iterator
from typing import TypeVar

from pyhudi.errors import CorruptFileError

from .block import (
    CODEC_NAMES,
    DATA,
    ENCODED_DATA,
    FILE_INFO,
    INTERMEDIATE_INDEX,
    LEAF_INDEX,
    META,
    ROOT_INDEX,
    Block,
    decode_block,
)
from .cell import iter_cells
from .encoding import MalformedError
from .file_info import decode_file_info
from .index import IndexEntry, decode_non_root_index, decode_root_index, entry_rows, find_block
from .trailer import TRAILER_SIZE, Trailer, decode_trailer

T = TypeVar("T")


class HFileReader:
    """An HFile's records and FileInfo; `name` is only used in error messages."""

    def __init__(self, data: bytes, name: str = "") -> None:
        self._data = bytes(data)
        self._name = name or "<in-memory hfile>"
        self._trailer: Trailer = self._guard(lambda: decode_trailer(self._data))
        self._codec = self._guard(self._codec_name)
        self._limit = len(self._data) - TRAILER_SIZE
        self._root: list[IndexEntry] = []
        self._meta_index: dict[bytes, IndexEntry] = {}
        self.file_info: dict[bytes, bytes] = {}
        self._cached: Block | None = None  # the last block `get` read: sorted lookups often hit it again
        self._cached_cells: tuple[int, list[bytes], list[bytes]] = (-1, [], [])  # its offset, rows and values
        self._guard(self._load_on_open)

    def _guard(self, action: Callable[[], T]) -> T:
        """Run `action`, turning any decoding failure into a CorruptFileError that names the file."""
        try:
            return action()
        except (MalformedError, IndexError, struct.error, UnicodeDecodeError, OverflowError) as error:
            raise CorruptFileError(f"corrupt HFile {self._name}: {error}", path=self._name) from None

    def _codec_name(self) -> str:
        codec = CODEC_NAMES.get(self._trailer.codec_id)
        if codec is None:
            raise MalformedError(f"compression codec id {self._trailer.codec_id} is not supported (only NONE and GZ)")
        return codec

    def _load_on_open(self) -> None:
        root = self._block(self._trailer.load_on_open_offset, (ROOT_INDEX,))
        self._root = decode_root_index(root.payload, self._trailer.data_index_count)
        self._root_rows = entry_rows(self._root)
        meta = self._block(root.end, (ROOT_INDEX,))
        entries = decode_root_index(meta.payload, self._trailer.meta_index_count)
        self._meta_index = {entry.key: entry for entry in entries}
        self.file_info = decode_file_info(self._block(meta.end, (FILE_INFO,)).payload)

    def _block(self, offset: int, magics: tuple[bytes, ...]) -> Block:
        cached = self._cached
        block = cached if cached and cached.offset == offset else decode_block(self._data, offset, self._limit,
                                                                               self._codec)
        self._cached = block
        if block.magic not in magics:
            expected = " or ".join(m.decode("latin-1") for m in magics)
            raise MalformedError(f"block at offset {offset} is {block.magic.decode('latin-1')}, expected {expected}")
        return block

    def __len__(self) -> int:
        """The number of records, from the trailer."""
        return self._trailer.entry_count

    def records(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) in key order; checks the count against the trailer's at the end."""
        count = 0
        offset = self._trailer.first_data_block_offset
        while 0 <= offset <= self._trailer.last_data_block_offset:
            block = self._guard(lambda: decode_block(self._data, offset, self._limit, self._codec))
            if block.magic in (DATA, ENCODED_DATA):
                cells = self._guard(lambda: list(iter_cells(block.payload)))
                count += len(cells)
                yield from cells
            offset = block.end
        if count != self._trailer.entry_count:
            raise CorruptFileError(f"corrupt HFile {self._name}: read {count} records, the trailer says "
                                   f"{self._trailer.entry_count}", path=self._name)

    def get(self, key: bytes) -> bytes | None:
        """The value of `key`, or None; reads only the index blocks and the one data block on its path."""
        return self._guard(lambda: self._lookup(bytes(key)))

    def _lookup(self, key: bytes) -> bytes | None:
        entries, rows = self._root, self._root_rows
        for _ in range(self._trailer.num_data_index_levels - 1):
            entry = find_block(entries, rows, key)
            if entry is None:
                return None
            entries = decode_non_root_index(self._block(entry.offset, (INTERMEDIATE_INDEX, LEAF_INDEX)).payload)
            rows = entry_rows(entries)
        entry = find_block(entries, rows, key)
        if entry is None:
            return None
        block_rows, values = self._data_cells(entry.offset)
        position = bisect.bisect_left(block_rows, key)
        return values[position] if position < len(block_rows) and block_rows[position] == key else None

    def _data_cells(self, offset: int) -> tuple[list[bytes], list[bytes]]:
        """The rows and values of the data block at `offset`, kept for the next lookup."""
        cached_offset, rows, values = self._cached_cells
        if cached_offset != offset:
            cells = list(iter_cells(self._block(offset, (DATA, ENCODED_DATA)).payload))
            rows, values = [row for row, _ in cells], [value for _, value in cells]
            self._cached_cells = (offset, rows, values)
        return rows, values

    def meta_block(self, name: bytes) -> bytes | None:
        """The payload of the meta block called `name` (Hudi's bloom filter is b"bloomFilter"), or None."""
        entry = self._meta_index.get(name)
        if entry is None:
            return None
        return self._guard(lambda: self._block(entry.offset, (META,)).payload)
