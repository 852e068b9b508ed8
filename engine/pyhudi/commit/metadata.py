"""Hudi's commit metadata (HoodieCommitMetadata / HoodieReplaceCommitMetadata JSON) as one typed value.

Write stats stay Hudi's JSON objects (HoodieWriteStat, HoodieDeltaWriteStat: `write_stat` builds one from a
task's stats row), because callers read them as such (WriteResult.write_stats); the commit around them is typed,
so every action publishes the same shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa

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


def write_stat(row) -> dict:
    """HoodieWriteStat (HoodieDeltaWriteStat for a log file) from one task's stats row."""
    stat = {
        "fileId": row["file_id"], "path": row["path"], "cdcStats": _cdc_stats(row),
        "prevCommit": row["prev_commit"],
        "numWrites": row["num_writes"], "numDeletes": row["num_deletes"], "numUpdateWrites": row["num_updates"],
        "numInserts": row["num_inserts"], "totalWriteBytes": row["file_size"], "totalWriteErrors": 0,
        "tempPath": None, "partitionPath": row["partition_path"], "totalLogRecords": 0,
        "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0,
        "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
        "fileSizeInBytes": row["file_size"], "minEventTime": _get(row, "min_event_time"),
        "maxEventTime": _get(row, "max_event_time"),
        "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
    }
    if row["log_version"] is not None:   # HoodieDeltaWriteStat
        # logOffset: where this write's blocks start (0: the write created the file; more: it appended, on
        # storage that can append); fileSizeInBytes is then the appended bytes, as HoodieAppendHandle records
        stat.update({"logVersion": row["log_version"], "logOffset": _get(row, "log_offset") or 0,
                     "baseFile": row["base_file"],
                     "logFiles": [row["path"].rsplit("/", 1)[-1]]})
    return stat


@dataclass
class CommitMetadata:
    """What a completed commit, delta commit or replace commit holds."""

    operation_type: str
    write_stats: list[dict] = field(default_factory=list)
    extra_metadata: dict[str, str] = field(default_factory=dict)
    replaced_file_ids: dict[str, list[str]] | None = None   # {partition: [file ids]}: a replacecommit
    compacted: bool = False

    @property
    def paths(self) -> set[str]:
        """Data files (relative paths) this commit wrote, with their CDC log files (cdcStats)."""
        cdc_logs = {p for s in self.write_stats for p in (s.get("cdcStats") or {})}
        return {s["path"] for s in self.write_stats} | cdc_logs

    def file_ids(self) -> set[str]:
        """File ids this commit wrote or replaced (what conflict resolution compares)."""
        return written_file_ids(self.to_json())

    def to_json(self) -> dict:
        by_partition: dict[str, list] = {}
        for stat in self.write_stats:
            by_partition.setdefault(stat["partitionPath"], []).append(stat)
        out = {"partitionToWriteStats": by_partition, "compacted": self.compacted,
               "extraMetadata": dict(self.extra_metadata), "operationType": self.operation_type}
        if self.replaced_file_ids is not None:
            out["partitionToReplaceFileIds"] = self.replaced_file_ids
        return out


def written_file_ids(metadata: dict) -> set[str]:
    """File ids a commit (its JSON) wrote or replaced."""
    ids = {s.get("fileId") for stats in (metadata.get("partitionToWriteStats") or {}).values() for s in stats}
    for replaced in (metadata.get("partitionToReplaceFileIds") or {}).values():
        ids.update(replaced)
    ids.discard(None)
    return ids
