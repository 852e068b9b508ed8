"""The fixed 4096-byte trailer that ends every HFile and says where everything else is.

Layout (HBase ``FixedFileTrailer`` for version 3): magic ``TRABLK"$``, the ``TrailerProto`` message preceded by
its varint length, zero padding, and finally an int32 ``minor << 24 | major`` (HBase 2.x writes 3.3). A reader
starts here: the load-on-open offset points at the root data index, which the meta index and FileInfo follow.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .encoding import MalformedError, decode_message, encode_message, read_delimited, write_uvarint

TRAILER_SIZE = 4096
TRAILER_MAGIC = b'TRABLK"$'
MAJOR_VERSION = 3
MINOR_VERSION = 3
# What Hudi's HFile writers record as the comparator (HBase's ``KeyValue$KVComparator`` in some HBase-written test
# files); readers ignore it, hudi-rs included.
HOODIE_KV_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"

_FIELDS = ("file_info_offset", "load_on_open_offset", "uncompressed_data_index_size", "total_uncompressed_bytes",
           "data_index_count", "meta_index_count", "entry_count", "num_data_index_levels",
           "first_data_block_offset", "last_data_block_offset")  # protobuf fields 1..10


@dataclass(frozen=True)
class Trailer:
    """The TrailerProto fields HBase sets (protobuf field numbers 1..12, in order)."""

    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int  # -1 when the file has no data block
    last_data_block_offset: int
    comparator: str
    codec_id: int


def encode_trailer(trailer: Trailer) -> bytes:
    """The 4096 trailer bytes."""
    fields: list[tuple[int, int | bytes]] = [(n + 1, getattr(trailer, name)) for n, name in enumerate(_FIELDS)]
    fields += [(11, trailer.comparator.encode("utf-8")), (12, trailer.codec_id)]
    message = encode_message(fields)
    body = TRAILER_MAGIC + write_uvarint(len(message)) + message
    version = struct.pack(">I", MINOR_VERSION << 24 | MAJOR_VERSION)
    return body + bytes(TRAILER_SIZE - len(body) - len(version)) + version


def decode_trailer(data: bytes) -> Trailer:
    """The trailer at the end of `data`."""
    if len(data) < TRAILER_SIZE:
        raise MalformedError(f"{len(data)} bytes is shorter than the {TRAILER_SIZE}-byte trailer")
    start = len(data) - TRAILER_SIZE
    if data[start:start + 8] != TRAILER_MAGIC:
        raise MalformedError(f"trailer magic {data[start:start + 8]!r} is not {TRAILER_MAGIC!r} (truncated file?)")
    (version,) = struct.unpack_from(">I", data, len(data) - 4)
    if version & 0xFFFFFF != MAJOR_VERSION:
        raise MalformedError(f"HFile major version {version & 0xFFFFFF} is not 3")
    values = dict(decode_message(read_delimited(data[start:len(data) - 4], 8)))
    ints = {name: _signed(values.get(n + 1, 0)) for n, name in enumerate(_FIELDS)}
    ints["num_data_index_levels"] = ints["num_data_index_levels"] or 1
    comparator = values.get(11, b"")
    codec_id = values.get(12, 2)
    if not isinstance(comparator, bytes) or not isinstance(codec_id, int):
        raise MalformedError("trailer fields have the wrong protobuf types")
    return Trailer(**ints, comparator=comparator.decode("utf-8", "replace"), codec_id=codec_id)


def _signed(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise MalformedError("a numeric trailer field is length-delimited")
    return value - (1 << 64) if value >= 1 << 63 else value
