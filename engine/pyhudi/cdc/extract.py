"""Executor side of a CDC query: one file group's change in one commit as Hudi's CDC rows.

The before image is the record in the group's slice before the commit, the after image the record as of the
commit (base file merged with its log files). A key only after is an insert, only before a delete (a replaced
group: all its records), in both and rewritten by the commit (its _hoodie_commit_time is the commit) an update.
Images are JSON objects of every table column, meta columns included, as Hudi's Spark CDC relation writes them.
Where the commit wrote a -cdc log for the group (a copy-on-write merge), the rows come from that log instead
(Hudi's AS_IS case; its images hold the record without meta fields, as in Hudi).
"""

from __future__ import annotations

import base64
import json
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.cdc import CDC_SCHEMA, DELETE, INSERT, UPDATE
from pyhudi.cdc.plan import CdcTask
from pyhudi.schema.meta_fields import COMMIT_TIME, RECORD_KEY

KEY = RECORD_KEY

# read_slice(file_slice, visible_instants) -> the slice's records in the table schema (the reader layer's merge)
SliceReader = Callable[[object, frozenset], pa.Table]


def task_changes(task: CdcTask, read_slice: SliceReader, storage=None, mode: str = "DATA_BEFORE_AFTER") -> pa.Table:
    """The CDC rows of one task."""
    if task.cdc_logs and storage is not None:
        return _as_is(task, read_slice, storage, mode)
    before = read_slice(task.before, task.before_instants) if task.before is not None else None
    if task.replaced:
        return _rows(DELETE, task.instant, before, None) if before is not None else CDC_SCHEMA.empty_table()
    after = read_slice(task.after, task.after_instants) if task.after is not None else None
    if before is None and after is None:
        return CDC_SCHEMA.empty_table()
    if before is None:
        return _rows(INSERT, task.instant, None, after.filter(pc.equal(after[COMMIT_TIME], task.instant)))
    if after is None:
        return _rows(DELETE, task.instant, before, None)
    in_before = pc.is_in(after[KEY], value_set=before[KEY].combine_chunks())
    in_after = pc.is_in(before[KEY], value_set=after[KEY].combine_chunks())
    inserted = after.filter(pc.invert(in_before))
    deleted = before.filter(pc.invert(in_after))
    updated = after.filter(pc.and_(in_before, pc.equal(after[COMMIT_TIME], task.instant)))
    previous = before.filter(pc.is_in(before[KEY], value_set=updated[KEY].combine_chunks()))
    # align the before images with the updated rows by key
    order = pc.index_in(updated[KEY], value_set=previous[KEY].combine_chunks())
    previous = previous.take(order)
    return pa.concat_tables([_rows(INSERT, task.instant, None, inserted),
                             _rows(UPDATE, task.instant, previous, updated),
                             _rows(DELETE, task.instant, deleted, None)])


def _as_is(task: CdcTask, read_slice: SliceReader, storage, mode: str) -> pa.Table:
    """Hudi's AS_IS case: the changes as the commit's -cdc log holds them. DATA_BEFORE_AFTER logs hold both
    images (the record without meta fields); DATA_BEFORE logs the before image, the after image comes from the
    group's slice as of the commit."""
    from pyhudi.cdc.plan import cdc_log_records
    records = cdc_log_records(storage, task.cdc_logs)
    if records is None or not records.num_rows:
        return CDC_SCHEMA.empty_table()
    n = records.num_rows
    before = _json_struct(records["before"])
    if mode == "DATA_BEFORE_AFTER":
        after = _json_struct(records["after"])
    else:
        current = read_slice(task.after, task.after_instants) if task.after is not None else None
        after = pa.nulls(n, pa.string())
        if current is not None and current.num_rows:
            images = _json(current)
            at = pc.index_in(records["record_key"].combine_chunks(), value_set=current[KEY].combine_chunks())
            keep = pc.not_equal(records["op"].combine_chunks(), DELETE).fill_null(False)
            after = pc.if_else(keep, images.take(at), pa.scalar(None, pa.string()))   # a missing key: null
    return pa.Table.from_arrays([records["op"].cast(pa.string()), pa.repeat(pa.scalar(task.instant), n),
                                 before, after], schema=CDC_SCHEMA)


def _json_struct(column: pa.ChunkedArray) -> pa.Array:
    """A struct column's rows as JSON objects; null where the struct is null."""
    array = column.combine_chunks()
    if array.null_count == len(array):
        return pa.nulls(len(array), pa.string())
    flat = pa.Table.from_arrays(array.flatten(), names=[f.name for f in array.type])
    return pc.if_else(array.is_valid(), _json(flat), pa.scalar(None, pa.string()))


def _rows(op: str, instant: str, before: pa.Table | None, after: pa.Table | None) -> pa.Table:
    n = (after if after is not None else before).num_rows
    nulls = pa.nulls(n, pa.string())
    return pa.Table.from_arrays([pa.repeat(pa.scalar(op), n), pa.repeat(pa.scalar(instant), n),
                                 _json(before) if before is not None else nulls,
                                 _json(after) if after is not None else nulls], schema=CDC_SCHEMA)


def _json(table: pa.Table) -> pa.Array:
    """Each row as a JSON object (Spark's internal values as Hudi's Jackson mapper writes them: timestamps as
    microseconds, dates as days since the epoch, binary as base64)."""
    columns = [_plain(table[name]) for name in table.column_names]
    names = table.column_names
    out = [json.dumps(dict(zip(names, values)), default=_default, separators=(",", ":"))
           for values in zip(*[c.to_pylist() for c in columns])] if columns else []
    return pa.array(out, pa.string())


def _plain(column: pa.ChunkedArray) -> pa.ChunkedArray:
    kind = column.type
    if pa.types.is_timestamp(kind):
        return column.cast(pa.timestamp("us", tz=kind.tz)).cast(pa.int64())
    if pa.types.is_date32(kind):
        return column.cast(pa.int32())
    return column


def _default(value):
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return float(value) if hasattr(value, "as_tuple") else str(value)
