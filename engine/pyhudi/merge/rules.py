"""The merge rules of every payload, vectorized in pyarrow (they run unchanged in Spark executors).

- :func:`latest_per_key` / :func:`precombine`: one record per key out of several incoming ones (Hudi's
  ``preCombine``): the greatest ordering value wins (nulls lowest), then the later arrival; payloads that fill
  nulls field-wise (PartialUpdateAvroPayload) fold the records in arrival order, field by field (_fill_fold).
- :func:`stored_wins`: whether a stored record beats an incoming one by ordering value.
- :func:`combine_with_stored`: the record an incoming and a stored record of one key become when the payload
  fills null fields (OverwriteNonDefaults / PartialUpdate).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.merge.payloads import Payload


def first_of_runs(keys: pa.Array) -> pa.Array:
    """True where a sorted key array starts a new key."""
    if len(keys) == 0:
        return pa.array([], pa.bool_())
    if len(keys) == 1:
        return pa.array([True])
    change = pc.fill_null(pc.not_equal(keys.slice(1), keys.slice(0, len(keys) - 1)), True)
    return pa.concat_arrays([pa.array([True]), change])


def _precombine_order(table: pa.Table, key: str, ordering: str | None, seq: str) -> pa.Array:
    sort_keys = [(key, "ascending")]
    if ordering:
        sort_keys.append((ordering, "descending"))
    sort_keys.append((seq, "descending"))
    columns = [name for name, _ in sort_keys]
    return pc.sort_indices(table.select(columns), sort_keys=sort_keys)   # nulls last: below every value


def latest_per_key(table: pa.Table, key: str, ordering: str | None, seq: str) -> pa.Array:
    """Row indices of each key's preCombine winner: greatest ordering value (nulls lowest), then latest ``seq``."""
    if table.num_rows == 0:
        return pa.array([], pa.uint64())
    order = _precombine_order(table, key, ordering, seq)
    return pc.filter(order, first_of_runs(pc.take(table[key], order).combine_chunks()))


def precombine(table: pa.Table, payload: Payload, key: str, ordering: str | None, seq: str,
               deleted: pa.Array | None = None, fill_columns: list[str] | None = None) -> pa.Table:
    """One record per key of ``table`` as the payload's preCombine leaves it (rows come back sorted by key).

    ``deleted`` flags records that delete their key (``_hoodie_is_deleted``); under a field-filling payload a
    delete wins over the records that arrived before it (natural order), and the records after it start afresh.
    ``fill_columns``: the data columns a field-filling payload merges (default: all but key/ordering/seq).
    """
    if table.num_rows == 0:
        return table
    if not payload.precombine_fills:
        return table.take(latest_per_key(table, key, ordering, seq))
    if deleted is not None and pc.any(deleted).as_py():
        table = table.filter(_after_last_delete(table, key, seq, deleted))
    return _fill_fold(table, key, ordering, seq,
                      fill_columns if fill_columns is not None else
                      [c for c in table.column_names if c not in (key, ordering, seq)])


def _fill_fold(table: pa.Table, key: str, ordering: str | None, seq: str, names: list[str]) -> pa.Table:
    """PartialUpdateAvroPayload.preCombine folded over each key's records in arrival order, vectorized.

    The fold keeps a merged record; a new record with an ordering value >= the merged one's (a "leader") comes
    first (its non-null fields win), an older one only fills the merged record's nulls. So a field ends as the
    last leader's non-null value, else the first non-null value that arrived; the other columns (key,
    ordering, meta) are the last leader's.
    """
    ranked = table.take(pc.sort_indices(table.select([key, seq]), sort_keys=[(key, "ascending"),
                                                                               (seq, "ascending")]))
    n = ranked.num_rows
    keys = ranked[key].combine_chunks()
    group = np.cumsum(np.asarray(first_of_runs(keys), dtype=np.int64)) - 1
    if ordering:   # dense ranks, nulls lowest, made increasing across keys so one running maximum serves all
        rank = np.asarray(pc.rank(ranked[ordering], sort_keys="ascending", tiebreaker="dense"), dtype=np.int64)
        rank[~np.asarray(pc.is_valid(ranked[ordering]), dtype=bool)] = 0
    else:
        rank = np.zeros(n, dtype=np.int64)
    value = rank + group * (n + 1)
    running = np.maximum.accumulate(value)
    leader = value >= np.concatenate([[-1], running[:-1]])
    positions = np.arange(n, dtype=np.int64)
    columns = {key: keys, "w": pa.array(positions, mask=~leader)}
    aggregations = [("w", "max")]
    for i, name in enumerate(names):
        valid = np.asarray(pc.is_valid(ranked[name]), dtype=bool)
        columns[f"a{i}"] = pa.array(positions, mask=~(valid & leader))
        columns[f"b{i}"] = pa.array(positions, mask=~valid)
        aggregations += [(f"a{i}", "max"), (f"b{i}", "min")]
    grouped = pa.table(columns).group_by(key, use_threads=False).aggregate(aggregations)
    winners = ranked.take(grouped["w_max"])
    for i, name in enumerate(names):
        column = pc.take(ranked[name], pc.coalesce(grouped[f"a{i}_max"], grouped[f"b{i}_min"]))
        winners = winners.set_column(winners.schema.get_field_index(name), winners.schema.field(name), column)
    return winners


def _after_last_delete(table: pa.Table, key: str, seq: str, deleted: pa.Array) -> pa.Array:
    """Rows that arrived after the last delete of their key, or that delete itself when nothing came after."""
    deletes = pa.table({key: table[key], seq: table[seq]}).filter(deleted)
    last = deletes.group_by(key, use_threads=False).aggregate([(seq, "max")])
    at = pc.index_in(table[key], value_set=last[key])
    last_seq = pc.take(last[f"{seq}_max"], at)
    keep = pc.or_(pc.is_null(last_seq), pc.fill_null(pc.greater(table[seq], last_seq), False))
    survivors = pc.unique(pc.filter(table[key], keep))
    alone = pc.and_(pc.fill_null(pc.equal(table[seq], last_seq), False),
                    pc.invert(pc.is_in(table[key], value_set=survivors)))
    return pc.or_(keep, alone)


def stored_wins(stored_ord, incoming_ord) -> pa.Array:
    """True where the stored ordering value is greater than the incoming one (nulls below every value)."""
    wins = pc.and_(pc.is_valid(stored_ord), pc.or_(pc.is_null(incoming_ord),
                                                   pc.fill_null(pc.greater(stored_ord, incoming_ord), False)))
    return pc.fill_null(wins, False)


def combine_with_stored(payload: Payload, incoming: pa.Table, stored: pa.Table, columns: list[str],
                        incoming_ord=None, stored_ord=None) -> pa.Table:
    """``incoming`` (row-aligned with ``stored``: same keys) with its null ``columns`` filled from the stored
    record; under PartialUpdateAvroPayload a stored record with a greater ordering value comes first instead
    (its non-null fields win). Other columns (meta fields) stay the incoming record's."""
    stored_first = None
    if payload.stored_can_win and incoming_ord is not None and stored_ord is not None:
        stored_first = stored_wins(stored_ord, incoming_ord)
    out = incoming
    for name in columns:
        if name not in incoming.column_names or name not in stored.column_names:
            continue
        new, old = incoming[name], stored[name]
        if not old.type.equals(new.type):
            old = old.cast(new.type)
        if stored_first is not None:
            new, old = pc.if_else(stored_first, old, new), pc.if_else(stored_first, new, old)
        index = out.schema.get_field_index(name)
        out = out.set_column(index, out.schema.field(index), pc.coalesce(new, old))
    return out
