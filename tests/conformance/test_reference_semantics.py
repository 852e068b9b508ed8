"""The harness's reference on hand-computed examples: if cf_reference is wrong, every conformance verdict is."""

from __future__ import annotations

import pytest

import cf_reference as R
from cf_shapes import Column, Shape
from support import rows

pytestmark = pytest.mark.spark

SHAPE = Shape([Column("v", "string", "data"), Column("k", "int", "key"), Column("p", "string", "partition"),
               Column("ts", "int", "ordering")], ["k"], ["p"], "ts", "cow")
SCHEMA = "v string, k int, p string, ts int"
STORED = [("a", 1, "x", 1), ("b", 2, "x", 1), ("c", 3, "y", 1)]


def _df(spark, data):
    return spark.createDataFrame(data, SCHEMA)


def _rows(df):
    return rows(df, ["k", "p", "v", "ts"])


def test_upsert_replaces_by_key_and_partition_and_precombines_the_batch(spark):
    batch = [("a2", 1, "x", 5), ("a3", 1, "x", 4), ("n", 1, "y", 2)]     # k=1 twice in x: ts 5 wins
    got = R.upsert(SHAPE, _df(spark, STORED), _df(spark, batch))
    assert _rows(got) == sorted([(1, "x", "a2", 5), (2, "x", "b", 1), (3, "y", "c", 1), (1, "y", "n", 2)], key=repr)


@pytest.mark.parametrize("mode,spec,expected_keys", [
    ("static", None, {(9, "x")}),                       # no PARTITION clause, static: the whole table
    ("dynamic", None, {(9, "x"), (3, "y")}),            # dynamic: only partition x is replaced
    ("static", {"p": "'x'"}, {(9, "x"), (3, "y")}),      # static PARTITION (p = 'x'): that partition
    ("static", {"p": None}, {(9, "x")}),                # dynamic clause under static mode: every partition
])
def test_overwrite_modes(spark, mode, spec, expected_keys):
    got = R.overwrite(SHAPE, _df(spark, STORED), _df(spark, [("z", 9, "x", 3)]), mode=mode, spec=spec)
    assert {(k, p) for k, p, _, _ in _rows(got)} == expected_keys


def test_merge_first_matching_clause(spark):
    source = spark.createDataFrame([("u", 1, "x", 7, "U"), ("d", 2, "x", 7, "D"), ("i", 4, "y", 7, "D")],
                                   SCHEMA + ", _op string")
    got = R.merge(SHAPE, _df(spark, STORED), source, delete_clause=True, update_clause=True,
                  update_columns=["ts"])
    # k=1 updated (ts only), k=2 deleted, k=4 inserted although its _op is D (DELETE is WHEN MATCHED only)
    assert _rows(got) == sorted([(1, "x", "a", 7), (3, "y", "c", 1), (4, "y", "i", 7)], key=repr)
