"""Executor-side writers: turn one file group's incoming records into a new base file, or (merge-on-read) log
files of its latest slice, and one write stat row per file written. Nothing here runs on the driver.

Every data file is announced by a marker (pyhudi.commit.markers) before it is created, so the commit can
reconcile its stats against the markers and a failed write can be undone by deleting exactly the files they name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.commit.markers import create_marker
from pyhudi.commit.metadata import STATS_SCHEMA
from pyhudi.commit.spark_jobs import reserve_sequence, task_token
from pyhudi.file_group.base_file import (META_COLUMNS, BloomSettings, PreviousFilter, WrittenFile, blank_meta,
                                         read_base_file_and_footer, with_file_name, write_base_file)
from pyhudi.file_group.naming import base_file_name, partition_file
from pyhudi.index.virtual import with_keys
from pyhudi.merge import (concat_file_group, delete_mask, event_time_range, keep_latest_per_key, merge_file_group,
                          payload_of)
from pyhudi.storage import Storage
from pyhudi.testing import crash_point, task_failure_point

# Staging columns the driver adds to incoming rows.
FILE_ID_COLUMN = "_pyhudi_file_id"
DELETE_COLUMN = "_pyhudi_is_delete"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"

INSERT_COLUMN = "_pyhudi_is_insert"
ARRIVAL_COLUMN = "_pyhudi_arrival"   # arrival order of a record in the batch, when the writer deduplicates
_SMALL_STAMP = 256                   # rows whose sequence numbers are formatted in Python (stamp_meta)


@dataclass(frozen=True)
class GroupState:
    """What a writer must know about an existing file group (from the driver's file-system view)."""

    base_path: str | None      # latest base file (relative), None for a log-only slice
    base_instant: str          # instant of that base file: the prevCommit of a merge
    log_base_instant: str      # base instant of the slice new log files join (a pending compaction's, if any)
    next_log_version: int      # first free log version in that slice
    latest_log: tuple | None = None   # (name, version, size) of that slice's latest log file (append storage)


@dataclass(frozen=True)
class WriteContext:
    """Everything an executor needs, shipped inside the task closure (metadata only)."""

    storage: Storage
    instant_time: str
    data_schema: pa.Schema                     # storage schema of the data columns, in table order
    bloom: BloomSettings
    compression: str
    avro_schema_json: str | None
    payload_class: str
    ordering_field: str | None
    max_file_size: int = 120 * 1024 * 1024
    is_mor: bool = False
    log_block_format: str = "parquet"
    ordering_avro_type: object = None
    table_avro_schema_json: str | None = None
    combine_in_writer: bool = False            # keep the latest record per key here (see keep_latest_per_key)
    unique_columns: tuple = ()                 # data columns unique per file (a single record key field)
    virtual_keys: object = None                # the key generator of a hoodie.populate.meta.fields=false table
    payload_ordering_field: str | None = None  # hoodie.payload.ordering.field: ordering against stored records
    event_time_field: str | None = None        # hoodie.payload.event.time.field: min/maxEventTime of the stats
    cdc_mode: str | None = None                # hoodie.table.cdc.supplemental.logging.mode of a CDC table
    log_max_size: int = 1073741824             # hoodie.logfile.max.size: roll to the next log version past it
    log_block_max_size: int = 268435456        # hoodie.logfile.data.block.max.size: records per data block
    inserts_to_logs: bool = False              # MOR + an index that can index log files (BUCKET): new file
                                               # groups start as log files (see writer/planning.inserts_to_logs)
    concat_inserts: bool = False               # an insert keeps stored records of its keys (HoodieConcatHandle,
                                               # hoodie.merge.allow.duplicate.on.inserts)
    log_per_commit: bool = False               # table version 8+ (Hudi 1.x): every delta commit writes new log
                                               # files named by its own instant time, never appends
    # (partition, file_id) -> GroupState for file groups that already exist
    existing: dict = field(default_factory=dict)


def stamp_meta(records: pa.Table, ctx: WriteContext, file_name: str, partition_id: int, seq_start: int = 0) -> pa.Table:
    """Set the five meta columns on newly written records."""
    n = records.num_rows
    prefix = f"{ctx.instant_time}_{partition_id}_"
    if n <= _SMALL_STAMP:   # a few rows (a log block of a touched file group): three compute calls cost more
        seqno = pa.array([f"{prefix}{i}" for i in range(seq_start, seq_start + n)], pa.string())
    else:   # "<instant>_<task partition>_<row>", vectorized: a Python loop per row costs seconds on large files
        numbers = pa.array(np.arange(seq_start, seq_start + n, dtype=np.int64)).cast(pa.string())
        seqno = pc.binary_join_element_wise(prefix, numbers, "")
    columns = {
        "_hoodie_commit_time": pa.repeat(pa.scalar(ctx.instant_time, pa.string()), n),
        "_hoodie_commit_seqno": seqno,
        "_hoodie_record_key": records[RECORD_KEY],
        "_hoodie_partition_path": records[PARTITION_PATH],
        "_hoodie_file_name": pa.repeat(pa.scalar(file_name, pa.string()), n),
    }
    data = _data_columns(records, ctx.data_schema)
    return pa.Table.from_arrays([columns[c] for c in META_COLUMNS] + data,
                                schema=_with_meta(ctx.data_schema))


def _data_columns(records: pa.Table, data_schema: pa.Schema) -> list[pa.ChunkedArray]:
    """The columns of `data_schema` from `records`, cast to its types; null for a column `records` lacks."""
    names = set(records.column_names)
    return [(records[f.name] if records[f.name].type == f.type else records[f.name].cast(f.type))
            if f.name in names else pa.chunked_array([pa.nulls(records.num_rows, f.type)]) for f in data_schema]


def _with_meta(data_schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + list(data_schema))


def _align_stored(stored: pa.Table, data_schema: pa.Schema, keygen=None) -> pa.Table:
    """Bring a stored base file to the current table schema (new nullable columns read as null); a virtual-key
    file gets its record keys and partition paths computed from its data by the table's key generator."""
    if keygen is not None:
        stored = with_keys(stored, keygen)
    meta = [stored[c] for c in META_COLUMNS]
    data = _data_columns(stored, data_schema)
    return pa.Table.from_arrays(meta + data, schema=_with_meta(data_schema))


def footer_bloom(ctx: WriteContext) -> BloomSettings | None:
    """The footer bloom filter settings; none for virtual keys (Hudi writes no filter without meta fields)."""
    return None if ctx.virtual_keys is not None else ctx.bloom


def write_file_group(ctx: WriteContext, incoming: pa.Table) -> pa.Table:
    """Write one file group's incoming records: merge-on-read updates and deletes append a log file; anything
    else (copy-on-write, inserts) merges with the latest base file into a new base file."""
    partition = incoming[PARTITION_PATH][0].as_py()
    file_id = incoming[FILE_ID_COLUMN][0].as_py()
    existing = ctx.existing.get((partition, file_id))
    if ctx.combine_in_writer:
        incoming = keep_latest_per_key(incoming, ctx.ordering_field, ARRIVAL_COLUMN, ctx.payload_class, DELETE_COLUMN)
    has_inserts = INSERT_COLUMN in incoming.column_names and pc.any(incoming[INSERT_COLUMN]).as_py()
    if ctx.is_mor and existing is not None and not has_inserts:
        return append_log_file(ctx, incoming, partition, file_id, existing)
    if ctx.is_mor and existing is None and ctx.inserts_to_logs:   # Hudi's handleInsert with an AppendHandle
        return append_log_file(ctx, incoming, partition, file_id,
                               GroupState(None, "null", ctx.instant_time, 1), new_group=True)
    token, partition_id = task_token()
    stored = footer = None
    if existing is not None and existing.base_path is not None:
        stored, footer = read_base_file_and_footer(ctx.storage, existing.base_path)
        stored = _align_stored(stored, ctx.data_schema, ctx.virtual_keys)
    deletes = delete_mask(incoming, DELETE_COLUMN)
    result = concat_file_group(stored, incoming, deletes, ctx.payload_class) if ctx.concat_inserts else \
        merge_file_group(stored, incoming, deletes, ctx.payload_class, ctx.payload_ordering_field or ctx.ordering_field)
    if not (result.num_updates or result.num_inserts or result.num_deletes):   # e.g. deletes of unknown keys
        return stats_table([])
    previous = None
    if footer is not None and ctx.virtual_keys is None:   # the old filter plus the new keys (see PreviousFilter)
        previous = PreviousFilter(footer, result.new_keys)

    name = base_file_name(file_id, token, ctx.instant_time)
    relative = partition_file(partition, name)
    kept = 0 if result.kept is None else result.kept.num_rows
    # numbered by their place in the new file (copied rows first), as Hudi's merge handle counts records written
    first = reserve_sequence(token, kept + result.written.num_rows) + kept
    written = stamp_meta(result.written.sort_by(RECORD_KEY), ctx, name, partition_id, first)
    table = pa.concat_tables([with_file_name(result.kept, name), written]) if result.kept is not None else written
    if ctx.virtual_keys is not None:
        table = blank_meta(table, name)
    create_marker(ctx.storage, ctx.instant_time, relative, "MERGE" if existing else "CREATE")
    out = write_base_file(ctx.storage, relative, table, footer_bloom(ctx), ctx.compression, ctx.avro_schema_json,
                          ctx.unique_columns, previous)
    cdc_stats = _write_cdc_log(ctx, partition, file_id, token, stored, written, table) \
        if ctx.cdc_mode and stored is not None else None
    crash_point("write.executor.after_file")
    task_failure_point("write.executor.after_file")
    return stats_table([(partition, file_id, out, existing.base_instant if existing else "null",
                    result.num_inserts, result.num_updates, result.num_deletes)],
                  event_times=_event_times(ctx, result.written), cdc_stats=cdc_stats)


def _write_cdc_log(ctx: WriteContext, partition: str, file_id: str, token: str, stored: pa.Table,
                   written: pa.Table, table: pa.Table) -> str | None:
    """A CDC table's merge also writes the change log of this file group (pyhudi.cdc.logging); its cdcStats."""
    from pyhudi.cdc.logging import cdc_block, cdc_log_name, cdc_stats_json
    from pyhudi.file_group.log_file import write_log_file
    block = cdc_block(ctx.cdc_mode, ctx.instant_time, ctx.table_avro_schema_json, stored, written,
                      table[RECORD_KEY].combine_chunks(), ctx.data_schema.names)
    if block is None:
        return None
    name = cdc_log_name(file_id, ctx.instant_time, token)
    relative = partition_file(partition, name)
    create_marker(ctx.storage, ctx.instant_time, relative, "CREATE")
    return cdc_stats_json({relative: write_log_file(ctx.storage.fs, ctx.storage.full(relative), [block])})


def append_log_file(ctx: WriteContext, incoming: pa.Table, partition: str, file_id: str,
                    state: GroupState, new_group: bool = False) -> pa.Table:
    """Merge-on-read: records become data blocks (cut at hoodie.logfile.data.block.max.size) and deletes one
    delete block, in the file group's latest slice's log (pyhudi.file_group.log_writer: a new version per write on
    storage without append, rolled over past hoodie.logfile.max.size); one write stat per log file written.
    A `new_group` is one the bucket index opens with a log file (base instant = this instant): its records are
    inserts and deletes of its keys change nothing, as for a new base file."""
    from pyhudi.file_group.log_block import natural_delete
    from pyhudi.file_group.log_file import avro_data_block, delete_block, parquet_data_block
    from pyhudi.file_group.log_writer import SliceLog, write_slice_log

    token, partition_id = task_token()
    deletes = delete_mask(incoming, DELETE_COLUMN)
    if new_group:
        incoming = incoming.filter(pc.invert(deletes))
        deletes = pa.repeat(pa.scalar(False), incoming.num_rows)
    if deletes.true_count:
        updates = incoming.filter(pc.invert(deletes)).sort_by(RECORD_KEY)
        removed = incoming.filter(deletes)
    else:   # the usual merge-on-read upsert: updates only
        updates, removed = incoming.sort_by(RECORD_KEY), incoming.slice(0, 0)
    if not (updates.num_rows or removed.num_rows):
        return stats_table([])
    calls, rows = [], []        # the append calls (lists of blocks) and the data records of each
    if updates.num_rows:
        records = stamp_meta(updates, ctx, file_id, partition_id, reserve_sequence(token, updates.num_rows))
        per_block = max(1, ctx.log_block_max_size // max(1, records.nbytes // records.num_rows))
        for start in range(0, records.num_rows, per_block):
            chunk = records.slice(start, per_block)
            block = avro_data_block(chunk, ctx.instant_time, ctx.avro_schema_json) if ctx.log_block_format == "avro" \
                else parquet_data_block(chunk, ctx.instant_time, ctx.avro_schema_json, ctx.compression)
            calls.append([block])
            rows.append(updates.slice(start, per_block))
    if removed.num_rows:   # with the last data block, as HoodieAppendHandle's closing append
        ordering = (removed[ctx.ordering_field].to_pylist() if ctx.ordering_field in removed.column_names
                    else [None] * removed.num_rows)
        keys = [(k, p, o) if o is not None else natural_delete(k, p) for k, p, o in
                zip(removed[RECORD_KEY].to_pylist(), removed[PARTITION_PATH].to_pylist(), ordering)]
        # the SCHEMA header: the writer schema with meta fields, as HoodieAppendHandle's header for every block
        block = delete_block(keys, ctx.instant_time, ctx.ordering_avro_type, ctx.avro_schema_json)
        if calls:
            calls[-1].append(block)
        else:
            calls.append([block])
            rows.append(updates.slice(0, 0))
    target = SliceLog(partition, file_id, ctx.instant_time, 1, token, None) if ctx.log_per_commit else \
        SliceLog(partition, file_id, state.log_base_instant, state.next_log_version, token, state.latest_log)
    outputs = write_slice_log(ctx.storage.fs, ctx.storage.full, target, calls, ctx.log_max_size,
                              lambda relative: create_marker(ctx.storage, ctx.instant_time, relative, "APPEND"))
    crash_point("write.executor.after_file")
    task_failure_point("write.executor.after_file")
    base_name = state.base_path.rsplit("/", 1)[-1] if state.base_path else ""
    stats = []
    for output in outputs:
        written = rows[output.calls[0]] if len(output.calls) == 1 else pa.concat_tables([rows[i] for i in output.calls])
        deleted = removed.num_rows if output.calls[-1] == len(calls) - 1 else 0
        out = WrittenFile(output.path, written.num_rows, output.size - output.offset, None, None)
        inserts, updated = (written.num_rows, 0) if new_group else (0, written.num_rows)
        previous = "null" if new_group else (ctx.instant_time if ctx.log_per_commit else state.log_base_instant)
        stats.append(stats_table([(partition, file_id, out, previous,
                                   inserts, updated, deleted)], log_version=output.version, base_file=base_name,
                                 event_times=_event_times(ctx, written), log_offset=output.offset))
    return pa.concat_tables(stats)


def _event_times(ctx: WriteContext, written: pa.Table) -> tuple:
    """(minEventTime, maxEventTime) of the written records, for the payloads that report them."""
    if not payload_of(ctx.payload_class).event_time:
        return None, None
    return event_time_range(written, ctx.event_time_field or "ts")


def empty_stats() -> pa.Table:
    """The stats of a task that wrote nothing."""
    return stats_table([])


def stats_table(rows: list[tuple[str, str, WrittenFile, str, int, int, int]], log_version: int | None = None,
                base_file: str | None = None, event_times: tuple = (None, None),
                cdc_stats: str | None = None, log_offset: int | None = None) -> pa.Table:
    """One STATS_SCHEMA row per written file (the writers' tasks return these; bulk_insert's too)."""
    columns = {name: [] for name in STATS_SCHEMA.names}
    for partition, file_id, out, prev, inserts, updates, deletes in rows:
        columns["cdc_stats"].append(cdc_stats)
        columns["min_event_time"].append(event_times[0])
        columns["max_event_time"].append(event_times[1])
        columns["log_version"].append(log_version)
        columns["base_file"].append(base_file)
        columns["log_offset"].append(log_offset)
        for name, value in (("partition_path", partition), ("file_id", file_id), ("path", out.path),
                            ("prev_commit", prev), ("num_writes", out.num_rows), ("num_inserts", inserts),
                            ("num_updates", updates), ("num_deletes", deletes), ("file_size", out.size),
                            ("min_key", out.min_key), ("max_key", out.max_key)):
            columns[name].append(value)
    return pa.Table.from_pydict(columns, schema=STATS_SCHEMA)
