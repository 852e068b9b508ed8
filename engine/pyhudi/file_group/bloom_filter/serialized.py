"""Hadoop's serialized bit filter (versioned header, bit vector) and the base64 text Hudi keeps in the footer."""

from __future__ import annotations

import binascii
import struct

import numpy as np

from pyhudi.errors import CorruptFileError
from pyhudi.file_group.bloom_filter.params import FOOTER_BLOOM_KEY, HEADER, JENKINS_HASH, MURMUR_HASH, VERSION


# ---------------------------------------------------------------------------------------------------------------
# one Hadoop bloom filter (a SIMPLE filter, or one row of a dynamic one)
# ---------------------------------------------------------------------------------------------------------------


class BitFilter:
    """org.apache.hadoop.util.bloom.BloomFilter: header + bit vector. A filter read from a footer keeps its bytes
    packed, as the footer's Base64 text (Base64Span: a lookup decodes only the bytes its bits are in; unpacking a
    2.9M-bit vector costs more than a lookup's whole probe); the first set() unpacks them to one bool per bit, the
    form a writer adds keys to."""

    __slots__ = ("vector_size", "nb_hash", "hash_type", "_bits", "_packed")

    def __init__(self, vector_size: int, nb_hash: int, hash_type: int = MURMUR_HASH, bits: np.ndarray | None = None,
                 packed: "np.ndarray | Base64Span | None" = None):
        self.vector_size = vector_size
        self.nb_hash = nb_hash
        self.hash_type = hash_type
        self._packed = packed
        self._bits = bits if bits is not None or packed is not None else np.zeros(vector_size, dtype=np.bool_)

    @property
    def bits(self) -> np.ndarray:
        """One bool per bit (unpacked on first use)."""
        if self._bits is None:
            packed = self._packed.array() if isinstance(self._packed, Base64Span) else self._packed
            self._bits = np.unpackbits(packed, bitorder="little", count=self.vector_size).view(np.bool_)
            self._packed = None
        return self._bits

    def header(self) -> bytes:
        return HEADER.pack(VERSION, self.nb_hash, self.hash_type, self.vector_size)

    def to_bytes(self) -> bytes:
        packed = self._packed if self._packed is not None else np.packbits(self._bits, bitorder="little")
        return self.header() + packed.tobytes()

    @staticmethod
    def n_bytes(vector_size: int) -> int:
        return (vector_size + 7) // 8

    def set(self, positions: np.ndarray) -> None:
        self.bits[positions.ravel()] = True

    def test(self, positions: np.ndarray) -> np.ndarray:
        if self._packed is None:
            return self._bits[positions].all(axis=1)
        return ((self._packed[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1).astype(np.bool_).all(axis=1)


def read_header(raw: bytes, pos: int, what: str) -> tuple[int, int, int, int]:
    """Parse a Hadoop Filter header at ``pos``; returns (nbHash, hashType, vectorSize, new pos)."""
    if len(raw) - pos < 4:
        raise CorruptFileError(f"bloom filter {what} is truncated: header needs 4 more bytes at offset {pos}, "
                               f"the filter has {len(raw)} bytes")
    (version,) = struct.unpack_from(">i", read_bytes(raw, pos, 4))
    if version > 0:
        raise CorruptFileError(
            f"bloom filter {what} uses Hadoop's old unversioned format with Jenkins hashing (nbHash={version}); "
            "pyhudi only supports the versioned murmur-hash format Hudi writes. Re-write the file with Hudi >= 0.5."
        )
    if version != VERSION:
        raise CorruptFileError(f"bloom filter {what} has unsupported version {version} (expected {VERSION})")
    if len(raw) - pos < HEADER.size:
        raise CorruptFileError(f"bloom filter {what} is truncated inside its {HEADER.size}-byte header "
                               f"at offset {pos} (filter has {len(raw)} bytes)")
    _, nb_hash, hash_type, vector_size = HEADER.unpack_from(read_bytes(raw, pos, HEADER.size))
    if hash_type != MURMUR_HASH:
        kind = "Jenkins" if hash_type == JENKINS_HASH else "unknown"
        raise CorruptFileError(f"bloom filter {what} uses hash type {hash_type} ({kind}); "
                               f"pyhudi only supports murmur hash (type {MURMUR_HASH}), which Hudi always writes")
    if nb_hash <= 0:
        raise CorruptFileError(f"bloom filter {what} has an invalid number of hash functions: {nb_hash}")
    if vector_size <= 0:
        raise CorruptFileError(f"bloom filter {what} has an invalid bit-vector size: {vector_size}")
    return nb_hash, hash_type, vector_size, pos + HEADER.size


def read_bit_filter(raw: bytes, pos: int, what: str) -> tuple[BitFilter, int]:
    nb_hash, hash_type, vector_size, pos = read_header(raw, pos, what)
    nbytes = BitFilter.n_bytes(vector_size)
    if len(raw) - pos < nbytes:
        raise CorruptFileError(
            f"bloom filter {what} is truncated: its {vector_size}-bit vector needs {nbytes} bytes at offset {pos} "
            f"but only {len(raw) - pos} remain"
        )
    if isinstance(raw, Base64Bytes):
        packed = Base64Span(raw, pos, nbytes)
    else:
        packed = np.frombuffer(raw, dtype=np.uint8, count=nbytes, offset=pos)
    return BitFilter(vector_size, nb_hash, hash_type, packed=packed), pos + nbytes


def read_bytes(raw: "bytes | Base64Bytes", pos: int, length: int) -> bytes:
    """`length` bytes of a filter's binary form at `pos`."""
    return raw.read(pos, length) if isinstance(raw, Base64Bytes) else raw[pos:pos + length]


def decode_base64(serialized, type_code: str) -> "Base64Bytes":
    """The filter's bytes from its footer text (str, or bytes as a parquet footer stores it), decoded only where
    read (Base64Bytes). The padding is checked here; a character outside the Base64 alphabet where the filter is
    read raises CorruptFileError there (checking all ~860 KB of a filter cost more than a lookup)."""
    if isinstance(serialized, str):
        try:
            serialized = serialized.encode("ascii")
        except UnicodeEncodeError as exc:
            raise CorruptFileError(f"{type_code} bloom filter string is not Base64 text: {exc}") from exc
    if not isinstance(serialized, (bytes, bytearray)):
        raise CorruptFileError(f"{type_code} bloom filter must be a Base64 string, got {type(serialized).__name__}")
    text = serialized.strip() if serialized[:1].isspace() or serialized[-1:].isspace() else serialized
    if not text:
        raise CorruptFileError(f"{type_code} bloom filter string is empty")
    # Java's Base64 decoder accepts missing padding; Python's strict mode does not.
    if len(text) % 4:
        text = bytes(text) + b"=" * (-len(text) % 4)
    first_pad = text.find(b"=")
    if first_pad >= 0 and (first_pad < len(text) - 2 or text[first_pad:].strip(b"=")):
        raise _not_base64(type_code, "padding", serialized)
    return Base64Bytes(bytes(text), type_code)


def _not_base64(type_code: str, what: str, serialized: bytes) -> CorruptFileError:
    return CorruptFileError(
        f"{type_code} bloom filter string is not valid Base64 (a {what} outside the Base64 alphabet or "
        f"misplaced); the footer value '{FOOTER_BLOOM_KEY}' is corrupt (first chars: {serialized[:24]!r})")


# ---------------------------------------------------------------------------------------------------------------
# Base64 text decoded where it is read
# ---------------------------------------------------------------------------------------------------------------

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_STRAY = np.uint32(1 << 8)                       # a character outside the alphabet
_SEXTET = np.full(256, _STRAY, dtype=np.uint32)   # character -> its 6 bits ('=' padding reads as 0)
_SEXTET[np.frombuffer(_ALPHABET, dtype=np.uint8)] = np.arange(64, dtype=np.uint32)
_SEXTET[ord("=")] = 0


class Base64Bytes:
    """The bytes a Base64 text stands for, decoded only where read: byte i is in the 4 characters of group i // 3.
    An index lookup tests a few hundred bits of a filter stored as ~860 KB of text; decoding (or checking) all of
    it cost more than the rest of the lookup. The characters read are checked as they are decoded."""

    __slots__ = ("text", "chars", "size", "type_code")

    def __init__(self, text: bytes, type_code: str = ""):
        self.text = text
        self.type_code = type_code
        self.chars = np.frombuffer(text, dtype=np.uint8)
        self.size = len(text) // 4 * 3 - (2 - len(text[-2:].rstrip(b"=")))   # padding: the last two at most

    def __len__(self) -> int:
        return self.size

    def read(self, start: int, length: int) -> bytes:
        """Bytes [start, start + length), from the groups that hold them."""
        first, end = start // 3, -(-(start + length) // 3)
        try:
            decoded = binascii.a2b_base64(self.text[first * 4:end * 4], strict_mode=True)
        except binascii.Error:
            raise self._stray() from None
        return decoded[start - first * 3:start - first * 3 + length]

    def at(self, index: np.ndarray) -> np.ndarray:
        """The bytes at `index` (any shape of positions), as uint8."""
        group, within = np.divmod(index.astype(np.int64), 3)
        sextets = _SEXTET[self.chars[(group * 4)[..., None] + np.arange(4)]]
        if (sextets >= _STRAY).any():
            raise self._stray()
        word = (sextets[..., 0] << 18) | (sextets[..., 1] << 12) | (sextets[..., 2] << 6) | sextets[..., 3]
        return ((word >> (16 - 8 * within).astype(np.uint32)) & 0xFF).astype(np.uint8)

    def _stray(self) -> CorruptFileError:
        at = self.text.translate(None, _ALPHABET + b"=")
        return _not_base64(self.type_code, f"character {at[:1]!r}", self.text)


class Base64Span:
    """A bit vector's packed bytes inside a Base64Bytes: what BitFilter.test indexes."""

    __slots__ = ("source", "start", "length")

    def __init__(self, source: Base64Bytes, start: int, length: int):
        self.source, self.start, self.length = source, start, length

    def __getitem__(self, index: np.ndarray) -> np.ndarray:
        return self.source.at(np.asarray(index) + self.start)

    def tobytes(self) -> bytes:
        return self.source.read(self.start, self.length)

    def array(self) -> np.ndarray:
        return np.frombuffer(self.tobytes(), dtype=np.uint8)
