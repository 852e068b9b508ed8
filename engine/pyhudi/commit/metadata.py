"""What the commit layer adds to Hudi's commit metadata (timeline.CommitMetadata, timeline.WriteStat, owned by the
timeline layer that reads them): Hudi's operation types, and `write_stat`, the WriteStat of a writer task's stats
row."""

from __future__ import annotations

import json

import pyarrow as pa

from pyhudi.timeline import CommitMetadata, WriteStat

__all__ = ["CommitMetadata", "OPERATION_TYPES", "PREPPED_OPERATIONS", "SQL_WRITES_PREPPED_KEY", "STATS_DDL",
           "STATS_SCHEMA", "WriteStat", "operation_type", "write_stat"]

# Hudi's operationType values (WriteOperationType) for the operations pyhudi runs.
OPERATION_TYPES = {"upsert": "UPSERT", "insert": "INSERT", "bulk_insert": "BULK_INSERT", "delete": "DELETE",
                   "insert_overwrite": "INSERT_OVERWRITE", "insert_overwrite_table": "INSERT_OVERWRITE_TABLE",
                   "delete_partition": "DELETE_PARTITION", "compact": "COMPACT"}
# A write option Hudi's SQL UPDATE and DELETE set (hoodie.spark.sql.optimized.writes.enable): the records come from
# the table itself, and the commit records the operation's _PREPPED variant.
SQL_WRITES_PREPPED_KEY = "_hoodie.spark.sql.writes.prepped"
PREPPED_OPERATIONS = ("upsert", "insert", "bulk_insert", "delete")


def operation_type(operation: str, prepped: bool = False) -> str:
    """Hudi's operationType of a write operation (``UPSERT``; ``UPSERT_PREPPED`` for a prepped SQL write)."""
    name = OPERATION_TYPES[operation]
    return f"{name}_PREPPED" if prepped and operation in PREPPED_OPERATIONS else name

# The one stats row a writer task returns per written file (write_stat turns it into a HoodieWriteStat).
STATS_DDL = ("partition_path string, file_id string, path string, prev_commit string, num_writes long, "
             "num_inserts long, num_updates long, num_deletes long, file_size long, min_key string, max_key string, "
             "log_version long, base_file string, min_event_time long, max_event_time long, cdc_stats string, "
             "log_offset long")
STATS_SCHEMA = pa.schema([("partition_path", pa.string()), ("file_id", pa.string()), ("path", pa.string()),
                          ("prev_commit", pa.string()), ("num_writes", pa.int64()), ("num_inserts", pa.int64()),
                          ("num_updates", pa.int64()), ("num_deletes", pa.int64()), ("file_size", pa.int64()),
                          ("min_key", pa.string()), ("max_key", pa.string()), ("log_version", pa.int64()),
                          ("base_file", pa.string()), ("min_event_time", pa.int64()),
                          ("max_event_time", pa.int64()), ("cdc_stats", pa.string()),
                          ("log_offset", pa.int64())])


def _get(row, name: str):
    """A stats row's optional column (event times: only the writes of event-time payloads fill them)."""
    try:
        return row[name]
    except (KeyError, ValueError, IndexError):
        return None


def _cdc_stats(row) -> dict | None:
    """HoodieWriteStat.cdcStats: {relative -cdc log path: size} of a CDC table's merge, else null."""
    text = _get(row, "cdc_stats")
    return json.loads(text) if text else None


def write_stat(row) -> WriteStat:
    """HoodieWriteStat (HoodieDeltaWriteStat for a log file) from one task's stats row."""
    log_version = row["log_version"]
    delta = {}
    if log_version is not None:   # HoodieDeltaWriteStat
        # logOffset: where this write's blocks start (0: the write created the file; more: it appended, on
        # storage that can append); fileSizeInBytes is then the appended bytes, as HoodieAppendHandle records
        delta = {"log_version": log_version, "log_offset": _get(row, "log_offset") or 0,
                 "base_file": row["base_file"], "log_files": [row["path"].rsplit("/", 1)[-1]]}
    return WriteStat(
        file_id=row["file_id"], path=row["path"], cdc_stats=_cdc_stats(row), prev_commit=row["prev_commit"],
        num_writes=row["num_writes"], num_deletes=row["num_deletes"], num_update_writes=row["num_updates"],
        num_inserts=row["num_inserts"], total_write_bytes=row["file_size"], total_write_errors=0,
        temp_path=None, partition_path=row["partition_path"], total_log_records=0,
        total_log_files_compacted=0, total_log_size_compacted=0, total_updated_records_compacted=0,
        total_log_blocks=0, total_corrupt_log_block=0, total_rollback_blocks=0,
        file_size_in_bytes=row["file_size"], min_event_time=_get(row, "min_event_time"),
        max_event_time=_get(row, "max_event_time"),
        runtime_stats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0}, **delta)
