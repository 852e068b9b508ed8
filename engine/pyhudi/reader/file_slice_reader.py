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
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.errors import ConfigError, CorruptFileError, PyHudiError, SchemaError
from pyhudi.file_group.log_block import ORDERING_VAL_BRANCHES, BlockType, LogBlock
from pyhudi.file_group.log_file import read_log_bytes
from pyhudi.file_group.model import FileSlice, LogFile
from pyhudi.merge import (EVENT_TIME_PAYLOAD, IS_DELETED_FIELD, OVERWRITE_WITH_LATEST, RECORD_KEY, Payload,
                          combine_with_stored, payload_of, precombine, stored_wins)
from pyhudi.schema import to_storage
from pyhudi.storage import Storage

# Internal columns carried next to the output schema while merging (dropped before returning).
_KEY = "__pyhudi_key"
_ORD = "__pyhudi_ord"
_SEQ = "__pyhudi_seq"
_DEL = "__pyhudi_is_deleted"
_INTERNAL = (_KEY, _ORD, _SEQ, _DEL)

_DATA_BLOCKS = (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK)


# --------------------------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------------------------

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
        raw = _read_parquet(storage, file_slice.base_file.path, schema, ordering_field)
        return _conform(raw, schema, file_slice.base_file.path)

    payload = _check_payload(payload_class)
    blocks = scan_log_blocks(storage, file_slice.log_files, visible, committed_before=committed_before,
                             committed_extents=committed_extents)
    raw_base = None
    if file_slice.base_file is not None:
        raw_base = _read_parquet(storage, file_slice.base_file.path, schema, ordering_field)
    sources = ([raw_base] if raw_base is not None else []) + [b.records for b in blocks if b.records is not None]
    ord_type = _ordering_type(schema, ordering_field, sources)

    logs = _log_records(blocks, schema, ordering_field, ord_type)
    winners, deleted_keys = combine_log_records(logs, ordering_field is not None and ord_type is not None, payload)
    if raw_base is None:
        base = None
    else:
        base = _with_internals(_conform(raw_base, schema, file_slice.base_file.path), raw_base, ordering_field,
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
    ord_type = _ordering_type(schema, ordering_field, [])
    use_ordering = ordering_field is not None and ord_type is not None
    logs = _log_records(blocks, schema, ordering_field, ord_type)
    winners, deleted_keys = combine_log_records(logs, use_ordering, payload)
    base = None
    if file_slice.base_file is not None and payload.fills_nulls and winners.num_rows:
        # the emitted records take null fields from the base rows they replace, so those rows are read whole
        where = file_slice.base_file.path
        raw = _read_parquet(storage, where, schema, ordering_field)
        full = _with_internals(_conform(raw, schema, where), raw, ordering_field, ord_type, where)
        winners = _fill_from_base(payload, full, winners, schema.names, use_ordering)
    elif file_slice.base_file is not None and use_ordering and payload.stored_can_win:
        where = file_slice.base_file.path
        raw = _read_parquet(storage, where, pa.schema([]), ordering_field)
        base = pa.table({_KEY: _record_keys(raw, where), _ORD: _ordering_values(raw, ordering_field, ord_type, where)})
    keep_base, emit = merge_decisions(base, winners, deleted_keys, payload, use_ordering=use_ordering)
    if base is not None and base.num_rows:
        drops = base[_KEY].combine_chunks().filter(pc.invert(keep_base))
    else:
        drops = pa.concat_arrays([deleted_keys, winners[_KEY].combine_chunks()]) if winners.num_rows \
            else deleted_keys
    emitted = winners.filter(emit) if winners.num_rows else winners
    out_schema = pa.schema([f.with_nullable(True) for f in schema] + [pa.field(CHANGE_KEY, pa.string()),
                                                                       pa.field(CHANGE_EMIT, pa.bool_())])
    out = pa.Table.from_arrays(emitted.select(schema.names).columns +
                               [emitted[_KEY], pa.chunked_array([[True] * emitted.num_rows], pa.bool_())],
                               schema=out_schema)
    dropped = pa.table([pa.nulls(len(drops), f.type) for f in schema] +
                       [drops, pa.array([False] * len(drops), pa.bool_())], schema=out_schema)
    return pa.concat_tables([out, dropped])


@dataclass
class ScannedBlock:
    """A log block that survived the scan: committed, visible and not rolled back (decoded)."""

    path: str
    block: LogBlock

    @property
    def records(self) -> pa.Table | None:
        return self.block.records

    @property
    def instant_time(self) -> str | None:
        return self.block.instant_time


def scan_log_blocks(storage: Storage, log_files: list[LogFile], visible_instants: Iterable[str], *,
                    committed_before: str | None = None,
                    committed_extents: Mapping[str, list[tuple[int, int]]] | None = None) -> list[ScannedBlock]:
    """The data and delete blocks of ``log_files`` (in order) that a reader applies, decoded.

    Blocks of instants outside ``visible_instants`` are skipped without decoding; a ROLLBACK command block drops
    the earlier blocks of its target instant (when the command itself is not later than the latest visible
    instant, like Hudi's scanner, which stops at blocks later than the query instant). Corrupt blocks are
    skipped with a warning by the log reader (the torn tail of a failed write), except inside a byte range a
    completed commit wrote (``committed_extents``): committed data is damaged, so CorruptFileError.
    """
    visible = frozenset(visible_instants)
    latest = max(visible) if visible else None

    def counts(instant: str | None) -> bool:
        if not instant:
            return False
        if instant in visible:
            return True
        return committed_before is not None and instant < committed_before and (latest is None or instant <= latest)

    queued: list[tuple[str, bytes, LogBlock]] = []
    for log_file in log_files:
        data = storage.read_bytes(log_file.path)
        extents = (committed_extents or {}).get(log_file.path, ())
        for block in read_log_bytes(data, log_file.path, decode=False, include_corrupt=True):
            instant = block.instant_time
            if block.block_type == BlockType.CORRUPT_BLOCK:
                _check_torn_block(log_file.path, block, extents)
                continue
            if block.block_type == BlockType.COMMAND_BLOCK:
                if block.is_rollback and instant and latest is not None and instant <= latest:
                    target = block.target_instant_time
                    queued = [q for q in queued if q[2].instant_time != target]
                continue
            if block.block_type not in _DATA_BLOCKS and block.block_type != BlockType.DELETE_BLOCK:
                # CDC blocks hold change data, not table rows; corrupt blocks were already reported
                if block.block_type == BlockType.HFILE_DATA_BLOCK and counts(instant):
                    raise PyHudiError(
                        f"Hudi log file {log_file.path}: the {block.block_type.name} at offset {block.offset} "
                        f"(instant {instant}) cannot be read by pyhudi (only avro/parquet data, delete and command "
                        "blocks); compact the file group with Hudi, or read it read-optimized.")
                continue
            if counts(instant):
                queued.append((log_file.path, data, block))

    out = []
    for path, data, header_only in queued:
        raw = data[header_only.offset:header_only.offset + header_only.length]
        decoded = list(read_log_bytes(raw, f"{path} (block at offset {header_only.offset})", decode=True))
        if len(decoded) != 1:     # the framing was validated by the header pass over the same bytes
            raise CorruptFileError(f"Hudi log file {path}: the block at offset {header_only.offset} cannot be "
                                   "decoded; restore the file, or roll back its instant")
        out.append(ScannedBlock(path, decoded[0]))
    return out


def _check_torn_block(path: str, block: LogBlock, extents) -> None:
    """A corrupt region is tolerated (a failed write's torn append) unless a completed commit wrote those bytes."""
    start, end = block.offset, block.offset + block.length
    for low, high in extents:
        if start < high and low < end:
            raise CorruptFileError(
                f"Hudi log file {path}: bytes {start}-{end} hold a corrupt block (bad magic, size or framing) inside "
                f"the range {low}-{high} a completed commit wrote; committed records would be lost. Restore the "
                "file, or roll back the instant that wrote it.")


@dataclass
class LogRecords:
    """Every record and delete entry of the scanned blocks, in log order (``seq`` shared by both)."""

    records: pa.Table                      # output schema + _KEY, _ORD, _SEQ, _DEL
    delete_keys: list[str] = field(default_factory=list)
    delete_seqs: list[int] = field(default_factory=list)
    delete_vals: list[Any] = field(default_factory=list)
    delete_branches: list[int | None] = field(default_factory=list)
    ord_type: pa.DataType | None = None


def combine_log_records(logs: LogRecords, use_ordering: bool,
                        payload: Payload | str | None = None) -> tuple[pa.Table, pa.Array]:
    """Fold the log records per key as HoodieMergedLogRecordScanner does (the payload's preCombine).

    Returns (winners, deleted_keys): one surviving record per key (``records`` rows, internal columns kept), and
    the keys whose last effective event is a delete-block entry. Keys with both delete-block entries and records
    are folded per key in Python, winner-takes-all (also under PartialUpdateAvroPayload).
    """
    payload = payload_of(payload, "hoodie.compaction.payload.class")
    records = logs.records
    if payload.deletes_all and records.num_rows:
        records = records.set_column(records.schema.get_field_index(_DEL), _DEL,
                                     pa.array([True] * records.num_rows, pa.bool_()))
    rec_keys = records[_KEY]
    del_unique = pa.array(sorted(set(logs.delete_keys)), pa.string())

    if len(del_unique):
        has_delete = pc.is_in(rec_keys, value_set=del_unique)
        recs_simple = records.filter(pc.invert(has_delete))
        recs_mixed = records.filter(has_delete)
    else:
        recs_simple, recs_mixed = records, records.slice(0, 0)

    fill = [c for c in recs_simple.column_names if c not in _INTERNAL and not c.startswith("_hoodie_")]
    winners = [precombine(recs_simple, payload, _KEY, _ORD if use_ordering else None, _SEQ,
                          recs_simple[_DEL].combine_chunks() if recs_simple.num_rows else None, fill)]
    deleted: list[str] = []
    mixed_keys = set(recs_mixed[_KEY].to_pylist()) if recs_mixed.num_rows else set()
    deleted.extend(k for k in del_unique.to_pylist() if k not in mixed_keys)
    if mixed_keys:
        win_seqs, fold_deleted = _fold_mixed(recs_mixed, logs, mixed_keys, use_ordering)
        deleted.extend(fold_deleted)
        if win_seqs:
            winners.append(recs_mixed.filter(pc.is_in(recs_mixed[_SEQ], value_set=pa.array(win_seqs, pa.int64()))))
    return pa.concat_tables(winners), pa.array(deleted, pa.string())


def merge_with_base(base: pa.Table | None, winners: pa.Table, deleted_keys: pa.Array, schema: pa.Schema,
                    payload_class: Payload | str = OVERWRITE_WITH_LATEST, *, use_ordering: bool = True) -> pa.Table:
    """Apply the combined log records to the base records (both carrying the internal columns)."""
    names = schema.names
    payload = payload_of(payload_class, "hoodie.compaction.payload.class")
    if payload.fills_nulls and base is not None and base.num_rows and winners.num_rows:
        winners = _fill_from_base(payload, base, winners, names, use_ordering)
    keep_base, emit = merge_decisions(base, winners, deleted_keys, payload, use_ordering=use_ordering)
    if base is None or base.num_rows == 0:
        return winners.filter(emit).select(names) if winners.num_rows else schema.empty_table()
    kept = base.filter(keep_base).select(names)
    if not winners.num_rows:
        return kept
    return pa.concat_tables([kept, winners.filter(emit).select(names)])


def merge_decisions(base: pa.Table | None, winners: pa.Table, deleted_keys: pa.Array,
                    payload_class: Payload | str = OVERWRITE_WITH_LATEST, *,
                    use_ordering: bool = True) -> tuple[pa.Array, pa.Array]:
    """(keep_base, emit): which base rows stay and which combined log records are emitted.

    ``base`` needs only the internal key and ordering columns. A base row goes when its key was deleted in the
    logs, or when a log record of its key wins (always under OverwriteWithLatestAvroPayload; under the event-time
    payloads unless the base ordering value is greater; the null-filling payloads have already merged the base
    row into the log record). A log record is emitted unless it is a ``_hoodie_is_deleted`` record or a base
    record beat it.
    """
    payload = payload_of(payload_class, "hoodie.compaction.payload.class")
    event_time = payload.stored_can_win and not payload.fills_nulls and use_ordering
    win_keys = winners[_KEY].combine_chunks() if winners.num_rows else pa.array([], pa.string())
    emit = pc.invert(pc.fill_null(winners[_DEL].combine_chunks(), False)) if winners.num_rows \
        else pa.array([], pa.bool_())
    if base is None or base.num_rows == 0:
        return pa.array([], pa.bool_()), emit

    base_keys = base[_KEY].combine_chunks()
    keep_base = pc.invert(pc.is_in(base_keys, value_set=deleted_keys)) if len(deleted_keys) \
        else pa.array([True] * base.num_rows, pa.bool_())
    if winners.num_rows:
        idx = pc.index_in(base_keys, value_set=win_keys)
        matched = pc.is_valid(idx)
        if event_time:
            win_ord = pc.take(winners[_ORD].combine_chunks(), idx)
            base_ord = base[_ORD].combine_chunks()
            # the stored record stays when its ordering value is greater (nulls are below every value)
            base_wins = pc.fill_null(pc.and_(matched, stored_wins(base_ord, win_ord)), False)
            stay = pc.or_(pc.invert(matched), base_wins)
            beaten = pc.filter(idx, base_wins)
            if len(beaten):
                positions = pa.array(range(winners.num_rows), idx.type)
                emit = pc.and_(emit, pc.invert(pc.is_in(positions, value_set=beaten)))
        else:
            stay = pc.invert(matched)
        keep_base = pc.and_(keep_base, stay)
    return keep_base, emit


# --------------------------------------------------------------------------------------------------------------
# Reading and conforming
# --------------------------------------------------------------------------------------------------------------

def _check_payload(payload_class: str | Payload) -> Payload:
    try:
        return payload_of(payload_class, "hoodie.compaction.payload.class")
    except ConfigError as exc:
        raise ConfigError(f"{exc}; or read the table read-optimized (hoodie.datasource.query.type="
                          "read_optimized)") from exc


def _fill_from_base(payload: Payload, base: pa.Table, winners: pa.Table, names: list[str],
                    use_ordering: bool) -> pa.Table:
    """The null-filling payloads: each log record that has a base row takes that row's values for its null
    fields (:func:`pyhudi.merge.combine_with_stored`); meta fields stay the log record's."""
    at = pc.index_in(winners[_KEY], value_set=base[_KEY])
    matched = pc.is_valid(at)
    if not pc.any(matched).as_py():
        return winners
    aligned = base.take(pc.fill_null(at, 0))
    data = [n for n in names if not n.startswith("_hoodie_")]
    merged = combine_with_stored(payload, winners, aligned, data, winners[_ORD] if use_ordering else None,
                                 aligned[_ORD] if use_ordering else None)
    columns = [pc.if_else(matched, merged[n], winners[n]) if n in data else winners[n]
               for n in winners.column_names]
    return pa.Table.from_arrays(columns, schema=winners.schema)


def _lookup(names: list[str], name: str) -> str | None:
    if name in names:
        return name
    low = name.lower()
    hits = [n for n in names if n.lower() == low]
    return hits[0] if len(hits) == 1 else None


def _read_parquet(storage: Storage, relative: str, schema: pa.Schema, ordering_field: str | None) -> pa.Table:
    """A base file's columns that the output schema or the merge needs."""
    wanted = list(schema.names) + [RECORD_KEY]
    if ordering_field:
        wanted.append(ordering_field.split(".", 1)[0])
    try:
        with storage.fs.open_input_file(storage.full(relative)) as source:
            parquet = pq.ParquetFile(source)
            names = parquet.schema_arrow.names
            columns = []
            for name in wanted:
                hit = _lookup(names, name)
                if hit is not None and hit not in columns:
                    columns.append(hit)
            return parquet.read(columns=columns)
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowInvalid) as exc:
        raise CorruptFileError(f"Hudi base file {relative} cannot be read: {exc}. Restore the file, or roll back "
                               "the instant that wrote it.") from exc


