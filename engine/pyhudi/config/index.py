"""Index config: which index tags incoming records, and the bloom and bucket settings (Hudi's HoodieIndexConfig)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pyhudi.config.core import POSITIVE, bool_value, declare, fraction, upper
from pyhudi.config.resolve import HoodieConfig, read_settings, setting

INDEX_TYPE = declare("hoodie.index.type", "SIMPLE", upper,
                     ("SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET", "INMEMORY"))
BLOOM_NUM_ENTRIES = declare("hoodie.index.bloom.num_entries", 60000, POSITIVE)
BLOOM_FPP = declare("hoodie.index.bloom.fpp", 0.000000001, fraction)
BLOOM_FILTER_TYPE = declare("hoodie.bloom.index.filter.type", "DYNAMIC_V0", upper, ("SIMPLE", "DYNAMIC_V0"))
BLOOM_DYNAMIC_MAX_ENTRIES = declare("hoodie.bloom.index.filter.dynamic.max.entries", 100000, POSITIVE)
BLOOM_PRUNE_BY_RANGES = declare("hoodie.bloom.index.prune.by.ranges", True, bool_value)
BLOOM_UPDATE_PARTITION_PATH = declare("hoodie.bloom.index.update.partition.path", True, bool_value,
                                      doc="GLOBAL_BLOOM: a key arriving with a new partition moves there.")
SIMPLE_UPDATE_PARTITION_PATH = declare("hoodie.simple.index.update.partition.path", True, bool_value,
                                       doc="GLOBAL_SIMPLE: a key arriving with a new partition moves there.")
BUCKET_ENGINE = declare("hoodie.index.bucket.engine", "SIMPLE", upper, ("SIMPLE", "CONSISTENT_HASHING"))
BUCKET_NUM_BUCKETS = declare("hoodie.bucket.index.num.buckets", 256, POSITIVE)
BUCKET_HASH_FIELD = declare("hoodie.bucket.index.hash.field", None,
                            doc="Fields hashed to pick a bucket; default: the record key fields.")


GLOBAL_INDEX_TYPES = ("GLOBAL_SIMPLE", "GLOBAL_BLOOM")   # a key is unique across partitions


@dataclass(frozen=True)
class IndexConfig:
    """The index options of one write, parsed once."""

    index_type: str = setting(INDEX_TYPE)
    bloom_update_partition_path: bool = setting(BLOOM_UPDATE_PARTITION_PATH)
    simple_update_partition_path: bool = setting(SIMPLE_UPDATE_PARTITION_PATH)
    bloom_prune_by_ranges: bool = setting(BLOOM_PRUNE_BY_RANGES)
    bucket_engine: str = setting(BUCKET_ENGINE)
    num_buckets: int = setting(BUCKET_NUM_BUCKETS)
    bucket_hash_field: str | None = setting(BUCKET_HASH_FIELD)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | HoodieConfig | None) -> IndexConfig:
        return read_settings(cls, options)

    @property
    def is_global(self) -> bool:
        """A key is unique across partitions (INMEMORY is looked up as GLOBAL_SIMPLE: index/__init__.py)."""
        return self.index_type in GLOBAL_INDEX_TYPES or self.index_type == "INMEMORY"

    @property
    def update_partition_path(self) -> bool:
        """Global indexes: whether a key arriving with a new partition moves there."""
        return self.bloom_update_partition_path if self.index_type == "GLOBAL_BLOOM" \
            else self.simple_update_partition_path
