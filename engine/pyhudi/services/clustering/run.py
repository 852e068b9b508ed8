"""Clustering, as Apache Hudi 0.14/0.15 (table version 6) does it: rewrite small file groups into fewer, larger
ones sorted by `hoodie.clustering.plan.strategy.sort.columns`, so that queries filtering on those columns skip
files. It is one replacecommit on the timeline:

* **schedule** (driver, metadata only): the size-based plan (clustering_strategy.py, clustering_plan.py) published as
  `<t>.replacecommit.requested`, an Avro HoodieRequestedReplaceMetadata with operationType CLUSTER.
* **execute**: `<t>.replacecommit.inflight` (empty, as Hudi writes it), then Spark executors read the planned
  slices, sort and write new file groups (clustering_tasks.py, marker first), and the driver completes
  `<t>.replacecommit` with HoodieReplaceCommitMetadata: `partitionToReplaceFileIds` = the planned file groups,
  the write stats of the new files, operationType CLUSTER. Readers switch to the new files when it completes;
  time travel before it still reads the old ones, and the cleaner deletes them later.

Before publishing, the planned slices must still be the latest of their file groups: a write that changed one
meanwhile (an update with `SparkAllowUpdateStrategy`, an insert into a small file, a compaction) would be lost
by the replace. Then the clustering is undone entirely (files and plan) and WriteConflictError says to schedule
again. Any other failure deletes the files its markers name and the inflight file; the requested plan stays and
the next execution runs it again (Hudi rolls back the inflight clustering and re-executes it).

Inline clustering (`hoodie.clustering.inline`): after a commit, schedule when at least
`hoodie.clustering.inline.max.commits` commits completed since the last clustering, then execute;
`hoodie.clustering.schedule.inline` alone only schedules (ClusteringPlanActionExecutor's trigger).
"""

from __future__ import annotations

import contextlib
import time

import pyarrow as pa

from pyhudi import config as C
from pyhudi.spark import progress
from pyhudi.commit.instant_commit import InstantCommit
from pyhudi.commit.metadata import CommitMetadata
from pyhudi.commit.metadata_table import MetadataTableOptions
from pyhudi.commit.run import run_instant
from pyhudi.commit.spark_jobs import collect_or_raise
from pyhudi.errors import ConfigError, TimelineError, WriteConflictError
from pyhudi.file_group.base_file import BloomSettings
from pyhudi.services.compaction.run import latest_schema_json
from pyhudi.services.clustering.plan import (CLUSTER_OPERATION, ClusteringPlan, clustering_action, clustering_instants,
                                             require_plan)
from pyhudi.services.clustering.strategy import ClusteringOptions, check_sort_columns, generate_plan
from pyhudi.services.clustering.tasks import ClusterContext, clustering_stats, records_frame, write_frame
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.timeline import (CLUSTERING, REPLACE_COMMIT, WRITE_ACTIONS, Instant, State, Timeline, create_requested,
                             normalize_instant_argument)

DEFAULT_RECORD_SIZE = 1024   # hoodie.copyonwrite.record.size.estimate


# --- scheduling (driver) --------------------------------------------------------------------------------------
def schedule_plan(table: HudiTable, timeline: Timeline, opts: ClusteringOptions,
                  instant_time: str | None = None) -> str | None:
    """Publish `<t>.replacecommit.requested` with a clustering plan; None when nothing qualifies. The caller holds
    the table-service guard (pyhudi.transaction.service_guard)."""
    if opts.layout != "linear":
        raise ConfigError(f"hoodie.layout.optimize.strategy={opts.layout} is not supported by pyhudi's clustering "
                          "yet; use linear (sort by hoodie.clustering.plan.strategy.sort.columns)")
    if opts.sort_columns:
        from pyhudi.reader.plan import table_schema
        check_sort_columns(opts.sort_column_list, table_schema(table, timeline).names, table.name)
    t = normalize_instant_argument(instant_time) if instant_time else timeline.new_instant_time()
    later = [i for i in timeline.instants if i.time >= t]
    if later:
        raise TimelineError(f"cannot schedule a clustering of table {table.name} at {t}: instant {later[0]} is not "
                            "earlier (leave the instant time out to get a fresh one)")
    plan = generate_plan(table, timeline, opts)
    if plan is None:
        return None
    create_requested(table.storage, t, clustering_action(table.storage), plan.to_bytes(table.storage))
    return t


def commits_since_last_clustering(table: HudiTable, timeline: Timeline) -> int:
    """Completed commits after the latest clustering instant (all of them without one)."""
    last = clustering_instants(table.storage, timeline)
    since = last[-1].time if last else ""
    return sum(1 for i in timeline.completed(WRITE_ACTIONS) if i.time > since)


def pending_clusterings(table: HudiTable, timeline: Timeline) -> list[str]:
    return [i.time for i in clustering_instants(table.storage, timeline) if not i.is_completed]


