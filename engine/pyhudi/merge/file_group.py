"""How an incoming batch combines with the records already stored in a file group (the COW / insert rewrite),
by the payload's rules (:mod:`pyhudi.merge.payloads`, :mod:`pyhudi.merge.rules`).

Deletes are incoming records flagged by the delete operation or by ``_hoodie_is_deleted = true``. A delete
without an ordering value of its own (the delete operation nulls it) always wins, as Hudi's natural order.
Everything here is vectorized pyarrow so it runs unchanged in executors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.errors import DuplicateKeyError
from pyhudi.merge.payloads import OVERWRITE_WITH_LATEST, payload_of
from pyhudi.merge.rules import combine_with_stored, precombine, stored_wins
from pyhudi.schema.meta_fields import IS_DELETED, RECORD_KEY

IS_DELETED_FIELD = IS_DELETED
_STAGING = re.compile(r"^_(hoodie|pyhudi)_")


@dataclass
class MergeResult:
    kept: pa.Table        # stored records carried over unchanged (meta columns preserved)
    written: pa.Table     # incoming records that become new versions (meta columns to be stamped)
    num_updates: int
    num_inserts: int
    num_deletes: int
    new_keys: pa.Array | None = None   # keys of the written records no stored record had (a bloom filter's adds)


def delete_mask(incoming: pa.Table, is_delete_column: str | None) -> pa.Array:
    """True for incoming rows that delete their key."""
    flags = [pc.fill_null(incoming[c], False) for c in (is_delete_column, IS_DELETED_FIELD)
             if c and c in incoming.column_names]
    if not flags:
        return pa.repeat(pa.scalar(False), incoming.num_rows)
    mask = flags[0] if len(flags) == 1 else pc.or_(*flags)
    return mask.combine_chunks() if isinstance(mask, pa.ChunkedArray) else mask


def data_columns(table: pa.Table) -> list[str]:
    """The record's own fields (not meta, staging or ``_hoodie_is_deleted``): what null-filling payloads merge."""
    return [c for c in table.column_names if not _STAGING.match(c)]


def keep_latest_per_key(incoming: pa.Table, ordering_field: str | None, arrival_column: str,
                        payload_class: str | None = None, is_delete_column: str | None = None) -> pa.Table:
    """One record per key, as the payload's preCombine (see :func:`pyhudi.merge.rules.precombine`)."""
    if incoming.num_rows < 2 or pc.count_distinct(incoming[RECORD_KEY]).as_py() == incoming.num_rows:
        return incoming
    payload = payload_of(payload_class)
    ordering = ordering_field if ordering_field and ordering_field in incoming.column_names else None
    deleted = delete_mask(incoming, is_delete_column) if payload.precombine_fills else None
    return precombine(incoming, payload, RECORD_KEY, ordering, arrival_column, deleted, data_columns(incoming))


def merge_file_group(stored: pa.Table | None, incoming: pa.Table, deletes: pa.Array,
                     payload_class: str = OVERWRITE_WITH_LATEST, ordering_field: str | None = None) -> MergeResult:
    """Combine stored records with an incoming batch that holds at most one record per key."""
    payload = payload_of(payload_class)
    if payload.deletes_all:
        deletes = pa.array([True] * incoming.num_rows, pa.bool_())
    if stored is None or stored.num_rows == 0:
        upserts = incoming.filter(pc.invert(deletes))
        return MergeResult(stored.slice(0, 0) if stored is not None else None, upserts, 0, upserts.num_rows, 0,
                           _array(upserts[RECORD_KEY]))

    incoming_keys = incoming[RECORD_KEY]
    stored_keys = stored[RECORD_KEY]
    at, matched_in_stored = _match(incoming_keys, stored_keys)   # each incoming record's stored row, if any
    matched_in_incoming = pc.is_valid(at)
    if payload.rejects_stored:
        _reject_stored_keys(incoming_keys, pc.and_(matched_in_incoming, pc.invert(deletes)))
    keep_stored = pc.invert(matched_in_stored)
    take_incoming = pc.invert(deletes)
    written = incoming
    has_ordering = bool(ordering_field) and ordering_field in stored.column_names \
        and ordering_field in incoming.column_names
    if payload.fills_nulls:
        # every matched non-delete record becomes the merge of both (a delete always wins: natural order)
        matched_stored = stored.take(pc.fill_null(at, 0))
        merged = combine_with_stored(payload, incoming, matched_stored, data_columns(incoming),
                                     incoming[ordering_field] if has_ordering else None,
                                     matched_stored[ordering_field] if has_ordering else None)
        written = _choose(matched_in_incoming, merged, incoming)
    elif payload.stored_can_win and has_ordering:
        stored_ord = pc.take(stored[ordering_field], at)
        natural = pc.and_(deletes, pc.is_null(incoming[ordering_field]))   # delete operation: no ordering
        old_wins = pc.and_(pc.and_(matched_in_incoming, stored_wins(stored_ord, incoming[ordering_field])),
                           pc.invert(natural))
        old_wins = pc.fill_null(old_wins, False)
        if pc.any(old_wins).as_py():
            keep_stored = pc.or_(keep_stored, pc.is_in(stored_keys, value_set=pc.filter(incoming_keys, old_wins)))
            take_incoming = pc.and_(take_incoming, pc.invert(old_wins))
            deletes = pc.and_(deletes, pc.invert(old_wins))

    kept = stored if pc.all(keep_stored).as_py() is not False else stored.filter(keep_stored)   # no copy if all stay
    written = written.filter(take_incoming)
    num_deletes = _count(pc.and_(deletes, matched_in_incoming))
    num_updates = _count(pc.and_(take_incoming, matched_in_incoming))
    inserted = pc.and_(take_incoming, pc.invert(matched_in_incoming))
    num_inserts = _count(inserted)
    return MergeResult(kept, written, num_updates, num_inserts, num_deletes,
                       _array(pc.filter(incoming_keys, inserted)))


