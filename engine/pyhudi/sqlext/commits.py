"""The Hudi commits one `pyhudi.sql` call made, for callers that report them (the dbt adapter's run results,
the `pyhudi sql` shell's summary line). Kept per thread: dbt runs models on several threads at once."""

from __future__ import annotations

import contextlib
import threading

from pyhudi.timeline import WriteStat

_state = threading.local()


@contextlib.contextmanager
def collecting():
    """Collect the commits of one `pyhudi.sql` call; a nested call adds to the outer call's list."""
    outer = getattr(_state, "current", None)
    if outer is not None:
        yield outer
        return
    current: list = []
    _state.current = current
    try:
        yield current
    finally:
        _state.current = None
        _state.last = current


def record(result) -> None:
    """A completed write (pyhudi.client.write.WriteResult) of the running `pyhudi.sql` call."""
    current = getattr(_state, "current", None)
    if current is not None and result is not None:
        current.append(result)


def last_commits() -> list:
    """The commits of this thread's last finished `pyhudi.sql` call (empty when it wrote nothing)."""
    return list(getattr(_state, "last", None) or [])


def summary(results: list) -> dict:
    """Counters over commits: what a run reports as rows affected (Hudi's write stats, summed)."""
    stats = [WriteStat.from_json(s) for r in results for s in getattr(r, "write_stats", [])]
    inserted = sum(s.num_inserts or 0 for s in stats)
    updated = sum(s.num_update_writes or 0 for s in stats)
    deleted = sum(s.num_deletes or 0 for s in stats)
    return {
        "hudi_instants": [str(r) for r in results],
        "hudi_operations": [getattr(r, "operation", "") for r in results],
        "rows_inserted": inserted, "rows_updated": updated, "rows_deleted": deleted,
        "rows_affected": inserted + updated + deleted,
        "files_written": len({(s.partition_path, s.path) for s in stats}),
        "bytes_written": sum(s.total_write_bytes or 0 for s in stats),
    }


def describe(results: list) -> str:
    """One line per call, e.g. `upsert 20261123184501234: 12 inserted, 3 updated, 1 deleted, 4 files`."""
    if not results:
        return ""
    s = summary(results)
    ops = ", ".join(f"{op} {instant}" for op, instant in zip(s["hudi_operations"], s["hudi_instants"]))
    return (f"{ops}: {s['rows_inserted']} inserted, {s['rows_updated']} updated, {s['rows_deleted']} deleted, "
            f"{s['files_written']} file(s), {s['bytes_written']} bytes")
