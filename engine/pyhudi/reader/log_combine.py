"""Combining a file slice's log records per key (the payload's preCombine, delete-block entries in log order) and
meeting the base records (combineAndGetUpdateValue): the merge decisions of reader/file_slice_reader.py, whose
docstring states the rules. Vectorized except keys with both delete entries and records, folded per key."""

from __future__ import annotations

import datetime as _dt
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.file_group.log_block import ORDERING_VAL_BRANCHES
from pyhudi.merge import OVERWRITE_WITH_LATEST, Payload, combine_with_stored, payload_of, precombine, stored_wins
from pyhudi.reader.log_scan import LogRecords
from pyhudi.reader.slice_columns import DEL, INTERNAL, KEY, ORD, SEQ

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
        records = records.set_column(records.schema.get_field_index(DEL), DEL,
                                     pa.array([True] * records.num_rows, pa.bool_()))
    rec_keys = records[KEY]
    del_unique = pa.array(sorted(set(logs.delete_keys)), pa.string())

    if len(del_unique):
        has_delete = pc.is_in(rec_keys, value_set=del_unique)
        recs_simple = records.filter(pc.invert(has_delete))
        recs_mixed = records.filter(has_delete)
    else:
        recs_simple, recs_mixed = records, records.slice(0, 0)

    fill = [c for c in recs_simple.column_names if c not in INTERNAL and not c.startswith("_hoodie_")]
    winners = [precombine(recs_simple, payload, KEY, ORD if use_ordering else None, SEQ,
                          recs_simple[DEL].combine_chunks() if recs_simple.num_rows else None, fill)]
    deleted: list[str] = []
    mixed_keys = set(recs_mixed[KEY].to_pylist()) if recs_mixed.num_rows else set()
    deleted.extend(k for k in del_unique.to_pylist() if k not in mixed_keys)
    if mixed_keys:
        win_seqs, fold_deleted = _fold_mixed(recs_mixed, logs, mixed_keys, use_ordering)
        deleted.extend(fold_deleted)
        if win_seqs:
            winners.append(recs_mixed.filter(pc.is_in(recs_mixed[SEQ], value_set=pa.array(win_seqs, pa.int64()))))
    return pa.concat_tables(winners), pa.array(deleted, pa.string())


def merge_with_base(base: pa.Table | None, winners: pa.Table, deleted_keys: pa.Array, schema: pa.Schema,
                    payload_class: Payload | str = OVERWRITE_WITH_LATEST, *, use_ordering: bool = True) -> pa.Table:
    """Apply the combined log records to the base records (both carrying the internal columns)."""
    names = schema.names
    payload = payload_of(payload_class, "hoodie.compaction.payload.class")
    if payload.fills_nulls and base is not None and base.num_rows and winners.num_rows:
        winners = fill_from_base(payload, base, winners, names, use_ordering)
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
    win_keys = winners[KEY].combine_chunks() if winners.num_rows else pa.array([], pa.string())
    emit = pc.invert(pc.fill_null(winners[DEL].combine_chunks(), False)) if winners.num_rows \
        else pa.array([], pa.bool_())
    if base is None or base.num_rows == 0:
        return pa.array([], pa.bool_()), emit

    base_keys = base[KEY].combine_chunks()
    keep_base = pc.invert(pc.is_in(base_keys, value_set=deleted_keys)) if len(deleted_keys) \
        else pa.array([True] * base.num_rows, pa.bool_())
    if winners.num_rows:
        idx = pc.index_in(base_keys, value_set=win_keys)
        matched = pc.is_valid(idx)
        if event_time:
            win_ord = pc.take(winners[ORD].combine_chunks(), idx)
            base_ord = base[ORD].combine_chunks()
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


def fill_from_base(payload: Payload, base: pa.Table, winners: pa.Table, names: list[str],
                    use_ordering: bool) -> pa.Table:
    """The null-filling payloads: each log record that has a base row takes that row's values for its null
    fields (:func:`pyhudi.merge.combine_with_stored`); meta fields stay the log record's."""
    at = pc.index_in(winners[KEY], value_set=base[KEY])
    matched = pc.is_valid(at)
    if not pc.any(matched).as_py():
        return winners
    aligned = base.take(pc.fill_null(at, 0))
    data = [n for n in names if not n.startswith("_hoodie_")]
    merged = combine_with_stored(payload, winners, aligned, data, winners[ORD] if use_ordering else None,
                                 aligned[ORD] if use_ordering else None)
    columns = [pc.if_else(matched, merged[n], winners[n]) if n in data else winners[n]
               for n in winners.column_names]
    return pa.Table.from_arrays(columns, schema=winners.schema)


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
    rec_keys = recs[KEY].to_pylist()
    rec_seqs = recs[SEQ].to_pylist()
    rec_ords = recs[ORD].to_pylist() if use_ordering else [None] * recs.num_rows
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
