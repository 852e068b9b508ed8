"""Failure messages of the conformance harness: what differs, in rows."""

from __future__ import annotations


def diff_message(expected: list, actual: list, limit: int = 8) -> str:
    """Rows (support.rows) the reference has and the table lacks, and the other way round."""
    missing = [r for r in expected if r not in actual]
    extra = [r for r in actual if r not in expected]
    return (f"expected {len(expected)} rows, got {len(actual)}\n  missing (in reference, not in table): "
            f"{missing[:limit]}\n  extra (in table, not in reference): {extra[:limit]}")
