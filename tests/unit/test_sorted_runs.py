"""sorted_runs.run_bounds: the runs of equal values that the writers, the index and clustering split by."""

from __future__ import annotations

import pyarrow as pa

from pyhudi.sorted_runs import run_bounds


def _runs(*columns):
    starts, ends = run_bounds(*columns)
    return list(zip(starts.tolist(), ends.tolist()))


def test_runs_of_one_and_of_two_columns():
    assert _runs(pa.array([], pa.int32())) == []
    assert _runs(pa.array([7])) == [(0, 1)]
    assert _runs(pa.array([1, 1, 2, 5, 5, 5])) == [(0, 2), (2, 3), (3, 6)]
    parts = pa.chunked_array([["a", "a"], ["a", "b", "b"]])
    routes = pa.array(["", "f1", "f1", "", ""])
    assert _runs(parts, routes) == [(0, 1), (1, 3), (3, 5)]


def test_a_null_starts_a_run_of_its_own():
    assert _runs(pa.array(["a", None, None, "b"])) == [(0, 1), (1, 2), (2, 3), (3, 4)]
