"""Parquet base files as Hudi writes them: five `_hoodie_*` meta columns first, then the data columns, and a
footer carrying the bloom filter of the file's record keys and its min/max record key (the bloom index reads
these instead of the data). Runs in executors.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import base64
import struct

from pyhudi.file_group.bloom_filter import (FOOTER_BLOOM_KEY, FOOTER_MAX_KEY, FOOTER_MIN_KEY, FOOTER_OLD_BLOOM_KEY,
                                            FOOTER_TYPE_KEY, BloomFilter, bit_size, num_hashes)
from pyhudi.errors import CorruptFileError
from pyhudi.file_group.footer_scan import find_entries, footer_bytes
from pyhudi.file_group.parquet_settings import encoding
from pyhudi.schema.meta_fields import (COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_FIELDS, PARTITION_PATH, RECORD_KEY,
                                       UNIQUE_META_FIELDS)
from pyhudi.storage import Storage

# Meta columns whose values are unique per file: a dictionary never pays for them (parquet-mr, Hudi's writer,
# falls back to plain encoding for them once the dictionary page overflows; pyarrow would hash every value first).
UNIQUE_META_COLUMNS = UNIQUE_META_FIELDS
META_COLUMNS = list(META_FIELDS)
AVRO_SCHEMA_KEY = "parquet.avro.schema"


@dataclass(frozen=True)
class BloomSettings:
    filter_type: str = "DYNAMIC_V0"
    num_entries: int = 60000
    fpp: float = 1e-9
    max_entries: int = 100000

    def new_filter(self) -> BloomFilter:
        return BloomFilter.create(self.filter_type, self.num_entries, self.fpp, self.max_entries)

    def fits(self, serialized: str, type_code: str | None) -> bool:
        """Whether a stored footer filter has these settings (type, bits, hashes): only then is it carried over."""
        if (type_code or "SIMPLE").upper() != self.filter_type.upper():
            return False
        try:
            _, hashes, _, bits = struct.unpack(">iibi", base64.b64decode(serialized[:24])[:13])
        except (ValueError, struct.error):
            return False
        expected = bit_size(self.num_entries, self.fpp)
        return bits == expected and hashes == num_hashes(expected, self.num_entries)


@dataclass(frozen=True)
class PreviousFilter:
    """The bloom filter of the file a merge rewrites, and the keys the new version adds: the new file's filter is
    the old one plus those keys (a valid filter of the new key set: keys it no longer holds only add false
    positives), which spares hashing every key of the file again."""

    footer: dict
    added_keys: pa.Array

@dataclass(frozen=True)
class WrittenFile:
    path: str
    num_rows: int
    size: int
    min_key: str | None
    max_key: str | None


def _carried_filter(previous: PreviousFilter | None, bloom: BloomSettings) -> tuple[str, str] | None:
    if previous is None:
        return None
    serialized, code = previous.footer.get(FOOTER_BLOOM_KEY), previous.footer.get(FOOTER_TYPE_KEY)
    if serialized is None or not bloom.fits(serialized, code):
        return None
    if len(previous.added_keys):
        carried = BloomFilter.deserialize(serialized, code)
        carried.add_keys(previous.added_keys)
        return carried.serialize(), carried.type_code
    return serialized, code


def footer_metadata(keys: pa.Array, bloom: BloomSettings | None, avro_schema_json: str | None,
                    previous: PreviousFilter | None = None) -> dict[bytes, bytes]:
    """Key-value footer entries Hudi readers and the bloom index look for. Without bloom settings (a table
    with virtual keys) only the avro schema: no bloom filter and no key range, as Hudi writes them."""
    if bloom is None:
        return {AVRO_SCHEMA_KEY.encode(): avro_schema_json.encode()} if avro_schema_json else {}
    carried = _carried_filter(previous, bloom)
    if carried is None:
        bloom_filter = bloom.new_filter()
        bloom_filter.add_keys(keys)
        carried = bloom_filter.serialize(), bloom_filter.type_code
    meta = {FOOTER_BLOOM_KEY: carried[0], FOOTER_TYPE_KEY: carried[1]}
    if len(keys):
        bounds = pc.min_max(keys)
        meta[FOOTER_MIN_KEY] = bounds["min"].as_py()
        meta[FOOTER_MAX_KEY] = bounds["max"].as_py()
    if avro_schema_json:
        meta[AVRO_SCHEMA_KEY] = avro_schema_json
    return {k.encode(): v.encode() for k, v in meta.items()}


def with_file_name(records: pa.Table, file_name: str) -> pa.Table:
    """``records`` whose ``_hoodie_file_name`` names ``file_name``, the base file they are written to: Hudi writes it
    into every record a file holds, also those a merge, compaction or clustering copies from an older file."""
    index = records.schema.get_field_index(FILE_NAME)
    return records.set_column(index, records.schema.field(index),
                              pa.repeat(pa.scalar(file_name, pa.string()), records.num_rows))


# meta columns Hudi leaves null in a base file of a table without meta fields (virtual keys)
NULL_META = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH)


def blank_meta(records: pa.Table, file_name: str) -> pa.Table:
    """The meta columns of a virtual-key base file (hoodie.populate.meta.fields=false): null, except
    `_hoodie_file_name`, as Java's write handles leave them (fixture cow_v6_simplekeygen_hivestyle_no_metafields)."""
    n = records.num_rows
    for name in NULL_META:
        records = records.set_column(records.schema.get_field_index(name), pa.field(name, pa.string()),
                                     pa.nulls(n, pa.string()))
    return with_file_name(records, file_name)


