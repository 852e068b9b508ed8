"""HFile v3 blocks: the 33-byte header, the (optionally compressed) payload and the CRC32C chunk checksums.

Every block is laid out as::

    magic (8) | int32 on-disk size without header | int32 uncompressed payload size | int64 previous block offset
    | int8 checksum type (2 = CRC32C) | int32 bytes per checksum (16384) | int32 on-disk data size with header
    | payload, compressed as the trailer says | one big-endian CRC32C per 16 KB chunk of header + payload

"Previous block offset" is the offset of the previous block of the same type (-1 for the first), as HBase's
block writer tracks it. GZ payloads are a full gzip member with a zeroed header (Java's GZIPOutputStream at the
default level 6): zlib at level 6 reproduces Java's bytes exactly.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from .crc32c import crc32c
from .encoding import MalformedError

DATA = b"DATABLK*"
ENCODED_DATA = b"DATABLKE"
LEAF_INDEX = b"IDXLEAF2"
META = b"METABLKc"
INTERMEDIATE_INDEX = b"IDXINTE2"
ROOT_INDEX = b"IDXROOT2"
FILE_INFO = b"FILEINF2"
BLOOM_CHUNK = b"BLMFBLK2"
BLOOM_META = b"BLMFMET2"
KNOWN_MAGICS = frozenset({DATA, ENCODED_DATA, LEAF_INDEX, META, INTERMEDIATE_INDEX, ROOT_INDEX, FILE_INFO,
                          BLOOM_CHUNK, BLOOM_META, b"DELFMET2", b"TRABLK\"$"})

CODEC_IDS = {"gz": 1, "none": 2}
CODEC_NAMES = {codec_id: name for name, codec_id in CODEC_IDS.items()}
CHECKSUM_NULL, CHECKSUM_CRC32, CHECKSUM_CRC32C = 0, 1, 2
BYTES_PER_CHECKSUM = 16 * 1024

_HEADER = struct.Struct(">8siiqBii")
HEADER_SIZE = _HEADER.size  # 33
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"


@dataclass(frozen=True)
class Block:
    """One decoded block: its magic, uncompressed payload and where the next block starts."""

    magic: bytes
    payload: bytes
    offset: int
    end: int


def compress(payload: bytes, codec: str) -> bytes:
    """The payload as Java's compression stream writes it."""
    if codec == "none":
        return payload
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    raw = deflater.compress(payload) + deflater.flush()
    return _GZIP_HEADER + raw + struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


def decompress(stored: bytes, codec: str, expected_size: int) -> bytes:
    """The payload of a stored block, checked against the header's uncompressed size."""
    if codec == "none":
        payload = stored
    else:
        try:
            payload = zlib.decompress(stored, 16 + zlib.MAX_WBITS)
        except zlib.error as error:
            raise MalformedError(f"gzip payload does not inflate ({error})") from None
    if len(payload) != expected_size:
        raise MalformedError(f"payload is {len(payload)} bytes, header says {expected_size}")
    return payload


def _checksums(covered: bytes, checksum_type: int, chunk: int) -> bytes:
    checksum = crc32c if checksum_type == CHECKSUM_CRC32C else zlib.crc32
    view = memoryview(covered)
    return b"".join(struct.pack(">I", checksum(view[i:i + chunk])) for i in range(0, len(covered), chunk))


def encode_block(magic: bytes, payload: bytes, prev_offset: int, codec: str) -> bytes:
    """A whole block, header to checksums, as HBase 2.x writes it."""
    stored = compress(payload, codec)
    data_size_with_header = HEADER_SIZE + len(stored)
    chunks = -(-data_size_with_header // BYTES_PER_CHECKSUM)
    header = _HEADER.pack(magic, len(stored) + 4 * chunks, len(payload), prev_offset, CHECKSUM_CRC32C,
                          BYTES_PER_CHECKSUM, data_size_with_header)
    covered = header + stored
    return covered + _checksums(covered, CHECKSUM_CRC32C, BYTES_PER_CHECKSUM)


def decode_block(data: bytes, offset: int, limit: int, codec: str) -> Block:
    """The block at `offset`, which must end by `limit`; checksums are verified unless the type is NULL."""
    if offset < 0 or offset + HEADER_SIZE > limit:
        raise MalformedError(f"block header at offset {offset} lies outside the block section (ends at {limit})")
    magic, on_disk, uncompressed, _, checksum_type, per_checksum, data_with_header = \
        _HEADER.unpack_from(data, offset)
    if magic not in KNOWN_MAGICS:
        raise MalformedError(f"unknown block magic {magic!r} at offset {offset}")
    end = offset + HEADER_SIZE + on_disk
    if on_disk < 0 or uncompressed < 0 or end > limit or not HEADER_SIZE <= data_with_header <= end - offset:
        raise MalformedError(f"{magic.decode('latin-1')} block at offset {offset} has impossible sizes")
    covered = data[offset:offset + data_with_header]
    _verify_checksums(covered, data[offset + data_with_header:end], checksum_type, per_checksum, offset)
    payload = decompress(covered[HEADER_SIZE:], codec, uncompressed)
    return Block(magic, payload, offset, end)


def _verify_checksums(covered: bytes, stored: bytes, checksum_type: int, per_checksum: int, offset: int) -> None:
    if checksum_type == CHECKSUM_NULL:
        return
    if checksum_type not in (CHECKSUM_CRC32, CHECKSUM_CRC32C) or per_checksum <= 0:
        raise MalformedError(f"block at offset {offset} has checksum type {checksum_type} / chunk {per_checksum}")
    if _checksums(covered, checksum_type, per_checksum) != stored:
        raise MalformedError(f"checksum mismatch in the block at offset {offset}")
