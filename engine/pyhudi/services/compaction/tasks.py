"""Compaction in Spark tasks: one task per planned file slice merges its base file and log files (only blocks of
writes completed before the compaction instant) into a new base file of the compaction instant (marker first),
keeping each record's commit time and sequence number, and returns one stats row."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, replace
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.commit.markers import create_marker
from pyhudi.commit.metadata import STATS_SCHEMA, WriteStat, write_stat
from pyhudi.commit.spark_jobs import task_token
from pyhudi.errors import CorruptFileError
from pyhudi.file_group.base_file import BloomSettings, read_base_file, with_file_name, write_base_file
from pyhudi.file_group.model import BaseFile, FileSlice, LogFile
from pyhudi.file_group.naming import base_file_name, parse_base_file_name, parse_log_file_name
from pyhudi.services.compaction.plan import TOTAL_LOG_FILES_SIZE, CompactionPlan
from pyhudi.schema import meta_fields as MF
from pyhudi.spark.jvm import one_row_per_task
from pyhudi.storage import Storage

# --- execution --------------------------------------------------------------------------------------------------
_OPS_DDL = ("partition_path string, file_id string, base_instant string, data_file string, "
            "delta_files array<string>, total_log_size long")
_DDL_TYPES = {pa.string(): "string", pa.int64(): "long", pa.int32(): "int", pa.bool_(): "boolean",
              pa.float64(): "double"}


def _stats_schema() -> pa.Schema:
    """The writer's stats row (so `write_stat` reads it) plus the log-scan figures of a compaction."""
    extra = [("total_log_records", pa.int64()), ("total_log_files", pa.int64()), ("total_log_size", pa.int64()),
             ("total_updated_records", pa.int64()), ("total_log_blocks", pa.int64()),
             ("total_corrupt_blocks", pa.int64()), ("total_rollback_blocks", pa.int64()),
             ("scan_time_ms", pa.int64()), ("write_time_ms", pa.int64())]
    return pa.schema(list(STATS_SCHEMA) + [pa.field(n, t) for n, t in extra if n not in STATS_SCHEMA.names])


COMPACTION_STATS_SCHEMA = _stats_schema()
COMPACTION_STATS_DDL = ", ".join(f"{f.name} {_DDL_TYPES[f.type]}" for f in COMPACTION_STATS_SCHEMA)


@dataclass(frozen=True)
class CompactContext:
    """Everything an executor needs (metadata only, pickled into the task)."""

    storage: Storage
    instant_time: str
    schema: pa.Schema                 # meta + data columns, storage types
    visible_instants: frozenset
    committed_before: str | None
    ordering_field: str | None
    payload_class: str
    bloom: BloomSettings
    compression: str
    avro_schema_json: str | None      # writer schema with meta fields, for the parquet footer


def operations_frame(spark, plan: CompactionPlan, ctx: CompactContext):
    """One Spark partition per operation; each task compacts its slice and returns one stats row."""
    if not plan.operations:
        return None
    rows = [(op.partition_path, op.file_id, op.base_instant, op.data_file, list(op.delta_files),
             int(op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0))) for op in plan.operations]
    ops = one_row_per_task(spark, rows, _OPS_DDL)
    return ops.mapInArrow(lambda batches: compact_batches(ctx, batches), COMPACTION_STATS_DDL)


def compaction_stat(row) -> WriteStat:
    return replace(
        write_stat(row),
        total_log_records=row["total_log_records"], total_log_files_compacted=row["total_log_files"],
        total_log_size_compacted=row["total_log_size"], total_updated_records_compacted=row["total_updated_records"],
        total_log_blocks=row["total_log_blocks"], total_corrupt_log_block=row["total_corrupt_blocks"],
        total_rollback_blocks=row["total_rollback_blocks"],
        runtime_stats={"totalScanTime": row["scan_time_ms"],
                       "totalUpsertTime": row["write_time_ms"] if row["prev_commit"] != "null" else 0,
                       "totalCreateTime": row["write_time_ms"] if row["prev_commit"] == "null" else 0})


