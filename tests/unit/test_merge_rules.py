"""pyhudi.merge's vectorized preCombine and stored merge against a per-record fold of Hudi's payload semantics
(random batches)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from pyhudi.merge import (DEFAULT_PAYLOAD, OVERWRITE_NON_DEFAULTS, OVERWRITE_WITH_LATEST, PARTIAL_UPDATE,
                          keep_latest_per_key, merge_file_group)

KEY, ARRIVAL = "_hoodie_record_key", "_pyhudi_arrival"
STORED = pa.schema([(KEY, pa.string()), ("ts", pa.int64()), ("a", pa.int64()), ("b", pa.string())])


def _pre(payload, old, new):
    if payload == PARTIAL_UPDATE:
        if new["_hoodie_is_deleted"] or old["_hoodie_is_deleted"]:
            return new
        first, second = (old, new) if old["ts"] > new["ts"] else (new, old)
        return {**first, **{f: first[f] if first[f] is not None else second[f] for f in ("a", "b")}}
    return old if old["ts"] > new["ts"] else new


def _batch(rng, n):
    return [{KEY: f"k{rng.randrange(5)}", "ts": rng.randrange(4), "a": rng.choice([None, 1, 2]),
             "b": rng.choice([None, "x", "y"]), "_hoodie_is_deleted": rng.random() < 0.15, ARRIVAL: i}
            for i in range(n)]


@pytest.mark.parametrize("payload", [OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD, OVERWRITE_NON_DEFAULTS, PARTIAL_UPDATE])
@pytest.mark.parametrize("seed", range(30))
def test_precombine_matches_pairwise_fold(payload, seed):
    rng = random.Random(seed)
    records = _batch(rng, rng.randrange(1, 25))
    expected = {}
    for r in records:
        expected[r[KEY]] = _pre(payload, expected[r[KEY]], r) if r[KEY] in expected else r
    got = keep_latest_per_key(pa.Table.from_pylist(records), "ts", ARRIVAL, payload).to_pylist()
    strip = lambda r: {k: v for k, v in r.items() if k != ARRIVAL}   # noqa: E731 - the merged row's arrival is moot
    assert sorted(map(strip, got), key=repr) == sorted(map(strip, expected.values()), key=repr)


@pytest.mark.parametrize("seed", range(30))
def test_partial_update_merge_with_stored(seed):
    rng = random.Random(seed)
    stored = [{KEY: f"k{i}", "ts": rng.randrange(4), "a": rng.choice([None, 7]), "b": rng.choice([None, "s"])}
              for i in range(4)]
    incoming = [{KEY: f"k{i}", "ts": rng.randrange(4), "a": rng.choice([None, 1]), "b": rng.choice([None, "i"])}
                for i in rng.sample(range(6), 3)]
    result = merge_file_group(pa.Table.from_pylist(stored, STORED), pa.Table.from_pylist(incoming, STORED),
                              pa.array([False] * len(incoming)), PARTIAL_UPDATE, "ts")
    by_key = {r[KEY]: r for r in stored}
    for r in incoming:
        old = by_key.get(r[KEY])
        if old is None:
            by_key[r[KEY]] = r
        else:
            first, second = (old, r) if old["ts"] > r["ts"] else (r, old)
            by_key[r[KEY]] = {**first, **{f: first[f] if first[f] is not None else second[f] for f in ("a", "b")}}
    got = result.kept.to_pylist() + result.written.to_pylist()
    assert sorted(got, key=repr) == sorted(by_key.values(), key=repr)


@pytest.mark.parametrize("payload", [OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD])
@pytest.mark.parametrize("seed", range(20))
def test_merge_with_stored_matches_a_per_key_fold(payload, seed):
    """Stored and incoming keys matched either way round (the batch's keys are hashed, the file's probed), over
    several chunks, with deletes and stored records that win by ordering value; inserts, updates and deletes
    counted as Hudi's merge handle counts them."""
    rng = random.Random(seed)
    n_stored = rng.randrange(0, 40)
    stored = [{KEY: f"k{i}", "ts": rng.randrange(4), "a": i, "b": "s"} for i in rng.sample(range(60), n_stored)]
    incoming = [{KEY: f"k{i}", "ts": rng.randrange(4), "a": 100 + i, "b": "i"} for i in rng.sample(range(60), 12)]
    deletes = [rng.random() < 0.2 for _ in incoming]
    cut = rng.randrange(0, len(stored) + 1)
    stored_table = pa.Table.from_batches([pa.RecordBatch.from_pylist(part, STORED)
                                          for part in (stored[:cut], stored[cut:]) if part], STORED)
    result = merge_file_group(stored_table, pa.Table.from_pylist(incoming, STORED), pa.array(deletes), payload, "ts")
    by_key = {r[KEY]: r for r in stored}
    updates = inserts = removed = 0
    for r, deleted in zip(incoming, deletes):
        old = by_key.get(r[KEY])
        if old is not None and payload == DEFAULT_PAYLOAD and old["ts"] > r["ts"]:
            continue                       # the stored record wins: kept as it is
        if deleted:
            removed += old is not None
            by_key.pop(r[KEY], None)
        else:
            updates += old is not None
            inserts += old is None
            by_key[r[KEY]] = r
    got = result.kept.to_pylist() + result.written.to_pylist()
    assert sorted(got, key=repr) == sorted(by_key.values(), key=repr)
    assert (result.num_updates, result.num_inserts, result.num_deletes) == (updates, inserts, removed)