def _conform(raw: pa.Table, schema: pa.Schema, where: str) -> pa.Table:
    """``raw`` in exactly ``schema``: columns matched by name (case-insensitively as a fallback), missing ones
    null, types cast to the schema's."""
    if raw.schema.equals(schema, check_metadata=False):
        return raw.replace_schema_metadata(schema.metadata)
    relaxed = pa.schema([f.with_nullable(True) for f in schema], metadata=schema.metadata)
    try:
        converted = to_storage(raw, relaxed)
    except SchemaError as exc:
        raise SchemaError(f"{where}: its records cannot be read in the table schema: {exc}") from exc
    return pa.Table.from_arrays(converted.columns, schema=schema)


def _ordering_column(table: pa.Table, ordering_field: str) -> pa.ChunkedArray | None:
    head, _, rest = ordering_field.partition(".")
    name = _lookup(table.column_names, head)
    if name is None:
        return None
    column = table[name]
    for part in rest.split(".") if rest else []:
        if not pa.types.is_struct(column.type):
            return None
        names = [column.type.field(i).name for i in range(column.type.num_fields)]
        hit = _lookup(names, part)
        if hit is None:
            return None
        column = pc.struct_field(column, hit)
    return column


def _schema_field_type(schema: pa.Schema, ordering_field: str) -> pa.DataType | None:
    head, _, rest = ordering_field.partition(".")
    name = _lookup(schema.names, head)
    if name is None:
        return None
    t = schema.field(name).type
    for part in rest.split(".") if rest else []:
        if not pa.types.is_struct(t):
            return None
        names = [t.field(i).name for i in range(t.num_fields)]
        hit = _lookup(names, part)
        if hit is None:
            return None
        t = t.field(hit).type
    return t


