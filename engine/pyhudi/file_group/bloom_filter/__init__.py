"""Hudi's record-key bloom filters, bit-compatible with Apache Hudi 0.14/0.15.

Hudi base parquet files carry a bloom filter of their record keys in the footer key-value metadata
(``org.apache.hudi.bloomfilter`` + ``hoodie_bloom_filter_type_code``, next to ``hoodie_min_record_key`` /
``hoodie_max_record_key``). Two filter types exist:

``SIMPLE``
    One Hadoop-style bloom filter (``org.apache.hadoop.util.bloom.BloomFilter``, as ported into
    ``org.apache.hudi.common.bloom.InternalBloomFilter``). Serialized (big-endian, like ``DataOutput``) as::

        int32 version (= -1)  int32 nbHash  int8 hashType (1 = murmur)  int32 vectorSize
        ceil(vectorSize / 8) bytes of bits, bit ``i`` at byte ``i // 8``, mask ``1 << (i % 8)``

``DYNAMIC_V0``
    ``HoodieDynamicBoundedBloomFilter``: a list ("matrix") of such filters that grows by one row every
    ``num_entries`` keys until ``rows * num_entries >= max_entries``; after that keys are spread
    round-robin over the existing rows. Serialized as the same 13-byte header, then
    ``int32 nr, int32 currentNbRecord, int32 rows`` and every row as a full SIMPLE record (header + bits).

Both are Base64 (standard alphabet, padded) strings in the footer.

Keys are hashed as their UTF-8 bytes with Hadoop's MurmurHash (2.0, 32-bit; tail bytes sign-extended as Java
``byte`` -> ``int``), chained ``h_i = murmur(key, seed=h_{i-1})`` from seed 0, and bit ``i`` of a key is
``abs(h_i % vectorSize)`` with Java's truncating ``%`` on the signed 32-bit hash.

Everything record-level is vectorised with numpy: keys are grouped by their number of 4-byte blocks and the
murmur rounds run over whole columns of uint32s, so adding or testing ~1M keys costs well under a second of
numpy work per 200k keys instead of a Python loop per key.

Modules, one concept each: ``params`` (footer keys, type codes, sizing), ``hashing`` (keys -> bit indices),
``serialized`` (Hadoop's bit filter bytes), ``filters`` (SIMPLE and DYNAMIC_V0), ``footer`` (parquet footer
metadata). Import from ``pyhudi.file_group.bloom_filter``.
"""

from __future__ import annotations

from pyhudi.file_group.bloom_filter.filters import BloomFilter, DynamicBloomFilter, SimpleBloomFilter
from pyhudi.file_group.bloom_filter.footer import FILTER_KEYS, footer_metadata, from_footer
from pyhudi.file_group.bloom_filter.hashing import string_offsets_and_data
from pyhudi.file_group.bloom_filter.params import (DYNAMIC_V0, FOOTER_BLOOM_KEY, FOOTER_MAX_KEY, FOOTER_MIN_KEY,
                                                   FOOTER_OLD_BLOOM_KEY, FOOTER_TYPE_KEY, SIMPLE, bit_size,
                                                   num_hashes)

__all__ = [
    "BloomFilter",
    "SimpleBloomFilter",
    "DynamicBloomFilter",
    "FOOTER_BLOOM_KEY",
    "FILTER_KEYS",
    "FOOTER_OLD_BLOOM_KEY",
    "FOOTER_TYPE_KEY",
    "FOOTER_MIN_KEY",
    "FOOTER_MAX_KEY",
    "SIMPLE",
    "DYNAMIC_V0",
    "bit_size",
    "num_hashes",
    "from_footer",
    "footer_metadata",
    "string_offsets_and_data",
]