def write_base_file(storage: Storage, relative_path: str, records: pa.Table, bloom: BloomSettings | None,
                    compression: str = "gzip", avro_schema_json: str | None = None,
                    unique_columns: tuple[str, ...] = (), previous: PreviousFilter | None = None) -> WrittenFile:
    """Write `records` (meta columns + data, already in storage types) as one parquet base file. Columns in
    `unique_columns` (e.g. a single record key field) and the unique meta columns get no dictionary."""
    keys = records["_hoodie_record_key"].combine_chunks() if records.num_rows and bloom is not None \
        else pa.array([], pa.string())
    metadata = footer_metadata(keys, bloom, avro_schema_json, previous)
    table = records.replace_schema_metadata(None)
    parent = relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""
    storage.makedirs(parent)
    with storage.fs.open_output_stream(storage.full(relative_path)) as sink:
        with pq.ParquetWriter(sink, table.schema, **_writer_options(table, compression, unique_columns)) as writer:
            writer.write_table(table, row_group_size=1 << 20)
            # Footer entries added to the file only: as schema metadata they would also be copied into the
            # ARROW:schema entry, storing the bloom filter twice.
            writer.add_key_value_metadata(metadata)
    size = storage.file_size(relative_path)
    meta_str = {k.decode(): v.decode() for k, v in metadata.items()}
    return WrittenFile(relative_path, records.num_rows, size, meta_str.get(FOOTER_MIN_KEY),
                       meta_str.get(FOOTER_MAX_KEY))


def _writer_options(table: pa.Table, compression: str, unique_columns) -> dict:
    return {"store_schema": True, "coerce_timestamps": "us", "allow_truncated_timestamps": True,
            **encoding(table, compression, set(UNIQUE_META_COLUMNS) | set(unique_columns))}


def encoded_record_size(records: pa.Table, compression: str = "gzip", unique_columns: tuple[str, ...] = ()) -> float:
    """Bytes per record of `records` (meta columns + data) encoded as write_base_file encodes them, without the
    file's fixed part (schema, footer; measured on no rows): written in memory, for sizing files before they are
    written (bulk_insert)."""
    table = records.replace_schema_metadata(None)
    options = _writer_options(table, compression, unique_columns)

    def encoded(rows: pa.Table) -> int:
        sink = pa.BufferOutputStream()
        with pq.ParquetWriter(sink, rows.schema, **options) as writer:
            writer.write_table(rows, row_group_size=1 << 20)
        return sink.tell()
    return max(1.0, (encoded(table) - encoded(table.slice(0, 0))) / max(1, table.num_rows))


def read_footer(storage: Storage, relative_path: str, keys: tuple[str, ...] | None = None) -> dict[str, str]:
    """The key-value footer of a base file (bloom filter, key range, avro schema); only `keys` when given."""
    if keys is not None:
        found = read_footer_entries(storage, relative_path, keys)
        return {k.decode(): v.decode() for k, v in found.items()}
    with storage.fs.open_input_file(storage.full(relative_path)) as source:
        return footer_of(pq.ParquetFile(source))


FOOTER_TAIL_BYTES = 64 * 1024   # read first by read_footer_entries


def read_footer_entries(storage: Storage, relative_path: str, keys: tuple[str, ...]) -> dict[bytes, bytes]:
    """Only `keys` of a base file's key-value footer, as stored (bytes), found in the footer's bytes without
    parsing the ~1 MB footer (file_group/footer_scan.py); pyarrow parses it when they are not in the usual shape."""
    wanted = tuple(k.encode() for k in keys)
    # the bloom filter is never in the footer's end: asked for, the footer is read whole at once
    large = FOOTER_BLOOM_KEY in keys or FOOTER_OLD_BLOOM_KEY in keys
    with storage.fs.open_input_file(storage.full(relative_path)) as source:
        # else the footer's end first: it holds the small entries (the key range) after the ~1 MB filter; an entry
        # found there is the footer's last of that key, an entry not found there may be earlier
        footer = footer_bytes(source, None if large else FOOTER_TAIL_BYTES)
        found = find_entries(footer, wanted) if footer is not None else None
        if found is not None and len(found) < len(wanted) and not large and len(footer) >= FOOTER_TAIL_BYTES:
            footer = footer_bytes(source)
            found = find_entries(footer, wanted)
        if found is None:
            raw = pq.ParquetFile(source).metadata.metadata or {}
            found = {k: v for k, v in raw.items() if k in wanted}
        return found


def footer_of(parquet_file: pq.ParquetFile) -> dict[str, str]:
    """The key-value footer of an open base file."""
    return {k.decode(): v.decode() for k, v in (parquet_file.metadata.metadata or {}).items()}


def read_base_file(storage: Storage, relative_path: str, columns: list[str] | None = None) -> pa.Table:
    return read_base_file_and_footer(storage, relative_path, columns)[0]


def read_base_file_and_footer(storage: Storage, relative_path: str,
                              columns: list[str] | None = None) -> tuple[pa.Table, dict[str, str]]:
    """A base file's records and its key-value footer, from one open."""
    try:
        with storage.fs.open_input_file(storage.full(relative_path)) as source:
            parquet = pq.ParquetFile(source)
            return parquet.read(columns=columns), footer_of(parquet)
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowInvalid) as exc:
        raise CorruptFileError(f"Hudi base file {relative_path} cannot be read: {exc}. Restore the file, or roll "
                               "back the instant that wrote it.") from exc

