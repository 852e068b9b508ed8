"""How an incoming batch combines with the records already stored in a file group.

Hudi's payloads decide which version of a record survives:
- OverwriteWithLatestAvroPayload (default): the incoming record replaces the stored one.
- DefaultHoodieRecordPayload: the stored record is kept when its ordering (precombine) value is greater.
Deletes are incoming records flagged by the delete operation or by `_hoodie_is_deleted = true`.
Everything here is vectorized pyarrow so it runs unchanged in executors.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

OVERWRITE_WITH_LATEST = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
SUPPORTED_PAYLOADS = (OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD)
IS_DELETED_FIELD = "_hoodie_is_deleted"
RECORD_KEY = "_hoodie_record_key"


@dataclass
class MergeResult:
    kept: pa.Table        # stored records carried over unchanged (meta columns preserved)
    written: pa.Table     # incoming records that become new versions (meta columns to be stamped)
    num_updates: int
    num_inserts: int
    num_deletes: int


def delete_mask(incoming: pa.Table, is_delete_column: str | None) -> pa.Array:
    """True for incoming rows that delete their key."""
    mask = pa.array([False] * incoming.num_rows, pa.bool_())
    if is_delete_column and is_delete_column in incoming.column_names:
        mask = pc.or_(mask, pc.fill_null(incoming[is_delete_column], False))
    if IS_DELETED_FIELD in incoming.column_names:
        mask = pc.or_(mask, pc.fill_null(incoming[IS_DELETED_FIELD], False))
    return mask


def keep_latest_per_key(incoming: pa.Table, ordering_field: str | None, arrival_column: str) -> pa.Table:
    """One record per key, as Hudi's precombine: the greatest ordering value wins (nulls lose), then the
    record that arrived last."""
    if incoming.num_rows < 2 or pc.count_distinct(incoming[RECORD_KEY]).as_py() == incoming.num_rows:
        return incoming
    order = [(RECORD_KEY, "ascending")]
    if ordering_field and ordering_field in incoming.column_names:
        order.append((ordering_field, "descending"))
    order.append((arrival_column, "descending"))
    ranked = incoming.take(pc.sort_indices(incoming, sort_keys=order, null_placement="at_end"))
    keys = ranked[RECORD_KEY].combine_chunks()
    first = pc.not_equal(keys.slice(1), keys.slice(0, len(keys) - 1))
    return ranked.filter(pa.concat_arrays([pa.array([True]), first.fill_null(True)]))


def merge_file_group(stored: pa.Table | None, incoming: pa.Table, deletes: pa.Array,
                     payload_class: str = OVERWRITE_WITH_LATEST, ordering_field: str | None = None) -> MergeResult:
    """Combine stored records with an incoming batch that holds at most one record per key."""
    if stored is None or stored.num_rows == 0:
        upserts = incoming.filter(pc.invert(deletes))
        return MergeResult(stored.slice(0, 0) if stored is not None else None, upserts, 0, upserts.num_rows, 0)

    incoming_keys = incoming[RECORD_KEY]
    stored_keys = stored[RECORD_KEY]
    matched_in_stored = pc.is_in(stored_keys, value_set=incoming_keys)
    matched_in_incoming = pc.is_in(incoming_keys, value_set=stored_keys)

    keep_stored = pc.invert(matched_in_stored)
    take_incoming = pc.invert(deletes)
    if payload_class == DEFAULT_PAYLOAD and ordering_field and ordering_field in stored.column_names:
        # Stored record wins when its ordering value is strictly greater than the incoming one.
        matched_stored = stored.filter(matched_in_stored)
        stored_order = dict(zip(matched_stored[RECORD_KEY].to_pylist(), matched_stored[ordering_field].to_pylist()))
        keep_old = set()
        for key, value in zip(incoming_keys.to_pylist(), incoming[ordering_field].to_pylist()):
            old = stored_order.get(key)
            if old is not None and value is not None and old > value:
                keep_old.add(key)
        if keep_old:
            old_wins = pa.array(list(keep_old), pa.string())
            keep_stored = pc.or_(keep_stored, pc.is_in(stored_keys, value_set=old_wins))
            take_incoming = pc.and_(take_incoming, pc.invert(pc.is_in(incoming_keys, value_set=old_wins)))

    kept = stored.filter(keep_stored)
    written = incoming.filter(take_incoming)
    num_deletes = pc.sum(pc.and_(deletes, matched_in_incoming)).as_py() or 0
    num_updates = pc.sum(pc.and_(take_incoming, matched_in_incoming)).as_py() or 0
    num_inserts = pc.sum(pc.and_(take_incoming, pc.invert(matched_in_incoming))).as_py() or 0
    return MergeResult(kept, written, num_updates, num_inserts, num_deletes)