def concat_file_group(stored: pa.Table | None, incoming: pa.Table, deletes: pa.Array,
                      payload_class: str = OVERWRITE_WITH_LATEST) -> MergeResult:
    """Hudi's HoodieConcatHandle (an insert into a small file with hoodie.merge.allow.duplicate.on.inserts): every
    stored record stays and every incoming one is added, a key already stored included."""
    if stored is None or stored.num_rows == 0 or payload_of(payload_class).rejects_stored:
        return merge_file_group(stored, incoming, deletes, payload_class)
    written = incoming.filter(pc.invert(deletes))
    return MergeResult(stored, written, 0, written.num_rows, 0, _array(written[RECORD_KEY]))


def _reject_stored_keys(incoming_keys, duplicate: pa.Array) -> None:
    if pc.any(duplicate).as_py():
        key = pc.filter(incoming_keys, duplicate)[0].as_py()
        raise DuplicateKeyError(f"Duplicate key found for insert statement, key is: {key} (the record is already "
                                "stored: hoodie.sql.insert.mode=strict or hoodie.datasource.insert.dup.policy=fail "
                                "refuse it; drop it from the batch, or use the policy drop, or upsert it)")


def _match(incoming_keys, stored_keys) -> tuple[pa.Array, pa.Array]:
    """(each incoming key's stored row or null, which stored rows an incoming key matches). Only the batch's
    keys are hashed and the file's probed against them: a file holds ~100x more rows than the batch sends it
    (hashing the file's keys, as index_in over them would, was most of a merge)."""
    pos = _array(pc.index_in(stored_keys, value_set=incoming_keys))
    matched_in_stored = pc.is_valid(pos)
    rows = np.flatnonzero(matched_in_stored.to_numpy(zero_copy_only=False))
    at = np.full(len(incoming_keys), -1, dtype=np.int64)
    at[pos.filter(matched_in_stored).to_numpy()[::-1]] = rows[::-1]   # a key stored twice: its first row
    return pa.array(at, mask=at < 0), matched_in_stored


def _array(column) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _choose(mask: pa.Array, when_true: pa.Table, when_false: pa.Table) -> pa.Table:
    columns = [pc.if_else(mask, when_true[name], when_false[name]) for name in when_false.column_names]
    return pa.Table.from_arrays(columns, schema=when_false.schema)


def _count(mask: pa.Array) -> int:
    return int(pc.sum(pc.cast(mask, pa.int64())).as_py() or 0) if len(mask) else 0


def event_time_range(written: pa.Table, field: str | None) -> tuple[int | None, int | None]:
    """(minEventTime, maxEventTime) in epoch millis of the written records, as Hudi's WriteStatus derives them
    from ``hoodie.payload.event.time.field``: a value whose text has 10 digits is epoch seconds, 13 digits epoch
    millis; anything else (and a missing field) is not counted."""
    if not field or field not in written.column_names or written.num_rows == 0:
        return None, None
    column = written[field]
    if not (pa.types.is_integer(column.type) or pa.types.is_string(column.type)):
        return None, None
    text = pc.cast(column, pa.string())
    numeric = pc.fill_null(pc.match_substring_regex(text, r"^-?[0-9]+$"), False)
    length = pc.utf8_length(text)
    seconds = pc.and_(numeric, pc.equal(length, 10))
    millis = pc.and_(numeric, pc.equal(length, 13))
    values = pc.if_else(seconds, pc.multiply(pc.cast(pc.if_else(numeric, text, "0"), pa.int64()), 1000),
                        pc.cast(pc.if_else(numeric, text, "0"), pa.int64()))
    values = pc.filter(values, pc.fill_null(pc.or_(seconds, millis), False))
    if len(values) == 0:
        return None, None
    bounds = pc.min_max(values)
    return bounds["min"].as_py(), bounds["max"].as_py()
