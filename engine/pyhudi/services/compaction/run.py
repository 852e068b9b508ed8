"""Compaction of merge-on-read tables, as Apache Hudi 0.14/0.15 (table version 6) does it.

A merge-on-read write appends log files to a file slice; compaction folds a slice's base file and log files into
a new base file, so readers stop merging. It is two instants on the timeline:

* **schedule** (driver, metadata only): pick the latest file slices that have log files (not already in a pending
  compaction), order and bound them with the compaction strategy (``hoodie.compaction.strategy``, default
  ``LogFileSizeBasedCompactionStrategy``: largest total log size first, up to ``hoodie.compaction.target.io`` MB),
  and publish the plan as ``<t>.compaction.requested``: an Avro data file holding one ``HoodieCompactionPlan``
  record (plan version 2: file names, not paths). ``t`` is later than every instant on the timeline, and no write
  may be pending before it (Hudi refuses to schedule over an unfinished write, whose log files would be missed).
* **execute**: ``<t>.compaction.inflight`` (empty), then one Spark task per operation merges the slice (base +
  logs, only blocks of writes completed before ``t``) and writes ``<fileId>_<token>_<t>.parquet`` (marker first).
  Records keep their ``_hoodie_commit_time``/``_hoodie_commit_seqno``; ``_hoodie_file_name`` names the new file
  (Hudi's merge handle with preserved metadata). The driver publishes ``<t>.commit`` with the commit metadata
  (``compacted: true``, ``operationType: COMPACT``). A failure deletes the files the markers name and the inflight
  file: the requested plan stays, and the next run executes it again.

While a compaction is pending, writers open a new file slice whose base instant is ``t`` (log files only until the
compaction commits); readers merge the previous slice with those logs (`FileSystemView.merged_latest_slices`).

Inline compaction (``hoodie.compact.inline=true``) runs after a delta commit when the trigger strategy says so
(:func:`should_compact`): ``NUM_COMMITS`` (``hoodie.compact.inline.max.delta.commits`` delta commits since the last
compaction), ``TIME_ELAPSED`` (``hoodie.compact.inline.max.delta.seconds`` since it), ``NUM_AND_TIME``,
``NUM_OR_TIME``. Without a completed compaction, the count starts at the first delta commit.

The plan model and generator live in compaction_plan.py, the Spark tasks in compaction_tasks.py; execution
follows the commit protocol (pyhudi.commit.instant_commit) with `keep_plan`: an abort returns to the requested plan.
"""

from __future__ import annotations


import time

import pyarrow as pa

from pyhudi import config as C
from pyhudi.spark import progress
from pyhudi.commit.instant_commit import InstantCommit
from pyhudi.commit.metadata import CommitMetadata
from pyhudi.commit.metadata_table import MetadataTableOptions
from pyhudi.commit.run import run_instant
from pyhudi.commit.spark_jobs import collect_or_raise
from pyhudi.errors import ConfigError, TimelineError
from pyhudi.timeline.compaction_plan import CompactionOperation, CompactionPlan, read_compaction_plan
from pyhudi.services.compaction.plan import (COMPACTION_PLAN_SCHEMA, CompactionOptions, generate_plan,
                                             order_and_filter)
from pyhudi.services.compaction.tasks import CompactContext, compaction_stat, operations_frame
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.timeline import (COMMIT, COMPACTION, DELTA_COMMIT, REPLACE_COMMIT, WRITE_ACTIONS, Instant, State,
                             Timeline, create_requested, format_instant_time,
                             normalize_instant_argument, parse_instant_time)

COMPACT_OPERATION_TYPE = "COMPACT"

# --- public API -----------------------------------------------------------------------------------------------
# Scheduling with the table-service guard (lock, failed-write rollback) and `compact` live in pyhudi.client.compaction.
def execute_compaction(spark, path, instant_time: str, options: dict | None = None) -> dict:
    """Run the pending compaction `instant_time` in Spark executors and commit it; returns the commit metadata."""
    table = load_mor(path)
    return execute_plan(spark, table, table.timeline(), normalize_instant_argument(instant_time),
                        CompactionOptions.of(table, options))


def should_compact(table, timeline: Timeline, config, *, instant_time: str | None = None) -> bool:
    """Hudi's compaction trigger (ScheduleCompactionActionExecutor.needCompact) for a compaction at
    `instant_time` (default: now).

    Delta commits are counted after the latest completed commit or replacecommit (compactions complete as
    commits); without one, all delta commits count and the time runs from the first of them.
    """
    cfg = C.CompactionConfig.from_options(C.config_of(config))
    strategy, max_commits, max_seconds = cfg.trigger, cfg.max_delta_commits, cfg.max_delta_seconds
    deltas = [i for i in timeline.instants if i.action == DELTA_COMMIT]
    last = timeline.completed([COMMIT, REPLACE_COMMIT])
    if last:
        since = last[-1].time
        count = sum(1 for i in deltas if i.time > since)
    elif deltas:
        since = deltas[0].time
        count = len(deltas)
    else:
        return False
    now = instant_time or format_instant_time(timeline.now())          # both read in the table's timeline zone
    elapsed = int(parse_instant_time(now, timeline.zone).timestamp()) - \
        int(parse_instant_time(since, timeline.zone).timestamp())
    by_count = count >= max_commits
    by_time = elapsed >= max_seconds
    if strategy == "NUM_COMMITS":
        return by_count
    if strategy == "TIME_ELAPSED":
        return by_time
    if strategy == "NUM_OR_TIME":
        return by_count or by_time
    if strategy == "NUM_AND_TIME":
        return by_count and by_time
    raise ConfigError(f"{C.COMPACT_TRIGGER.key}={strategy} is not supported; use NUM_COMMITS, TIME_ELAPSED, "
                      "NUM_AND_TIME or NUM_OR_TIME")


