"""Parquet base files as Hudi writes them: five `_hoodie_*` meta columns first, then the data columns, and a
footer carrying the bloom filter of the file's record keys and its min/max record key (the bloom index reads
these instead of the data). Runs in executors.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.file_group.bloom_filter import (FOOTER_BLOOM_KEY, FOOTER_MAX_KEY, FOOTER_MIN_KEY, FOOTER_TYPE_KEY,
                                            BloomFilter)
from pyhudi.errors import CorruptFileError
from pyhudi.storage import Storage

META_COLUMNS = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name"]
AVRO_SCHEMA_KEY = "parquet.avro.schema"
# zlib level for gzip (Hudi's default codec). pyarrow defaults to 9, which made writing a 100k-row base file ~6x
# slower than level 1 for a file only ~1% smaller; Java Hudi uses zlib's default (6, Hadoop's zlib.compress.level).
GZIP_LEVEL = 1


@dataclass(frozen=True)
class BloomSettings:
    filter_type: str = "DYNAMIC_V0"
    num_entries: int = 60000
    fpp: float = 1e-9
    max_entries: int = 100000

    def new_filter(self) -> BloomFilter:
        return BloomFilter.create(self.filter_type, self.num_entries, self.fpp, self.max_entries)


@dataclass(frozen=True)
class WrittenFile:
    path: str
    num_rows: int
    size: int
    min_key: str | None
    max_key: str | None


def footer_metadata(keys: pa.Array, bloom: BloomSettings, avro_schema_json: str | None) -> dict[bytes, bytes]:
    """Key-value footer entries Hudi readers and the bloom index look for."""
    bloom_filter = bloom.new_filter()
    bloom_filter.add_keys(keys)
    meta = {FOOTER_BLOOM_KEY: bloom_filter.serialize(), FOOTER_TYPE_KEY: bloom_filter.type_code}
    if len(keys):
        bounds = pc.min_max(keys)
        meta[FOOTER_MIN_KEY] = bounds["min"].as_py()
        meta[FOOTER_MAX_KEY] = bounds["max"].as_py()
    if avro_schema_json:
        meta[AVRO_SCHEMA_KEY] = avro_schema_json
    return {k.encode(): v.encode() for k, v in meta.items()}


def write_base_file(storage: Storage, relative_path: str, records: pa.Table, bloom: BloomSettings,
                    compression: str = "gzip", avro_schema_json: str | None = None) -> WrittenFile:
    """Write `records` (meta columns + data, already in storage types) as one parquet base file."""
    keys = records["_hoodie_record_key"].combine_chunks() if records.num_rows else pa.array([], pa.string())
    metadata = footer_metadata(keys, bloom, avro_schema_json)
    table = records.replace_schema_metadata(None)
    parent = relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""
    storage.makedirs(parent)
    with storage.fs.open_output_stream(storage.full(relative_path)) as sink:
        with pq.ParquetWriter(sink, table.schema, compression=None if compression == "uncompressed" else compression,
                              compression_level=GZIP_LEVEL if compression == "gzip" else None, store_schema=True,
                              coerce_timestamps="us", allow_truncated_timestamps=True) as writer:
            writer.write_table(table, row_group_size=1 << 20)
            # Footer entries added to the file only: as schema metadata they would also be copied into the
            # ARROW:schema entry, storing the bloom filter twice.
            writer.add_key_value_metadata(metadata)
    size = storage.file_size(relative_path)
    meta_str = {k.decode(): v.decode() for k, v in metadata.items()}
    return WrittenFile(relative_path, records.num_rows, size, meta_str.get(FOOTER_MIN_KEY),
                       meta_str.get(FOOTER_MAX_KEY))


def read_footer(storage: Storage, relative_path: str) -> dict[str, str]:
    """The key-value footer of a base file (bloom filter, key range, avro schema)."""
    with storage.fs.open_input_file(storage.full(relative_path)) as source:
        return footer_of(pq.ParquetFile(source))


def footer_of(parquet_file: pq.ParquetFile) -> dict[str, str]:
    """The key-value footer of an open base file."""
    raw = parquet_file.metadata.metadata or {}
    return {k.decode(): v.decode() for k, v in raw.items()}


def read_base_file(storage: Storage, relative_path: str, columns: list[str] | None = None) -> pa.Table:
    try:
        with storage.fs.open_input_file(storage.full(relative_path)) as source:
            return pq.read_table(source, columns=columns)
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowInvalid) as exc:
        raise CorruptFileError(f"Hudi base file {relative_path} cannot be read: {exc}. Restore the file, or roll "
                               "back the instant that wrote it.") from exc

