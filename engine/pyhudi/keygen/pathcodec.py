"""Partition-path escaping as Hudi does it (``PartitionPathEncodeUtils``, itself Hive's ``FileUtils``).

With ``hoodie.datasource.write.partitionpath.urlencode=true`` Hudi escapes a fixed set of ASCII characters
(control characters, ``"#%'*/:=?\\{[]^`` and DEL) as ``%XX`` with upper-case hex; everything else, including
every non-ASCII character, stays as it is. This is *not* ``java.net.URLEncoder`` (space and ``+`` are kept),
and ``unescape_path_name`` is the exact inverse for any string ``escape_path_name`` produced.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

#: The value Hudi writes for a null or empty partition value.
DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"
#: The marker Hudi used before 0.12 (still recognised by readers).
DEPRECATED_DEFAULT_PARTITION_PATH = "default"

_ESCAPED = frozenset(
    [chr(c) for c in range(0x00, 0x20)]
    + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "[", "]", "^"]
)
# RE2-compatible class of the characters above (used to skip arrays that need no escaping at all).
_ESCAPED_RE2 = r'[\x00-\x1f"#%\x27*/:=?\\\x7f{\[\]^]'
_UNESCAPE_RE = re.compile(r"%([0-9A-Fa-f]{2})")


def escape_path_name(value: str) -> str:
    """Escape one partition value; an empty value becomes ``__HIVE_DEFAULT_PARTITION__`` (as in Hudi)."""
    if not value:
        return DEFAULT_PARTITION_PATH
    if not any(ch in _ESCAPED for ch in value):
        return value
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in value)


def unescape_path_name(value: str) -> str:
    """Decode every ``%XX`` (two hex digits) back to its character, leaving anything else alone."""
    if "%" not in value:
        return value
    return _UNESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), value)


def escape_array(values: pa.Array) -> pa.Array:
    """Vectorised :func:`escape_path_name` over a string array (nulls stay null).

    Partition values repeat a lot, so only the distinct values are escaped in Python.
    """
    if len(values) == 0 or not pc.any(pc.match_substring_regex(values, _ESCAPED_RE2)).as_py():
        return values
    return map_distinct(values, escape_path_name)


def map_distinct(values: pa.Array, func) -> pa.Array:
    """Apply a Python ``str -> str`` function to the distinct non-null values of an array, then expand back.

    ``func`` receives Python values (``as_py()``) and must return ``str``.
    """
    encoded = values.dictionary_encode()
    dictionary = encoded.dictionary.to_pylist()
    mapped = pa.array([func(v) for v in dictionary], pa.string())
    return mapped.take(encoded.indices)