def ordering_field_type(schema: pa.Schema, ordering_field: str) -> pa.DataType | None:
    """The type of the (possibly dotted) ordering field in ``schema``, or None when the schema lacks it."""
    return _schema_field_type(schema, ordering_field)


def _ordering_type(schema: pa.Schema, ordering_field: str | None, sources: list[pa.Table]) -> pa.DataType | None:
    """The type ordering values are compared in: the schema's, else the first file's that has the field."""
    if not ordering_field:
        return None
    t = _schema_field_type(schema, ordering_field)
    if t is not None:
        return t
    for source in sources:
        column = _ordering_column(source, ordering_field)
        if column is not None:
            return column.type
    return None


def _ordering_values(raw: pa.Table, ordering_field: str | None, ord_type: pa.DataType | None,
                     where: str) -> pa.ChunkedArray | pa.Array:
    n = raw.num_rows
    if ordering_field is None or ord_type is None:
        return pa.nulls(n, pa.null())
    column = _ordering_column(raw, ordering_field)
    if column is None:
        return pa.nulls(n, ord_type)
    if not column.type.equals(ord_type):
        try:
            column = column.cast(ord_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise SchemaError(f"{where}: ordering field {ordering_field!r} of type {column.type} cannot be compared "
                              f"as {ord_type}: {exc}") from exc
    return column


def _record_keys(raw: pa.Table, where: str) -> pa.ChunkedArray:
    name = _lookup(raw.column_names, RECORD_KEY)
    if name is None:
        raise PyHudiError(
            f"{where} has no {RECORD_KEY} column: the table was written without meta fields "
            "(hoodie.populate.meta.fields=false), and pyhudi merges log records by that column. Read the table "
            "read-optimized, or compact it with Hudi first.")
    keys = raw[name]
    if not pa.types.is_string(keys.type):
        keys = keys.cast(pa.string())
    if keys.null_count:
        raise CorruptFileError(f"{where} holds {keys.null_count} record(s) with a null {RECORD_KEY}; every Hudi "
                               "record needs its key. Restore the file, or roll back the instant that wrote it.")
    return keys


def _with_internals(conformed: pa.Table, raw: pa.Table, ordering_field: str | None, ord_type: pa.DataType | None,
                    where: str) -> pa.Table:
    table = conformed.append_column(_KEY, _record_keys(raw, where))
    return table.append_column(_ORD, _ordering_values(raw, ordering_field, ord_type, where))


def _is_deleted_flags(raw: pa.Table) -> pa.ChunkedArray | pa.Array:
    name = _lookup(raw.column_names, IS_DELETED_FIELD)
    if name is None or not pa.types.is_boolean(raw[name].type):
        return pa.array([False] * raw.num_rows, pa.bool_())
    return pc.fill_null(raw[name], False)


def _log_records(blocks: list[ScannedBlock], schema: pa.Schema, ordering_field: str | None,
                 ord_type: pa.DataType | None) -> LogRecords:
    tables = []
    out = LogRecords(records=None, ord_type=ord_type)  # type: ignore[arg-type]
    seq = 0
    for scanned in blocks:
        block = scanned.block
        where = f"Hudi log file {scanned.path} (block of instant {block.instant_time})"
        if block.block_type == BlockType.DELETE_BLOCK:
            for entry in block.delete_keys or []:
                if entry.record_key is None:
                    raise CorruptFileError(f"{where} deletes a null record key; restore the file or roll back the "
                                           "instant")
                out.delete_keys.append(entry.record_key)
                out.delete_seqs.append(seq)
                out.delete_vals.append(entry.ordering_val)
                out.delete_branches.append(entry.ordering_type)
                seq += 1
            continue
        raw = block.records
        if raw is None or raw.num_rows == 0:
            continue
        table = _with_internals(_conform(raw, schema, where), raw, ordering_field, ord_type, where)
        table = table.append_column(_SEQ, pa.array(range(seq, seq + raw.num_rows), pa.int64()))
        table = table.append_column(_DEL, _is_deleted_flags(raw))
        seq += raw.num_rows
        tables.append(table)
    if tables:
        out.records = pa.concat_tables(tables)
    else:
        out.records = _empty_internal(schema, ord_type)
    return out


def _empty_internal(schema: pa.Schema, ord_type: pa.DataType | None) -> pa.Table:
    fields = list(schema) + [pa.field(_KEY, pa.string()), pa.field(_ORD, ord_type or pa.null()),
                             pa.field(_SEQ, pa.int64()), pa.field(_DEL, pa.bool_())]
    return pa.schema(fields).empty_table()


# --------------------------------------------------------------------------------------------------------------
# Combining
# --------------------------------------------------------------------------------------------------------------

# Java class of a record's ordering value (HoodieAvroUtils.getNestedFieldVal, consistent logical timestamps off)
# and the delete block orderingVal branches that have the same class (ReflectionUtils.isSameClass).
def _same_class_branches(t: pa.DataType | None) -> frozenset[str]:
    if t is None:
        return frozenset()
    if pa.types.is_integer(t):
        return frozenset({"long"}) if t.bit_width == 64 else frozenset({"int"})
    if pa.types.is_timestamp(t):
        return frozenset({"long", "timestamp-micros"})
    if pa.types.is_date(t):
        return frozenset({"date"})
    if pa.types.is_float32(t):
        return frozenset({"float"})
    if pa.types.is_float64(t):
        return frozenset({"double"})
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return frozenset({"string"})
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return frozenset({"bytes"})
    if pa.types.is_decimal(t):
        return frozenset({"decimal"})
    return frozenset()


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _as_micros(value: Any, branch: str | None) -> Any:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return (value - _EPOCH) // _dt.timedelta(microseconds=1)
    return value


def _is_natural(value: Any, branch: str | None) -> bool:
    """The delete carries no ordering of its own: null, or the default ordering value 0 (an integer)."""
    if value is None or branch in (None, "null"):
        return True
    return branch in ("int", "long") and isinstance(value, int) and not isinstance(value, bool) and value == 0


def _greater(a: Any, b: Any) -> bool:
    """a > b with nulls below every value (the order the vectorized path sorts in)."""
    if a is None:
        return False
    if b is None:
        return True
    try:
        return a > b
    except TypeError:
        return False


def _fold_mixed(recs: pa.Table, logs: LogRecords, keys: set[str], use_ordering: bool) -> tuple[list[int], list[str]]:
    """Sequential scanner semantics for the keys that have both records and delete entries in the logs."""
    rec_keys = recs[_KEY].to_pylist()
    rec_seqs = recs[_SEQ].to_pylist()
    rec_ords = recs[_ORD].to_pylist() if use_ordering else [None] * recs.num_rows
    is_timestamp = logs.ord_type is not None and pa.types.is_timestamp(logs.ord_type)
    same_class = _same_class_branches(logs.ord_type) if use_ordering else frozenset()

    events: dict[str, list[tuple]] = {}
    for key, seq, ord_ in zip(rec_keys, rec_seqs, rec_ords):
        events.setdefault(key, []).append((seq, False, ord_, None))
    for key, seq, val, branch in zip(logs.delete_keys, logs.delete_seqs, logs.delete_vals, logs.delete_branches):
        if key in keys:
            name = ORDERING_VAL_BRANCHES[branch] if branch is not None and 0 <= branch < len(ORDERING_VAL_BRANCHES) \
                else None
            events[key].append((seq, True, val, name))

    winners: list[int] = []
    deleted: list[str] = []
    for key, evs in events.items():
        evs.sort(key=lambda e: e[0])
        state: tuple | None = None            # ("rec", ordering, seq) or ("del",)
        for seq, is_delete, value, branch in evs:
            if not is_delete:
                if state is not None and state[0] == "rec" and use_ordering and _greater(state[1], value):
                    continue                  # preCombine keeps the stored record (greater ordering value)
                state = ("rec", value, seq)
                continue
            if state is not None and state[0] == "rec" and use_ordering and not _is_natural(value, branch) \
                    and branch in same_class:
                current, incoming = state[1], value
                if is_timestamp:
                    current, incoming = _as_micros(current, None), _as_micros(incoming, branch)
                if current is not None and _greater(current, incoming):
                    continue                  # the delete is older than the record already read
            state = ("del",)
        if state is None:
            continue
        if state[0] == "rec":
            winners.append(state[2])
        else:
            deleted.append(key)
    return winners, deleted


__all__ = ["read_file_slice", "slice_changes", "merge_decisions", "ordering_field_type", "CHANGE_KEY", "CHANGE_EMIT", "scan_log_blocks",
           "combine_log_records", "merge_with_base", "LogRecords", "ScannedBlock", "EVENT_TIME_PAYLOAD"]
