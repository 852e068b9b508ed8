"""A base file's bloom filter from, and into, its parquet footer metadata."""

from __future__ import annotations

from typing import Mapping

from pyhudi.file_group.bloom_filter.filters import BloomFilter
from pyhudi.file_group.bloom_filter.params import (FOOTER_BLOOM_KEY, FOOTER_MAX_KEY, FOOTER_MIN_KEY,
                                                   FOOTER_OLD_BLOOM_KEY, FOOTER_TYPE_KEY)

# the footer entries from_footer reads
FILTER_KEYS = (FOOTER_BLOOM_KEY, FOOTER_OLD_BLOOM_KEY, FOOTER_TYPE_KEY)


# ---------------------------------------------------------------------------------------------------------------
# footer helpers
# ---------------------------------------------------------------------------------------------------------------


def _footer_get(metadata: Mapping, key: str, raw: bool = False):
    """A footer value by str key from str or bytes entries; `raw`: bytes stay bytes (the Base64 filter)."""
    if key in metadata:
        value = metadata[key]
    else:
        value = metadata.get(key.encode("utf-8"))
    if isinstance(value, bytes) and not raw:
        value = value.decode("utf-8")
    return value


def from_footer(metadata: Mapping | None) -> BloomFilter | None:
    """The bloom filter stored in a parquet footer's key-value metadata (str or bytes keys, e.g.
    ``pyarrow.parquet.ParquetFile(p).metadata.metadata``), or None when the file has none. Like Hudi, falls
    back to the old ``com.uber.hoodie.bloomfilter`` key and to SIMPLE when no type code is present."""
    if not metadata:
        return None
    serialized = _footer_get(metadata, FOOTER_BLOOM_KEY, raw=True)
    if serialized is None:
        serialized = _footer_get(metadata, FOOTER_OLD_BLOOM_KEY, raw=True)
    if serialized is None:
        return None
    return BloomFilter.deserialize(serialized, _footer_get(metadata, FOOTER_TYPE_KEY))


def footer_metadata(bloom: BloomFilter, min_key: str | None, max_key: str | None) -> dict[str, str]:
    """The footer key-value pairs Hudi writes for a base file (filter, type code, min/max record key)."""
    out = {FOOTER_BLOOM_KEY: bloom.serialize(), FOOTER_TYPE_KEY: bloom.type_code}
    if min_key is not None:
        out[FOOTER_MIN_KEY] = min_key
    if max_key is not None:
        out[FOOTER_MAX_KEY] = max_key
    return out
