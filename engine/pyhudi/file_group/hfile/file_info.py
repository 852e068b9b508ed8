"""The FileInfo block: HFile's string-keyed metadata map.

Its payload is ``PBUF`` followed by a varint-delimited ``InfoProto`` whose repeated field 1 holds
``BytesBytesPair {first: key, second: value}`` entries, written in unsigned byte order of key (HBase keeps them in
a TreeMap). Besides Hudi's own entries (the Avro ``schema``, bloom filter type, min/max record key) HBase adds
``hfile.LASTKEY`` (omitted when the file is empty), ``hfile.AVG_KEY_LEN``, ``hfile.AVG_VALUE_LEN``,
``hfile.CREATE_TIME_TS``, ``MAX_MEMSTORE_TS_KEY`` and ``KEY_VALUE_VERSION``; see ``hbase_file_info``.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

from .encoding import MalformedError, decode_message, encode_message, read_delimited, write_uvarint

PBUF_MAGIC = b"PBUF"
LAST_KEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
MAX_MEMSTORE_TS = b"MAX_MEMSTORE_TS_KEY"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
RESERVED_KEYS = frozenset({MAX_MEMSTORE_TS, KEY_VALUE_VERSION})
RESERVED_PREFIX = b"hfile."


def hbase_file_info(last_key: bytes | None, avg_key_len: int, avg_value_len: int) -> dict[bytes, bytes]:
    """The entries HBase's writer adds at close (cells carry an MVCC timestamp: KEY_VALUE_VERSION 1, max TS 0).

    ``hfile.CREATE_TIME_TS`` is 0 because Hudi never sets the HFileContext's create time."""
    info = {
        AVG_KEY_LEN: struct.pack(">i", avg_key_len),
        AVG_VALUE_LEN: struct.pack(">i", avg_value_len),
        CREATE_TIME_TS: struct.pack(">q", 0),
        MAX_MEMSTORE_TS: struct.pack(">q", 0),
        KEY_VALUE_VERSION: struct.pack(">i", 1),
    }
    if last_key is not None:
        info[LAST_KEY] = last_key
    return info


def encode_file_info(info: Mapping[bytes, bytes]) -> bytes:
    """The payload of a FileInfo block."""
    pairs = [(1, encode_message([(1, key), (2, info[key])])) for key in sorted(info)]
    message = encode_message(list(pairs))
    return PBUF_MAGIC + write_uvarint(len(message)) + message


def decode_file_info(payload: bytes) -> dict[bytes, bytes]:
    """The map in a FileInfo block payload."""
    if payload[:4] != PBUF_MAGIC:
        raise MalformedError("FileInfo block does not start with PBUF")
    info = {}
    for number, pair in decode_message(read_delimited(payload, 4)):
        if number != 1 or not isinstance(pair, bytes):
            continue
        fields = dict(decode_message(pair))
        key, value = fields.get(1, b""), fields.get(2, b"")
        if not isinstance(key, bytes) or not isinstance(value, bytes):
            raise MalformedError("FileInfo entry is not a pair of byte strings")
        info[key] = value
    return info