def load_mor(path) -> HudiTable:
    table = HudiTable.load(str(path)) if not isinstance(path, HudiTable) else path
    table.check_writable("compact")
    if not table.properties.is_mor:
        raise ConfigError(f"table {table.name} at {table.storage.base_uri} is {table.properties.table_type}; only "
                          "MERGE_ON_READ tables have log files to compact")
    return table


# --- scheduling (driver) --------------------------------------------------------------------------------------
def schedule_plan(table: HudiTable, timeline: Timeline, opts: CompactionOptions, instant_time: str | None) -> str | None:
    """Publish `<t>.compaction.requested` with the plan of the due file slices; None when nothing is due. The
    caller holds the table-service guard (pyhudi.transaction.service_guard)."""
    t = normalize_instant_argument(instant_time) if instant_time else timeline.new_instant_time()
    _check_can_schedule(table, timeline, t)
    plan = generate_plan(table, timeline, opts)
    if not plan.operations:
        return None
    create_requested(table.storage, t, COMPACTION, plan.to_bytes())
    return t


def _check_can_schedule(table: HudiTable, timeline: Timeline, t: str) -> None:
    """Hudi's rules: no write pending before the compaction instant (its log files would be left out), and every
    completed write and pending compaction strictly before it."""
    where = f"table {table.name} at {table.storage.base_uri}"
    blocking = [i for i in timeline.pending(WRITE_ACTIONS) if i.time < t]
    if blocking:
        raise TimelineError(f"cannot schedule a compaction of {where} at {t}: write {blocking[0]} is still "
                            "pending. Let it finish, or roll it back, then schedule again.")
    later = [i for i in timeline.instants
             if i.time >= t and (i.is_completed and i.action in WRITE_ACTIONS + (COMPACTION,)
                                 or i.action == COMPACTION)]
    if later:
        raise TimelineError(f"cannot schedule a compaction of {where} at {t}: instant {later[0]} is not earlier; "
                            "a compaction instant must be later than every completed write and pending compaction "
                            "(leave the instant time out to get a fresh one)")


def execute_plan(spark, table: HudiTable, timeline: Timeline, t: str, opts: CompactionOptions) -> dict:
    storage = table.storage
    where = f"table {table.name} at {storage.base_uri}"
    state = {i.state for i in timeline.instants if i.time == t and i.action == COMPACTION}
    if not state:
        done = any(i.time == t and i.action == COMMIT and i.is_completed for i in timeline.instants)
        pending = ", ".join(i.time for i in timeline.pending([COMPACTION])) or "none"
        raise TimelineError(f"compaction {t} of {where} is " + ("already completed" if done else "not scheduled")
                            + f"; pending compactions: {pending}")
    plan = read_compaction_plan(storage, t)
    requested = Instant(t, COMPACTION, State.REQUESTED)
    if State.INFLIGHT in state:   # an earlier run died: undo its files, back to requested (Hudi rolls it back)
        InstantCommit(storage, requested, keep_plan=True).abort()

    from pyhudi.reader.plan import table_schema
    from pyhudi.schema import arrow_to_avro, avro_json, with_meta_fields_avro

    schema_json = latest_schema_json(timeline)
    avro = table.latest_avro_schema(timeline)
    schema = table_schema(table, timeline)
    if avro is None:
        avro = arrow_to_avro(pa.schema([f for f in schema if not f.name.startswith("_hoodie_")]), table.name)
    ctx = CompactContext(
        storage=storage, instant_time=t, schema=schema,
        visible_instants=frozenset(i.time for i in timeline.completed_writes() if i.time < t),
        committed_before=timeline.instants[0].time if timeline.instants else None,
        ordering_field=opts.ordering_field, payload_class=opts.payload_class, bloom=opts.bloom,
        compression=opts.config.get(C.PARQUET_COMPRESSION),
        avro_schema_json=avro_json(with_meta_fields_avro(avro)))

    started = time.monotonic()

    def work(commit: InstantCommit) -> CommitMetadata:
        crash_point("compaction.after_inflight")
        frame = operations_frame(spark, plan, ctx)
        with progress.tracked(spark, f"compaction {table.name}"):
            stats = [compaction_stat(row) for row in collect_or_raise(frame)] if frame is not None else []
        extra = {"schema": schema_json or avro_json(avro)}
        extra.update(plan.extra_metadata or {})
        metadata = CommitMetadata(COMPACT_OPERATION_TYPE, tuple(stats), extra, compacted=True)
        crash_point("compaction.before_commit")
        return metadata

    # an abort returns to the requested plan; nothing once the commit exists
    metadata_options = MetadataTableOptions.of(opts.config)
    _, metadata = run_instant(lambda: InstantCommit(storage, requested, keep_plan=True,
                                                    metadata_options=metadata_options), work, label="compaction",
                              started=started)
    return metadata.to_json()


def latest_schema_json(timeline: Timeline) -> str | None:
    """The writer schema string of the latest completed write, verbatim."""
    for instant in reversed(timeline.completed_writes()):
        schema = timeline.read_commit(instant).schema
        if schema:
            return schema
    return None


__all__ = ["execute_compaction", "schedule_plan", "execute_plan", "load_mor", "should_compact",
           "read_compaction_plan", "generate_plan", "order_and_filter", "CompactionPlan", "CompactionOperation", "COMPACTION_PLAN_SCHEMA"]