# --- executor side ------------------------------------------------------------------------------------------
def compact_batches(ctx: CompactContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for op in batch.to_pylist():
            yield from compact_file_slice(ctx, op).to_batches()


def plan_file_slice(row: dict, plan: str) -> FileSlice:
    """The file slice a table-service plan row names (partition_path, file_id, data_file, delta_files and, for
    compaction, base_instant); a name that is not a Hudi file name is a CorruptFileError naming the `plan`."""
    partition = row["partition_path"] or ""
    prefix = f"{partition}/" if partition else ""
    base = None
    if row["data_file"]:
        parsed = parse_base_file_name(row["data_file"])
        if parsed is None:
            raise CorruptFileError(f"{plan} plan names {row['data_file']!r} as the base file of file group "
                                   f"{row['file_id']}, which is not a Hudi base file name")
        base = BaseFile(prefix + row["data_file"], row["file_id"], parsed[1], parsed[2], -1)
    logs = []
    for name in row["delta_files"] or []:
        parsed_log = parse_log_file_name(name)
        if parsed_log is None:
            raise CorruptFileError(f"{plan} plan names {name!r} as a log file of file group {row['file_id']}, "
                                   "which is not a Hudi log file name")
        file_id, base_instant, version, token = parsed_log
        logs.append(LogFile(prefix + name, file_id, base_instant, version, token, -1))
    logs.sort(key=LogFile.sort_key)
    if "base_instant" in row:
        base_instant = row["base_instant"]
    else:
        base_instant = base.instant_time if base else (logs[0].base_instant if logs else "")
    return FileSlice(partition, row["file_id"], base_instant, base, logs)


def _log_counts(ctx: CompactContext, slice_: FileSlice) -> dict:
    """What Hudi's log scanner reports: blocks read, corrupt and rollback blocks, records and distinct keys of the
    blocks that count."""
    from pyhudi.file_group.log_block import BlockType
    from pyhudi.file_group.log_file import read_log_bytes
    from pyhudi.reader.file_slice_reader import scan_log_blocks

    blocks = corrupt = rollbacks = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the merge already reported corrupt blocks
        for log in slice_.log_files:
            for block in read_log_bytes(ctx.storage.read_bytes(log.path), log.path, decode=False,
                                        include_corrupt=True):
                blocks += 1
                corrupt += block.block_type == BlockType.CORRUPT_BLOCK
                rollbacks += block.is_rollback
        scanned = scan_log_blocks(ctx.storage, slice_.log_files, ctx.visible_instants,
                                  committed_before=ctx.committed_before)
    records = 0
    keys: set[str] = set()
    for item in scanned:
        block = item.block
        if block.records is not None and block.records.num_rows:
            records += block.records.num_rows
            if MF.RECORD_KEY in block.records.column_names:
                keys.update(block.records[MF.RECORD_KEY].to_pylist())
        for entry in block.delete_keys or []:
            records += 1
            keys.add(entry.record_key)
    return {"blocks": blocks, "corrupt": corrupt, "rollbacks": rollbacks, "records": records, "keys": keys}


def _count(mask: pa.Array) -> int:
    return int(pc.sum(mask.cast(pa.int64())).as_py() or 0) if len(mask) else 0


def compact_file_slice(ctx: CompactContext, op: dict) -> pa.Table:
    """Merge one planned file slice into a new base file of the compaction instant; returns its stats row."""
    from pyhudi.reader.file_slice_reader import read_file_slice

    slice_ = plan_file_slice(op, "compaction")
    started = time.monotonic()
    merged = read_file_slice(ctx.storage, slice_, ctx.schema, visible_instants=ctx.visible_instants,
                             ordering_field=ctx.ordering_field, payload_class=ctx.payload_class,
                             committed_before=ctx.committed_before)
    counts = _log_counts(ctx, slice_)
    scanned = time.monotonic()

    token, _ = task_token()
    name = base_file_name(slice_.file_id, token, ctx.instant_time)
    relative = f"{slice_.partition_path}/{name}" if slice_.partition_path else name
    merged = merged.sort_by(MF.RECORD_KEY)
    merged = with_file_name(merged, name)
    create_marker(ctx.storage, ctx.instant_time, relative, "MERGE" if slice_.base_file else "CREATE")
    out = write_base_file(ctx.storage, relative, merged, ctx.bloom, ctx.compression, ctx.avro_schema_json)
    written = time.monotonic()

    if slice_.base_file is not None:
        base_keys = read_base_file(ctx.storage, slice_.base_file.path,
                                   [MF.RECORD_KEY])[MF.RECORD_KEY].combine_chunks()
        merged_keys = merged[MF.RECORD_KEY].combine_chunks()
        in_base = pc.is_in(merged_keys, value_set=base_keys)
        from_logs = pc.is_in(merged_keys, value_set=pa.array(sorted(counts["keys"]), pa.string()))
        inserts = merged.num_rows - _count(in_base)
        updates = _count(pc.and_(in_base, from_logs))
        deletes = len(base_keys) - _count(pc.is_in(base_keys, value_set=merged_keys))
        prev = slice_.base_file.instant_time
    else:
        inserts, updates, deletes, prev = merged.num_rows, 0, 0, "null"
    row = {
        "partition_path": slice_.partition_path, "file_id": slice_.file_id, "path": out.path, "prev_commit": prev,
        "num_writes": out.num_rows, "num_inserts": inserts, "num_updates": updates, "num_deletes": deletes,
        "file_size": out.size, "min_key": out.min_key, "max_key": out.max_key,
        "total_log_records": counts["records"], "total_log_files": len(slice_.log_files),
        "total_log_size": int(op.get("total_log_size") or 0), "total_updated_records": len(counts["keys"]),
        "total_log_blocks": counts["blocks"], "total_corrupt_blocks": counts["corrupt"],
        "total_rollback_blocks": counts["rollbacks"], "scan_time_ms": int((scanned - started) * 1000),
        "write_time_ms": int((written - scanned) * 1000),
    }
    return pa.Table.from_pylist([{name: row.get(name) for name in COMPACTION_STATS_SCHEMA.names}],
                                schema=COMPACTION_STATS_SCHEMA)
