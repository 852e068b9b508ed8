"""A few key-value entries of a parquet footer, found in the footer's bytes without parsing it.

A Hudi base file's footer is ~1 MB: its bloom filter is Base64 text in the key-value metadata. The bloom index
reads one footer per file it checks, and the driver reads the key range of every latest base file. Parsing the
whole thrift FileMetaData (pyarrow) and copying every entry out costs milliseconds per file; reading the footer's
bytes and locating the wanted entries costs a fraction of that.

The footer is thrift compact protocol (parquet-mr, Hudi's writer, and pyarrow both write it so). Its key-value
metadata is a list of KeyValue structs, each encoded as: field header 0x18 (field 1, binary), varint length, the
key's bytes, field header 0x18 (field 2, binary), varint length, the value's bytes, stop byte 0x00. An entry is
taken only in exactly that shape, searched from the end (the key-value list follows the schema and row groups);
anything else - a footer that is encrypted or not compact, an entry without a value - returns None, and the
caller parses the footer with pyarrow instead.
"""

from __future__ import annotations

MAGIC = b"PAR1"
_BINARY_FIELD_1 = b"\x18"   # compact protocol: field id delta 1, type binary (KeyValue.key, then .value)
_STOP = 0
_WALK = 256     # field headers compared from the end before the rest is searched whole


def footer_bytes(source, tail: int | None = None) -> bytes | None:
    """The thrift footer of an open parquet file (a pyarrow NativeFile), or only its last `tail` bytes; None if
    the file does not end in a plain parquet footer."""
    size = source.size()
    if size < 12:
        return None
    end = source.read_at(8, size - 8)
    if end[4:] != MAGIC:
        return None
    length = int.from_bytes(end[:4], "little")
    if length <= 0 or length > size - 12:
        return None
    if tail is not None and tail < length:
        return source.read_at(tail, size - 8 - tail)
    return source.read_at(length, size - 8 - length)


def find_entries(footer: bytes, keys: tuple[bytes, ...]) -> dict[bytes, bytes] | None:
    """{key: value} for the `keys` present in the footer's key-value metadata (absent keys are left out); None
    when an entry is not in the expected encoding."""
    out = {}
    for index, at in _last_occurrences(footer, [_BINARY_FIELD_1 + _varint(len(key)) + key for key in keys]):
        if at < 0:
            continue
        if footer[at:at + 1] != _BINARY_FIELD_1:
            return None
        length, at = _read_varint(footer, at + 1)
        end = at + length
        if length < 0 or end >= len(footer) or footer[end] != _STOP:
            return None
        out[keys[index]] = footer[at:end]
    return out


def _last_occurrences(footer: bytes, patterns: list[bytes]):
    """(index, position just after) of the last occurrence of each pattern, -1 when absent: what ``rfind`` gives.

    Every pattern starts with the field header byte, which Base64 text (the bloom filter, ~1 MB) never holds: the
    field headers are found from the end with ``rfind`` of that one byte (memrchr, which jumps over the filter),
    and the patterns compared there. ``rfind`` of a whole pattern would compare its way through the filter, twice
    per lookup - once for Hudi's old filter key, which is absent. After _WALK headers, the rest of the footer
    (its schema and row groups) is searched with ``rfind``."""
    found = [-1] * len(patterns)
    todo = set(range(len(patterns)))
    at = len(footer)
    for _ in range(_WALK):
        if not todo:
            break
        at = footer.rfind(_BINARY_FIELD_1, 0, at)
        if at < 0:
            todo.clear()
            break
        for i in list(todo):
            if footer.startswith(patterns[i], at):
                found[i] = at
                todo.discard(i)
    for i in todo:   # positions before `at` (every header from `at` on was compared)
        found[i] = footer.rfind(patterns[i], 0, at + len(patterns[i]) - 1)
    return [(i, p + len(patterns[i]) if p >= 0 else -1) for i, p in enumerate(found)]


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    """(value, position after it); value -1 when the bytes end first."""
    value, shift = 0, 0
    while at < len(data):
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
    return -1, at
