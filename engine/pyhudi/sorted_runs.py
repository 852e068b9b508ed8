"""Runs of equal values in sorted Arrow columns: where each group of a table sorted by its group columns begins and
ends (the writers, the index and clustering split their sorted input this way)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def run_bounds(*columns) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the runs of rows whose values equal the row before's in every one of `columns` (arrays or
    chunked arrays of one length, sorted so equal values are adjacent); a null starts a run of its own."""
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    changed = None
    for column in columns:
        values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        step = pc.not_equal(values.slice(1), values.slice(0, n - 1))
        changed = step if changed is None else pc.or_(changed, step)
    cuts = np.flatnonzero(changed.fill_null(True).to_numpy(zero_copy_only=False)) + 1
    return np.r_[0, cuts], np.r_[cuts, n]
