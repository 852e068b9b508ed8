"""The one skeleton every data-writing instant runs in (a write, a compaction, a clustering):

    begin -> start (inflight) -> work (Spark jobs write files under markers) -> complete | abort -> end
          -> finish (markers dropped) -> the commit's summary logged

Written once so that the guarantees hold alike for every action: any failure before the completed instant exists
(an exception, a KeyboardInterrupt) aborts the instant and re-raises; once it exists nothing undoes it. What
differs between actions comes in as functions: how the instant begins (a write's transaction creates it, a table
service's requested plan already exists), how it completes (the transaction's conflict check, a clustering's
plan check under the lock) and what ends it either way (the transaction's heartbeat).
"""

from __future__ import annotations

from typing import Callable

from pyhudi.commit.instant_commit import InstantCommit
from pyhudi.commit.metadata import CommitMetadata
from pyhudi.spark import progress


def run_instant(begin: Callable[[], InstantCommit], work: Callable[[InstantCommit], CommitMetadata], *,
                label: str, started: float, inflight: CommitMetadata | None = None,
                complete: Callable[[InstantCommit, CommitMetadata], object] | None = None,
                end: Callable[[InstantCommit | None], None] | None = None,
                after_complete: Callable[[], None] | None = None) -> tuple[InstantCommit, CommitMetadata]:
    """Run one instant: `begin()` returns its commit (requested), which starts inflight with `inflight`;
    `work(commit)` writes the files and returns the commit metadata; `complete(commit, metadata)` publishes it
    (default: commit.complete). Any failure until then aborts the commit (when one began) and re-raises; `end`
    runs after either outcome, `after_complete` only after a completed one, before the markers are dropped.
    The summary line is logged as `label` (spark/progress.py); `started` is a time.monotonic() reading."""
    commit = None
    try:
        commit = begin()
        commit.start(inflight)
        metadata = work(commit)
        if complete is None:
            commit.complete(metadata)   # files of failed or speculative attempts are reconciled away first
        else:
            complete(commit, metadata)
    except BaseException:
        if commit is not None:
            commit.abort()   # does nothing once the completed instant exists
        raise
    finally:
        if end is not None:
            end(commit)
    if after_complete is not None:
        after_complete()
    commit.finish()
    progress.log_commit(label, commit.storage.base_uri, commit.instant_time, started, metadata.write_stats)
    return commit, metadata
