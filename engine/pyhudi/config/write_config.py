"""WriteConfig: every hoodie.* option a write reads, parsed once into one frozen object.

The client builds it where it validates a write's options (`WriteConfig.from_options`), the writer resolves it
against the table (pyhudi.writer.options.resolve_write_options: table name, precombine and payload defaults) and
passes it down; writer modules read its typed fields (`wc.precombine_field`), never a key. The options as text
travel inside it (`wc.options`, read-only) for the layers that read their own groups (key generator, index,
transaction, post-commit services) and for what Hudi stores as text (hoodie.properties)."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Mapping

from pyhudi.config import clustering as _clustering
from pyhudi.config import index as _index
from pyhudi.config import table as _table
from pyhudi.config import write as W
from pyhudi.config.resolve import HoodieConfig, config_of, read_settings, setting

_COMBINE_KEY = {"upsert": "combine_before_upsert", "delete": "combine_before_delete"}   # others: insert's key


@dataclass(frozen=True)
class WriteConfig:
    """The write options of one write, parsed once (Hudi's HoodieWriteConfig as the writer reads it)."""

    operation: str = setting(W.OPERATION)
    table_name: str | None = setting(_table.TABLE_NAME)
    table_type: str = setting(_table.TABLE_TYPE)
    timeline_timezone: str = setting(_table.TIMELINE_TIMEZONE)
    write_table_version: str = setting(_table.WRITE_TABLE_VERSION)   # of a table the write creates
    record_key_field: str | None = setting(W.RECORD_KEY)
    partition_path_field: str = setting(W.PARTITION_PATH)
    precombine_field: str | None = setting(W.PRECOMBINE)
    payload_class: str = setting(W.PAYLOAD_CLASS)
    payload_ordering_field: str | None = setting(W.PAYLOAD_ORDERING_FIELD)
    event_time_field: str = setting(W.PAYLOAD_EVENT_TIME_FIELD)
    combine_before_insert: bool = setting(W.COMBINE_BEFORE_INSERT)
    combine_before_upsert: bool = setting(W.COMBINE_BEFORE_UPSERT)
    insert_drop_duplicates: bool = setting(W.INSERT_DROP_DUPLICATES)
    allow_duplicate_on_inserts: bool = setting(W.MERGE_ALLOW_DUPLICATE_ON_INSERTS)
    combine_before_delete: bool = setting(W.COMBINE_BEFORE_DELETE)
    metadata_enable: bool = setting(W.METADATA_ENABLE)
    commit_metadata_key_prefix: str = setting(W.COMMIT_METADATA_KEY_PREFIX)
    # file sizing and encoding
    max_file_size: int = setting(W.MAX_FILE_SIZE)
    small_file_limit: int = setting(W.SMALL_FILE_LIMIT)
    record_size_estimate: int = setting(W.RECORD_SIZE_ESTIMATE)
    insert_split_size: int = setting(W.INSERT_SPLIT_SIZE)
    auto_split_inserts: bool = setting(W.AUTO_SPLIT_INSERTS)
    parquet_compression: str = setting(W.PARQUET_COMPRESSION)
    bloom_filter_type: str = setting(_index.BLOOM_FILTER_TYPE)          # the bloom filter in base file footers
    bloom_num_entries: int = setting(_index.BLOOM_NUM_ENTRIES)
    bloom_fpp: float = setting(_index.BLOOM_FPP)
    bloom_dynamic_max_entries: int = setting(_index.BLOOM_DYNAMIC_MAX_ENTRIES)
    bulk_insert_sort_mode: str = setting(W.BULK_INSERT_SORT_MODE)
    bulk_insert_parallelism: int = setting(W.BULK_INSERT_PARALLELISM)
    # merge-on-read log files
    log_block_format: str = setting(W.LOG_BLOCK_FORMAT)
    log_max_size: int = setting(W.LOG_MAX_SIZE)
    log_block_max_size: int = setting(W.LOG_BLOCK_MAX_SIZE)
    # replace operations and pending clustering
    static_overwrite_partitions: str | None = setting(W.STATIC_OVERWRITE_PARTITIONS)
    partitions_to_delete: str | None = setting(W.PARTITIONS_TO_DELETE)
    clustering_updates_strategy: str = setting(_clustering.CLUSTERING_UPDATES_STRATEGY)
    # the options as text (aliases resolved), read-only; not part of equality
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), compare=False, repr=False)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | HoodieConfig | None) -> WriteConfig:
        """Parse `options` (a HoodieConfig is read as it is: its keys were checked when it was built)."""
        config = config_of(options)
        return read_settings(cls, config, options=MappingProxyType(config.string_options()))

    @functools.cached_property
    def config(self) -> HoodieConfig:
        """The options parsed (once per WriteConfig): what the write's services and hooks read their keys from."""
        return HoodieConfig(dict(self.options), warn_unknown=False)

    def given(self, name: str) -> bool:
        """Whether the options set field `name` to a non-empty text, rather than leaving Hudi's default."""
        return bool(self.options.get(_SETTINGS[name].key))

    def with_values(self, **values: Any) -> WriteConfig:
        """Fields resolved by the writer (table name, precombine field, payload class), set in the options text
        too so the layers reading the text see the same values."""
        text = {_SETTINGS[name].key: str(value) for name, value in values.items()}
        return dataclasses.replace(self, **values, options=MappingProxyType({**self.options, **text}))

    def with_options(self, extra: Mapping[str, str]) -> WriteConfig:
        """The same config whose options text also carries `extra` (keys of other layers, e.g. the clean
        trigger's, which travel beside the write to its services)."""
        return dataclasses.replace(self, options=MappingProxyType({**self.options, **extra}))

    def combine_before(self, operation: str) -> bool:
        """hoodie.combine.before.{insert,upsert,delete}: whether `operation` keeps one record per key of the batch
        (bulk_insert and the insert_overwrite operations follow insert's key, as in Hudi)."""
        return getattr(self, _COMBINE_KEY.get(operation, "combine_before_insert"))

    def records_per_new_file(self, record_size: int) -> int:
        """Records a new file group takes: enough to fill hoodie.parquet.max.file.size at `record_size` bytes each
        (hoodie.copyonwrite.insert.auto.split), else hoodie.copyonwrite.insert.split.size."""
        return max(1, self.max_file_size // record_size) if self.auto_split_inserts else self.insert_split_size


_SETTINGS = {f.name: f.metadata["setting"] for f in fields(WriteConfig) if "setting" in f.metadata}
