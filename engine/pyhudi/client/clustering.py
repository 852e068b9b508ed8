"""Clustering as the client runs it: the transaction layer's table-service guard (the lock under OCC, a
failed-write rollback that leaves live writes alone) around scheduling, the lock again around the commit under
OCC, and the post-commit hook for inline clustering. `pyhudi.cluster`, `CALL run_clustering` and the hooks call
these; the action itself is pyhudi.services.clustering.run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, ContextManager

import warnings

from pyhudi import config as C
from pyhudi.errors import ConfigError, TimelineError
from pyhudi.index import is_simple_bucket_table
from pyhudi.services.clustering import run as action
from pyhudi.services.clustering.strategy import ClusteringOptions
from pyhudi.transaction.lock import table_lock
from pyhudi.table import HudiTable
from pyhudi.timeline import normalize_instant_argument
from pyhudi.transaction.failed_writes import CONCURRENCY_KEY, OCC
from pyhudi.transaction.service_guard import table_service_guard

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

OPERATIONS = {"schedule": "schedule", "execute": "execute", "run": "execute",
              "scheduleandexecute": "scheduleAndExecute"}


def _commit_guard(table: HudiTable, raw: dict) -> Callable[[], ContextManager] | None:
    if str(raw.get(CONCURRENCY_KEY, "")).strip().lower() != OCC:
        return None
    return lambda: table_lock(table.storage, raw)


def _refuse_bucket_index(table: HudiTable, options: dict | None) -> None:
    """As Hudi ("Clustering is not supported for simple bucket index"): a simple BUCKET table's file groups are its
    buckets, found by hashing the key; clustering would regroup them under other file ids and every later write
    would refuse the table."""
    if is_simple_bucket_table(table, options):
        raise ConfigError(f"Clustering is not supported for simple bucket index: table {table.name} uses "
                          f"{C.INDEX_TYPE.key}=BUCKET ({C.BUCKET_ENGINE.key}=SIMPLE), whose file groups are its "
                          "buckets; nothing was planned or written. Size its files with "
                          f"{C.BUCKET_NUM_BUCKETS.key} when creating the table instead")


def schedule_clustering(spark: SparkSession, path: str, options: dict | None = None, instant_time: str | None = None) -> str | None:
    """Plan a clustering of the table at `path`; returns its instant time, or None when no file slice qualifies."""
    table = HudiTable.load(str(path))
    table.check_writable("cluster")
    _refuse_bucket_index(table, options)
    opts = ClusteringOptions.of(options)
    with table_service_guard(table, options):
        return action.schedule_plan(table, table.timeline(), opts, instant_time)


def cluster(spark: SparkSession, path: str, op: str = "scheduleAndExecute", instant_time: str | list | None = None,
            options: dict | None = None) -> list[str]:
    """Hudi's `run_clustering` operations; returns the clustering instants acted on.

    * ``schedule``: plan a clustering.
    * ``execute``: run pending clusterings, oldest first (only `instant_time`, one or a list, when given).
    * ``scheduleAndExecute`` (default): plan one and run it; when nothing could be planned, run the pending ones.
    """
    operation = OPERATIONS.get(str(op or "scheduleAndExecute").strip().lower())
    if operation is None:
        raise ConfigError(f"clustering op {op!r} is not one of schedule, execute, scheduleAndExecute")
    table = HudiTable.load(str(path))
    table.check_writable("cluster")
    raw = C.normalize_options(options or {})
    _refuse_bucket_index(table, raw)
    opts = ClusteringOptions.of(raw)
    pending = action.pending_clusterings(table, table.timeline())
    if instant_time:
        if operation == "schedule":
            raise ConfigError("specific instants only can be used in 'execute' op or not specific op")
        wanted = [normalize_instant_argument(t) for t in
                  (instant_time if isinstance(instant_time, (list, tuple)) else str(instant_time).split(","))
                  if str(t).strip()]
        missing = [t for t in wanted if t not in pending]
        if missing:
            raise TimelineError(f"clustering instant {missing[0]} is not pending in {table.storage.base_uri}; "
                                f"pending clusterings: {', '.join(pending) or 'none'}")
        targets, operation = wanted, "execute"
    else:
        targets = pending
    if operation in ("schedule", "scheduleAndExecute"):
        with table_service_guard(table, raw):
            scheduled = action.schedule_plan(table, table.timeline(), opts, None)
        if scheduled:
            targets = [scheduled]
        elif operation == "schedule":
            targets = []
    if operation in ("execute", "scheduleAndExecute"):
        for target in targets:
            action.execute_plan(spark, table, table.timeline(), target, opts, _commit_guard(table, raw))
    return targets


def run_inline_clustering_if_due(spark: SparkSession, path: str, options: dict) -> str | None:
    """After a commit: with ``hoodie.clustering.inline=true``, schedule a clustering when at least
    ``hoodie.clustering.inline.max.commits`` commits completed since the last one, and run it;
    ``hoodie.clustering.schedule.inline=true`` alone only schedules. Returns the instant, else None. A write
    pending on the timeline (another writer) skips the scheduling with a warning."""
    raw = C.normalize_options(options or {})
    opts = ClusteringOptions.of(raw)
    if not (opts.inline or opts.schedule_inline):
        return None
    table = HudiTable.load(str(path))
    if is_simple_bucket_table(table, raw):
        warnings.warn(f"inline clustering of {table.name} skipped: clustering is not supported for simple bucket "
                      "index (its file groups are its buckets)", stacklevel=2)
        return None
    if action.commits_since_last_clustering(table, table.timeline()) < opts.inline_max_commits:
        return None
    try:
        with table_service_guard(table, raw):
            scheduled = action.schedule_plan(table, table.timeline(), opts, None)
    except TimelineError as exc:
        warnings.warn(f"inline clustering of {table.name} skipped: {exc}", stacklevel=2)
        return None
    if scheduled is not None and opts.inline:
        action.execute_plan(spark, table, table.timeline(), scheduled, opts, _commit_guard(table, raw))
    return scheduled
