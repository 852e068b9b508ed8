"""Merge-on-read snapshot of one file slice: its base file merged with its log files, as Apache Hudi 0.14/0.15
reads it (``HoodieMergedLogRecordScanner`` for the logs, the record payload for log-vs-base). Pure pyarrow, so it
runs unchanged inside Spark executors.

What the slice's log files contribute (``HoodieMergedLogRecordScanner``, blocks read in file order):

* a data or delete block counts only when its ``INSTANT_TIME`` is a committed, visible write (``visible_instants``:
  the completed delta commits up to the query instant; uncommitted, rolled-back and later blocks are skipped);
* a ROLLBACK command block voids the blocks of its ``TARGET_INSTANT_TIME`` read before it (blocks after it stay),
  unless the command itself is later than the query instant;
* records of the same key combine with the payload's ``preCombine``: the record with the greater ordering
  (precombine) value wins and on a tie the later one wins, so without an ordering field the latest record wins;
* a delete-block entry deletes its key, except that a record already read with a *greater* ordering value
  survives a delete whose ordering value is comparable with it (same Java class) and not the "natural order"
  marker 0; a record read after a delete always wins over the delete (natural order);
* a record with ``_hoodie_is_deleted = true`` takes part in that combining like any record and, if it is the
  survivor, deletes its key.

Then the survivors meet the base file (``combineAndGetUpdateValue`` of the payload):

* ``OverwriteWithLatestAvroPayload``: the log record replaces the base record whatever their ordering values;
* ``DefaultHoodieRecordPayload`` (and ``EventTimeAvroPayload``): the base record is kept when its ordering value
  is greater than the log record's (a ``_hoodie_is_deleted`` log record then deletes nothing);
* ``OverwriteNonDefaultsWithLatestAvroPayload`` / ``PartialUpdateAvroPayload``: null fields of the log record
  keep the base record's values (PartialUpdate: the newer record by ordering value comes first, also when the
  log records combine); ``EmptyHoodieRecordPayload``: every log record deletes its key;
* delete-block deletes remove the base record under every payload; log-only keys are inserts.
The rules themselves live in :mod:`pyhudi.merge` (one owner for writes, reads and compaction).

Null ordering values (Java refuses them when writing) sort below every value, and ordering values of a timestamp
column compare as Hudi's raw longs do (in time order).

Everything is vectorized (sorts, ``is_in``/``index_in``, filters) except the combining of keys that have both a
delete-block entry and a record in the logs, which is folded per key in Python (only those keys' log events).

The work is split by concern: reader/log_scan.py picks and decodes the blocks, reader/slice_columns.py conforms
records to the output schema, reader/log_combine.py combines and merges; this module runs them for one slice.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.errors import ConfigError
from pyhudi.file_group.model import FileSlice
from pyhudi.merge import EVENT_TIME_PAYLOAD, OVERWRITE_WITH_LATEST, Payload, payload_of
from pyhudi.reader.log_combine import combine_log_records, fill_from_base, merge_decisions, merge_with_base
from pyhudi.reader.log_scan import LogRecords, ScannedBlock, log_records, scan_log_blocks
from pyhudi.reader.slice_columns import (KEY, ORD, conform, ordering_field_type, ordering_type, ordering_values,
                                         read_base_columns, record_keys, with_internals)
from pyhudi.storage import Storage


def read_file_slice(storage: Storage, file_slice: FileSlice, schema: pa.Schema, *,
                    visible_instants: Iterable[str], ordering_field: str | None,
                    payload_class: str = OVERWRITE_WITH_LATEST, base_only: bool = False,
                    committed_before: str | None = None,
                    committed_extents: Mapping[str, list[tuple[int, int]]] | None = None) -> pa.Table:
    """The rows of ``file_slice`` as of the query instant, in exactly ``schema``.

    ``schema`` is the output schema in storage types (meta columns + data columns, or a projection of them);
    columns a file lacks come back null and narrower stored types are cast (int -> long, ...). The record key,
    ordering field and ``_hoodie_is_deleted`` are read for merging even when ``schema`` leaves them out.

    ``visible_instants``: instant times whose log blocks count (the completed write instants up to the query
    instant). ``committed_before``: optionally the first instant of the active timeline; blocks of older
    (archived) instants then count as committed too, as Hudi's ``containsOrBeforeTimelineStarts`` does.
    ``ordering_field``: the precombine field (dotted for a nested field), or None for arrival order.
    ``payload_class``: OverwriteWithLatestAvroPayload (default), DefaultHoodieRecordPayload or
    EventTimeAvroPayload. ``base_only=True`` is the read-optimized view (the base file alone; an empty table for
    a log-only slice). ``committed_extents``: per log file path, the byte ranges completed commits wrote
    (``FileSystemView.committed_extents``); a corrupt block inside one raises CorruptFileError.
    """
    visible = frozenset(visible_instants)
    if base_only or not file_slice.log_files:
        if file_slice.base_file is None:
            return schema.empty_table()
        raw = read_base_columns(storage, file_slice.base_file.path, schema, ordering_field)
        return conform(raw, schema, file_slice.base_file.path)

    payload = _check_payload(payload_class)
    blocks = scan_log_blocks(storage, file_slice.log_files, visible, committed_before=committed_before,
                             committed_extents=committed_extents)
    raw_base = None
    if file_slice.base_file is not None:
        raw_base = read_base_columns(storage, file_slice.base_file.path, schema, ordering_field)
    sources = ([raw_base] if raw_base is not None else []) + [b.records for b in blocks if b.records is not None]
    ord_type = ordering_type(schema, ordering_field, sources)

    logs = log_records(blocks, schema, ordering_field, ord_type)
    winners, deleted_keys = combine_log_records(logs, ordering_field is not None and ord_type is not None, payload)
    if raw_base is None:
        base = None
    else:
        base = with_internals(conform(raw_base, schema, file_slice.base_file.path), raw_base, ordering_field,
                               ord_type, file_slice.base_file.path)
    return merge_with_base(base, winners, deleted_keys, schema, payload,
                           use_ordering=ordering_field is not None and ord_type is not None)


CHANGE_KEY = "__pyhudi_change_key"     # slice_changes: the record key a change row is about
CHANGE_EMIT = "__pyhudi_change_emit"   # True: a log record to emit; False: a base key to drop


def slice_changes(storage: Storage, file_slice: FileSlice, schema: pa.Schema, *,
                  visible_instants: Iterable[str], ordering_field: str | None,
                  payload_class: str = OVERWRITE_WITH_LATEST, committed_before: str | None = None,
                  committed_extents: Mapping[str, list[tuple[int, int]]] | None = None) -> pa.Table:
    """What the slice's log files change in its base file, so that a native scan of the base file can be merged
    with them by a join: ``read_file_slice`` == (base rows whose key is not among the drop rows) + emit rows.

    Returns ``schema`` + CHANGE_KEY + CHANGE_EMIT: emit rows (CHANGE_EMIT true) are the log records that replace
    or add a row; drop rows (CHANGE_EMIT false, other columns null) name the keys whose base row goes. The base
    file is read (key and ordering columns only) only when the payload can keep a base record over a log record
    (event-time payloads with an ordering field); otherwise every key in the logs drops its base row.
    """
    payload = _check_payload(payload_class)
    blocks = scan_log_blocks(storage, file_slice.log_files, frozenset(visible_instants),
                             committed_before=committed_before, committed_extents=committed_extents)
    ord_type = ordering_type(schema, ordering_field, [])
    use_ordering = ordering_field is not None and ord_type is not None
    logs = log_records(blocks, schema, ordering_field, ord_type)
    winners, deleted_keys = combine_log_records(logs, use_ordering, payload)
    base = None
    if file_slice.base_file is not None and payload.fills_nulls and winners.num_rows:
        # the emitted records take null fields from the base rows they replace, so those rows are read whole
        where = file_slice.base_file.path
        raw = read_base_columns(storage, where, schema, ordering_field)
        full = with_internals(conform(raw, schema, where), raw, ordering_field, ord_type, where)
        winners = fill_from_base(payload, full, winners, schema.names, use_ordering)
    elif file_slice.base_file is not None and use_ordering and payload.stored_can_win:
        where = file_slice.base_file.path
        raw = read_base_columns(storage, where, pa.schema([]), ordering_field)
        base = pa.table({KEY: record_keys(raw, where), ORD: ordering_values(raw, ordering_field, ord_type, where)})
    keep_base, emit = merge_decisions(base, winners, deleted_keys, payload, use_ordering=use_ordering)
    if base is not None and base.num_rows:
        drops = base[KEY].combine_chunks().filter(pc.invert(keep_base))
    else:
        drops = pa.concat_arrays([deleted_keys, winners[KEY].combine_chunks()]) if winners.num_rows \
            else deleted_keys
    emitted = winners.filter(emit) if winners.num_rows else winners
    out_schema = pa.schema([f.with_nullable(True) for f in schema] + [pa.field(CHANGE_KEY, pa.string()),
                                                                       pa.field(CHANGE_EMIT, pa.bool_())])
    out = pa.Table.from_arrays(emitted.select(schema.names).columns +
                               [emitted[KEY], pa.chunked_array([[True] * emitted.num_rows], pa.bool_())],
                               schema=out_schema)
    dropped = pa.table([pa.nulls(len(drops), f.type) for f in schema] +
                       [drops, pa.array([False] * len(drops), pa.bool_())], schema=out_schema)
    return pa.concat_tables([out, dropped])


def _check_payload(payload_class: str | Payload) -> Payload:
    try:
        return payload_of(payload_class, "hoodie.compaction.payload.class")
    except ConfigError as exc:
        raise ConfigError(f"{exc}; or read the table read-optimized (hoodie.datasource.query.type="
                          "read_optimized)") from exc


__all__ = ["read_file_slice", "slice_changes", "merge_decisions", "ordering_field_type", "CHANGE_KEY", "CHANGE_EMIT", "scan_log_blocks",
           "combine_log_records", "merge_with_base", "LogRecords", "ScannedBlock", "EVENT_TIME_PAYLOAD"]
