"""Hudi's bloom filter parameters: parquet footer keys, filter type codes, Hadoop Filter constants, and sizing from
the number of entries and the false-positive rate (bit_size, num_hashes), with Java's int arithmetic."""

from __future__ import annotations

import math
import struct


FOOTER_BLOOM_KEY = "org.apache.hudi.bloomfilter"
#: Footer key of filters written by very old (com.uber.hoodie) versions; read-only.
FOOTER_OLD_BLOOM_KEY = "com.uber.hoodie.bloomfilter"
FOOTER_TYPE_KEY = "hoodie_bloom_filter_type_code"
FOOTER_MIN_KEY = "hoodie_min_record_key"
FOOTER_MAX_KEY = "hoodie_max_record_key"

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"

VERSION = -1  # Hadoop Filter's "versioned" format marker
MURMUR_HASH = 1  # org.apache.hadoop.util.hash.Hash.MURMUR_HASH
JENKINS_HASH = 0
HEADER = struct.Struct(">iibi")  # version, nbHash, hashType, vectorSize
DYN_FIELDS = struct.Struct(">iii")  # nr, currentNbRecord, number of rows
INT_MAX = 2**31 - 1


def i32(value: int) -> int:
    """Wrap a Python int to a Java int (two's complement, 32 bits)."""
    return ((value + 2**31) % 2**32) - 2**31


def _java_int_cast(value: float) -> int:
    """Java's ``(int) double``: NaN -> 0, saturating at the int range."""
    if math.isnan(value):
        return 0
    if value >= INT_MAX:
        return INT_MAX
    if value <= -(2**31):
        return -(2**31)
    return int(value)


def bit_size(num_entries: int, fpp: float) -> int:
    """Number of bits Hudi gives a filter for ``num_entries`` keys at false-positive rate ``fpp``
    (``BloomFilterUtils.getBitSize``)."""
    log2_squared = math.log(2) * math.log(2)
    return _java_int_cast(math.ceil(num_entries * (-math.log(fpp) / log2_squared)))


def num_hashes(bits: int, num_entries: int) -> int:
    """Number of hash functions Hudi uses for a filter of ``bits`` bits (``BloomFilterUtils.getNumHashes``)."""
    return _java_int_cast(math.ceil(math.log(2) * bits / num_entries))
