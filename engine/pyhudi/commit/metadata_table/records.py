"""The records of the metadata table's `files` partition: Hudi's HoodieMetadataRecord (Avro), as Java writes them.

A record's key is a data-table partition (`.` for a non-partitioned table) or `__all_partitions__`; its
`filesystemMetadata` maps a file name (or, for `__all_partitions__`, a partition) to its size and whether it was
deleted. Records of one key merge as Java's HoodieMetadataPayload merges them: a later entry for a file replaces
its size by the larger one, a later deletion removes it.

The Avro schemas are the ones Java Hudi 1.0 (table version 8) and 1.1 (version 9) write into their log block
headers (schemas/*.avsc, taken from Java-written tables); a files record encodes to the same bytes under both.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import fastavro

from pyhudi.errors import CorruptFileError

FILES_PARTITION = "files"
ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED = "."   # the key of a non-partitioned table's only partition (HoodieTableMetadataUtil)
PARTITION_LIST_TYPE = 1   # HoodieMetadataPayload.METADATA_TYPE_PARTITION_LIST
FILE_LIST_TYPE = 2        # HoodieMetadataPayload.METADATA_TYPE_FILE_LIST


@lru_cache(maxsize=None)
def record_schema_json(table_version: str) -> str:
    """The HoodieMetadataRecord schema Java writes for a table of `table_version` (8 or 9), as JSON text."""
    name = "HoodieMetadataRecord.v9.avsc" if table_version == "9" else "HoodieMetadataRecord.v8.avsc"
    return resources.files("pyhudi.commit.metadata_table").joinpath("schemas", name).read_text()


@lru_cache(maxsize=None)
def _parsed(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json))


def partition_key(partition_path: str) -> str:
    """The record key of a data-table partition."""
    return partition_path or NON_PARTITIONED


def data_partition(key: str) -> str:
    """The data-table partition a record key names."""
    return "" if key == NON_PARTITIONED else key


@dataclass
class FileEntry:
    size: int
    deleted: bool = False


@dataclass
class FilesRecord:
    """One record of the files partition: a partition's files, or (`__all_partitions__`) the partitions."""

    key: str
    entries: dict[str, FileEntry] = field(default_factory=dict)

    @property
    def record_type(self) -> int:
        return PARTITION_LIST_TYPE if self.key == ALL_PARTITIONS_KEY else FILE_LIST_TYPE

    def merge(self, newer: "FilesRecord") -> None:
        """Fold a later record of the same key into this one (HoodieMetadataPayload's combine)."""
        for name, entry in newer.entries.items():
            old = self.entries.get(name)
            if entry.deleted:
                if old is None or old.deleted:
                    self.entries[name] = FileEntry(0, True)
                else:
                    del self.entries[name]
            elif old is None or old.deleted:
                self.entries[name] = FileEntry(entry.size)
            else:
                self.entries[name] = FileEntry(max(old.size, entry.size))

    def live(self) -> dict[str, int]:
        """Files (or partitions) not deleted, with their sizes."""
        return {name: e.size for name, e in self.entries.items() if not e.deleted}


def encode_record(record: FilesRecord, schema_json: str, file_name: str | None = None) -> bytes:
    """The record's Avro binary (no header), as an HFile cell value holds it: as Java writes it, the key lives in
    the cell's key and the value's `key` is empty; a base file's values name the file (`_hoodie_file_name`)."""
    value = {"_hoodie_file_name": file_name, "key": "", "type": record.record_type,
             "filesystemMetadata": {name: {"size": e.size, "isDeleted": e.deleted}
                                    for name, e in sorted(record.entries.items())}}
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _parsed(schema_json), value)
    return out.getvalue()


def cells(records: dict[str, FilesRecord], schema_json: str,
          file_name: str | None = None) -> list[tuple[bytes, bytes]]:
    """The records as HFile cells (key, Avro value), in the HFile's key order (unsigned bytes)."""
    return [(key.encode(), encode_record(records[key], schema_json, file_name))
            for key in sorted(records, key=str.encode)]


def decode_record(key: str, data: bytes, schema_json: str, where: str) -> FilesRecord | None:
    """The files record of an HFile cell (its key, its Avro binary value); None for records of other types;
    CorruptFileError naming `where`."""
    try:
        value = fastavro.schemaless_reader(io.BytesIO(data), _parsed(schema_json), None)
    except (EOFError, ValueError, IndexError, KeyError, TypeError) as exc:
        raise CorruptFileError(f"{where}: a metadata table record does not decode as HoodieMetadataRecord ({exc}); "
                               "set hoodie.metadata.enable=false to drop the metadata table and let Java rebuild "
                               "it") from None
    if not isinstance(value, dict) or value.get("type") not in (PARTITION_LIST_TYPE, FILE_LIST_TYPE):
        return None
    files = value.get("filesystemMetadata") or {}
    return FilesRecord(key, {name: FileEntry(int(info["size"]), bool(info["isDeleted"]))
                                           for name, info in files.items()})
