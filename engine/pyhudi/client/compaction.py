"""Compaction as the client runs it: the transaction layer's table-service guard (the lock under OCC, a failed-write
rollback that leaves live writes alone) around the compaction action's scheduling, then its execution
(pyhudi.services.compaction.run). `pyhudi.compact`, the SQL procedures and the post-commit hook call these."""

from __future__ import annotations

from typing import TYPE_CHECKING

import warnings

from pyhudi import config as C
from pyhudi.errors import ConfigError, TimelineError
from pyhudi.services.compaction import run as action
from pyhudi.services.compaction.plan import CompactionOptions
from pyhudi.table import HudiTable
from pyhudi.timeline import COMPACTION, normalize_instant_argument
from pyhudi.transaction.service_guard import table_service_guard

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def schedule_compaction(spark: SparkSession, path: str, options: dict | None = None, instant_time: str | None = None) -> str | None:
    """Plan a compaction of the table at `path`; returns its instant time, or None when no file slice has log
    files outside pending compactions (nothing is written then).

    An explicit schedule does not consult the inline trigger (pyhudi.services.compaction.run.should_compact). Raises
    TimelineError when a write is pending before the compaction instant, or `instant_time` is not later than the
    timeline.
    """
    table = action.load_mor(path)
    opts = CompactionOptions.of(table, options)
    with table_service_guard(table, options):
        return action.schedule_plan(table, table.timeline(), opts, instant_time)


def compact(spark: SparkSession, path: str, op: str = "scheduleAndExecute", instant_time: str | None = None,
            options: dict | None = None) -> list[str]:
    """Hudi's `run_compaction` operations; returns the compaction instants acted on.

    * ``schedule``: plan a compaction (at `instant_time` when given).
    * ``execute``: run pending compactions, oldest first (only `instant_time` when given).
    * ``scheduleAndExecute`` (also ``run``, as Hudi maps it): plan one and run it; when nothing could be
      planned, run the pending ones. With `instant_time`, runs that pending compaction.
    """
    operation = str(op or "scheduleAndExecute").strip().lower()
    if operation == "run":
        operation = "scheduleandexecute"
    if operation not in ("schedule", "execute", "scheduleandexecute"):
        raise ConfigError(f"compaction op {op!r} is not one of schedule, execute, run, scheduleAndExecute")
    table = action.load_mor(path)
    opts = CompactionOptions.of(table, options)
    if operation == "schedule":
        with table_service_guard(table, options):
            scheduled = action.schedule_plan(table, table.timeline(), opts, instant_time)
        return [scheduled] if scheduled else []
    timeline = table.timeline()

    pending = [i.time for i in timeline.pending([COMPACTION])]
    if instant_time is not None:
        wanted = normalize_instant_argument(instant_time)
        if wanted not in pending:
            raise TimelineError(f"compaction instant {wanted} is not pending in {table.storage.base_uri}; pending "
                                f"compactions: {', '.join(pending) or 'none'}")
        targets = [wanted]
    else:
        targets = pending
        if operation == "scheduleandexecute":
            with table_service_guard(table, options):
                scheduled = action.schedule_plan(table, table.timeline(), opts, None)
            if scheduled:
                targets = [scheduled]
    for target in targets:
        action.execute_plan(spark, table, table.timeline(), target, opts)
    return targets


def run_inline_compaction_if_due(spark: SparkSession, path: str, options: dict) -> str | None:
    """After a delta commit: with ``hoodie.compact.inline=true``, run pending compactions, then schedule and run
    a new one if the trigger is due (``hoodie.compact.schedule.inline=true`` alone only schedules). Returns the
    instant compacted (or scheduled), else None. A write pending on the timeline (another writer) skips the
    scheduling with a warning: the delta commit that called this is already committed."""
    raw = C.normalize_options(options or {})
    cfg = C.HoodieConfig(raw, warn_unknown=False)
    compaction = C.CompactionConfig.from_options(cfg)
    inline = compaction.inline
    schedule_only = compaction.schedule_inline
    if not (inline or schedule_only):
        return None
    table = HudiTable.load(str(path))
    if not table.properties.is_mor:
        return None
    opts = CompactionOptions.of(table, options, warn_unknown=False)   # the write that called us checked its options
    acted = None
    if inline:   # Hudi's runAnyPendingCompactions: finish plans left by earlier (failed) runs first
        for instant in table.timeline().pending([COMPACTION]):
            action.execute_plan(spark, table, table.timeline(), instant.time, opts)
            acted = instant.time
    timeline = table.timeline()
    if not action.should_compact(table, timeline, cfg):
        return acted
    try:
        with table_service_guard(table, raw):   # under the lock with OCC; a live writer's pending write is left alone
            scheduled = action.schedule_plan(table, table.timeline(), opts, None)
    except TimelineError as exc:
        warnings.warn(f"inline compaction of {table.name} skipped: {exc}", stacklevel=2)
        return acted
    if scheduled is None:
        return acted
    if inline:
        action.execute_plan(spark, table, table.timeline(), scheduled, opts)
    return scheduled
