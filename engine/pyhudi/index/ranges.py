"""Key-range pruning for the bloom index: which files' [min_key, max_key] contain a record key.

A centered interval tree (as Hudi's KeyRangeLookupTree) queried for a whole batch of keys at once with numpy,
so a lookup costs O(log files + matches) per key instead of a scan over every file. Pure Python + numpy: it is
built on the driver and shipped to executors inside the bloom lookup plan.
"""

from __future__ import annotations

import numpy as np


class _Node:
    __slots__ = ("center", "mins", "by_min", "maxs", "by_max", "left", "right")

    def __init__(self, center, mins, by_min, maxs, by_max, left, right):
        self.center = center
        self.mins, self.by_min = mins, by_min    # node intervals sorted by min key (ascending)
        self.maxs, self.by_max = maxs, by_max    # node intervals sorted by max key (ascending)
        self.left, self.right = left, right


def _build(items: list[tuple[str, str, int]]) -> _Node | None:
    if not items:
        return None
    ends = sorted([lo for lo, _, _ in items] + [hi for _, hi, _ in items])
    center = ends[len(ends) // 2]
    here = [it for it in items if it[0] <= center <= it[1]]
    by_min = sorted(here, key=lambda it: it[0])
    by_max = sorted(here, key=lambda it: it[1])
    return _Node(center,
                 np.array([it[0] for it in by_min], dtype=object), np.array([it[2] for it in by_min], np.int64),
                 np.array([it[1] for it in by_max], dtype=object), np.array([it[2] for it in by_max], np.int64),
                 _build([it for it in items if it[1] < center]), _build([it for it in items if it[0] > center]))


def _expand(key_pos: np.ndarray, starts: np.ndarray, counts: np.ndarray, order: np.ndarray):
    """Pairs (key_pos[i], order[starts[i] + j]) for j < counts[i], vectorized."""
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    keys = np.repeat(key_pos, counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    offsets = np.arange(total) - first + np.repeat(starts, counts)
    return keys, order[offsets]


class KeyRangeIndex:
    """Files (by position) with their key ranges; `query(keys)` -> (key positions, file positions) that may match.

    Ranges are compared as Python strings (code-point order), the order pyhudi writes min/max keys in; files
    without a range (old writers) match every key."""

    def __init__(self, ranges: list[tuple[str | None, str | None]], prune: bool = True):
        self.size = len(ranges)
        ranged = [(lo, hi, i) for i, (lo, hi) in enumerate(ranges) if prune and lo is not None and hi is not None]
        self.unranged = np.array([i for i, (lo, hi) in enumerate(ranges)
                                  if not (prune and lo is not None and hi is not None)], np.int64)
        self.root = _build(ranged)

    def query(self, keys) -> tuple[np.ndarray, np.ndarray]:
        keys = np.asarray(keys, dtype=object)
        out_k, out_f = [], []
        if len(self.unranged) and len(keys):
            n = len(keys)
            out_k.append(np.repeat(np.arange(n), len(self.unranged)))
            out_f.append(np.tile(self.unranged, n))
        stack = [(self.root, np.arange(len(keys)))]
        while stack:
            node, pos = stack.pop()
            if node is None or len(pos) == 0:
                continue
            values = keys[pos]
            below = values < node.center
            above = values > node.center
            equal = ~(below | above)
            if below.any():   # node intervals contain center > key: they match when min <= key
                counts = np.searchsorted(node.mins, values[below], side="right")
                k, f = _expand(pos[below], np.zeros(len(counts), np.int64), counts, node.by_min)
                out_k.append(k)
                out_f.append(f)
                stack.append((node.left, pos[below]))
            if above.any():   # they match when max >= key: a suffix of the max-sorted list
                starts = np.searchsorted(node.maxs, values[above], side="left")
                k, f = _expand(pos[above], starts, len(node.maxs) - starts, node.by_max)
                out_k.append(k)
                out_f.append(f)
                stack.append((node.right, pos[above]))
            if equal.any():
                n_here = len(node.by_min)
                k, f = _expand(pos[equal], np.zeros(int(equal.sum()), np.int64),
                               np.full(int(equal.sum()), n_here, np.int64), node.by_min)
                out_k.append(k)
                out_f.append(f)
        if not out_k:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return np.concatenate(out_k), np.concatenate(out_f)