# --- execution ------------------------------------------------------------------------------------------------
def execute_plan(spark, table: HudiTable, timeline: Timeline, t: str, opts: ClusteringOptions,
                 commit_guard=None) -> dict:
    """Run the pending clustering `t` in Spark executors and commit it; returns the commit metadata.
    `commit_guard()` (e.g. the table lock under OCC) is held while the plan is checked and the commit published."""
    storage = table.storage
    where = f"table {table.name} at {storage.base_uri}"
    instant = next((i for i in timeline.instants if i.time == t and i.action in (REPLACE_COMMIT, CLUSTERING)), None)
    if instant is None or instant.is_completed:
        pending = ", ".join(pending_clusterings(table, timeline)) or "none"
        raise TimelineError(f"clustering {t} of {where} is " + ("already completed" if instant else "not scheduled")
                            + f"; pending clusterings: {pending}")
    plan = require_plan(storage, t, where)
    requested = Instant(t, clustering_action(storage), State.REQUESTED)
    if instant.state == State.INFLIGHT:   # an earlier run died: undo its files, back to requested
        InstantCommit(storage, requested, keep_plan=True).abort()

    stale = _changed_since_plan(table, plan)   # e.g. an update let through, or the planned slice cleaned
    if stale:
        InstantCommit(storage, requested).abort()
        raise _stale_plan_error(t, where, stale)
    ctx, schema_json, sort_columns = _context(table, timeline, t, plan, opts)
    started = time.monotonic()

    def work(commit: InstantCommit) -> CommitMetadata:
        crash_point("clustering.after_inflight")
        records = records_frame(spark, plan, ctx)
        with progress.tracked(spark, f"clustering {table.name}"):
            stats = clustering_stats(collect_or_raise(write_frame(records, plan, ctx, sort_columns)))
        replaced: dict[str, list[str]] = {}
        for partition, file_id in sorted(plan.file_groups):
            replaced.setdefault(partition, []).append(file_id)
        metadata = CommitMetadata(CLUSTER_OPERATION, tuple(stats), {"schema": schema_json}, replaced)
        crash_point("clustering.before_commit")
        return metadata

    def complete(commit: InstantCommit, metadata: CommitMetadata) -> None:
        with (commit_guard() if commit_guard else contextlib.nullcontext()):
            stale = _changed_since_plan(table, plan)
            if stale:
                commit.keep_plan = False   # the plan itself is out of date: undo everything
                raise _stale_plan_error(t, where, stale)
            commit.complete(metadata)

    # an abort returns to the requested plan (or undoes it, on a conflict); nothing once completed
    metadata_options = MetadataTableOptions.of(opts.raw)
    _, metadata = run_instant(lambda: InstantCommit(storage, requested, keep_plan=True,
                                                    metadata_options=metadata_options), work, label="clustering",
                              started=started, complete=complete)
    return metadata.to_json()


def _context(table: HudiTable, timeline: Timeline, t: str, plan: ClusteringPlan,
             opts: ClusteringOptions) -> tuple[ClusterContext, str, list[str]]:
    from pyhudi.reader.plan import table_schema
    from pyhudi.schema import arrow_to_avro, avro_json, with_meta_fields_avro

    schema = table_schema(table, timeline)
    avro = table.latest_avro_schema(timeline)
    if avro is None:
        avro = arrow_to_avro(pa.schema([f for f in schema if not f.name.startswith("_hoodie_")]),
                             table.name)
    schema_json = latest_schema_json(timeline) or avro_json(avro)
    sort_columns = check_sort_columns(plan.sort_columns, schema.names, table.name)
    cfg = C.HoodieConfig(opts.raw, warn_unknown=False)
    view = table.view(timeline=timeline)
    ordering = table.properties.precombine_field or opts.raw.get(C.PRECOMBINE.key) or None
    payload = (table.properties.get(C.COMPACTION_PAYLOAD_CLASS.key) or opts.raw.get(C.PAYLOAD_CLASS.key)
               or C.PAYLOAD_CLASS.default)
    per_file = max(1, opts.target_file_max_bytes // _average_record_size(timeline))
    ctx = ClusterContext(
        storage=table.storage, instant_time=t, schema=schema,
        visible_instants=frozenset(i.time for i in timeline.completed_writes() if i.time < t),
        committed_before=view.timeline_start, ordering_field=ordering, payload_class=payload,
        bloom=BloomSettings(cfg.get(C.BLOOM_FILTER_TYPE), cfg.get(C.BLOOM_NUM_ENTRIES), cfg.get(C.BLOOM_FPP),
                            cfg.get(C.BLOOM_DYNAMIC_MAX_ENTRIES)),
        compression=cfg.get(C.PARQUET_COMPRESSION), avro_schema_json=avro_json(with_meta_fields_avro(avro)),
        records_per_file=per_file, group_partitions=tuple(g.partition_path for g in plan.groups),
        virtual_keys=not table.properties.populate_meta_fields)
    return ctx, schema_json, sort_columns


def _stale_plan_error(t: str, where: str, stale: str) -> WriteConflictError:
    return WriteConflictError(
        f"clustering {t} of {where} was rolled back: file group {stale} changed after the clustering was planned "
        "(a write or compaction committed to it), and replacing it would lose that change. Schedule a new "
        "clustering.")


def _changed_since_plan(table: HudiTable, plan: ClusteringPlan) -> str | None:
    """The first planned file group whose latest slice is no longer the planned one (None: all current)."""
    view = table.view()
    groups = view.file_groups
    for group in plan.groups:
        for s in group.slices:
            current = groups.get((s.partition_path, s.file_id))
            latest = current.latest_slice if current else None
            names = (latest.base_file.name if latest and latest.base_file else None,
                     tuple(sorted(log.name for log in latest.log_files)) if latest else ())
            if latest is None or names != (s.data_file, tuple(sorted(s.delta_files))):
                return f"{s.partition_path}/{s.file_id}" if s.partition_path else s.file_id
    return None


def _average_record_size(timeline: Timeline) -> int:
    """Bytes per record of the latest commits' base files (Hudi's AverageRecordSizeUtils), else 1024."""
    for instant in reversed(timeline.completed_writes()[-20:]):
        stats = [s for s in timeline.read_commit(instant).write_stats if not s.is_log_file]
        total_bytes = sum(s.total_write_bytes or 0 for s in stats)
        total_records = sum(s.num_writes or 0 for s in stats)
        if total_records and total_bytes:
            return max(1, total_bytes // total_records)
    return DEFAULT_RECORD_SIZE
