"""Hudi's meta fields, in one place: their names, the order every base file and log block stores them in
(HoodieRecord.HOODIE_META_COLUMNS), the fields a record may carry besides them, and the small helpers that tell
meta from data. Schema, base files, merge, index, CDC and the writers import these names."""

from __future__ import annotations

from typing import Iterable

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
#: the five meta columns, in Hudi's order (the first fields of every table schema that populates meta fields)
META_FIELDS = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
META_SET = frozenset(META_FIELDS)
#: meta columns whose value differs on every row (a parquet dictionary never pays for them)
UNIQUE_META_FIELDS = (COMMIT_SEQNO, RECORD_KEY)
#: data field whose true value deletes the record (Hudi's soft-delete marker, HoodieRecord.HOODIE_IS_DELETED_FIELD)
IS_DELETED = "_hoodie_is_deleted"
#: optional field with the record's operation (hoodie.allow.operation.metadata.field)
OPERATION = "_hoodie_operation"
#: every field Hudi reserves starts with this prefix
PREFIX = "_hoodie_"


def is_meta_field(name: str) -> bool:
    """One of the five meta columns."""
    return name in META_SET


def is_hoodie_field(name: str) -> bool:
    """A field Hudi reserves (meta columns, _hoodie_is_deleted, _hoodie_operation): never user data columns."""
    return name.startswith(PREFIX)


def data_field_names(names: Iterable[str]) -> list[str]:
    """`names` without the five meta columns, order kept."""
    return [n for n in names if n not in META_SET]

