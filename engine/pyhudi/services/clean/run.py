"""The cleaner: deletes file slices no query within the retention can read, as Hudi 0.14/0.15 does.

The policies and the choice of slices are the planner's (services/clean/plan.py). Here: scheduling a plan and
executing it, on the one commit protocol (commit/service_commit.py). On the timeline a clean is ``<t>.clean.requested`` (HoodieCleanerPlan), ``<t>.clean.inflight`` (the
same plan) and ``<t>.clean`` (HoodieCleanMetadata), Avro data files. A clean left requested/inflight is executed by
the next one. A plan is followed only inside the table: its paths are checked before anything changes, only the
data files it names are deleted, and a dropped partition's folder goes only once empty (a nested partition below
it, from a value containing '/', keeps its files).
"""

from __future__ import annotations

import posixpath
import time
from typing import Iterable, Mapping

from pyhudi import config as C
from pyhudi.spark import progress
from pyhudi.timeline.avro_record import (ACTION_INSTANT, CLEAN_METADATA_SCHEMA,  # noqa: F401 - re-exported
                                          CLEANER_PLAN_SCHEMA)
from pyhudi.timeline.clean_metadata import CleanMetadata
from pyhudi.timeline.clean_plan import CleanerPlan
from pyhudi.commit.metadata_table import MetadataTableOptions
from pyhudi.commit.service_commit import ServiceInstantCommit
from pyhudi.commit.timeline_metadata import clean_metadata
from pyhudi.services.clean import background as async_clean
from pyhudi.services.clean.trigger import CLEAN_TRIGGER_KEYS, needs_cleaning
from pyhudi.cdc.logging import parse_cdc_log_name
from pyhudi.errors import CorruptFileError, TimelineError
from pyhudi.file_group.naming import PARTITION_METAFILE, parse_base_file_name, parse_log_file_name, partition_of
from pyhudi.services.clean.plan import (KEEP_LATEST_BY_HOURS, KEEP_LATEST_COMMITS,  # noqa: F401 - re-exported
                                           KEEP_LATEST_FILE_VERSIONS, SAVEPOINTED_TIMESTAMPS, CleanOptions,
                                           earliest_commit_to_retain, last_clean_metadata, partition_file,
                                           plan_clean, read_clean_metadata, read_cleaner_plan)
from pyhudi.storage import Storage
from pyhudi.spark.jvm import default_parallelism, is_connect
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.timeline import instant_file, CLEAN, METAFOLDER, Instant, State, Timeline

DRIVER_DELETE_LIMIT = 256     # more files than this are deleted by a Spark job


# --- public API ---------------------------------------------------------------------------------------------
def clean(spark, path, options: dict | None = None, respect_trigger: bool = False) -> CleanMetadata | None:
    """Run Hudi's cleaner on the table at `path` now: finish any pending clean, then plan and run a new one.

    An explicit clean plans whatever is due (as an explicit compaction schedule ignores the inline trigger);
    `respect_trigger=True` (the `pyhudi services` loop) plans only when hoodie.clean.max.commits commits
    completed since the last clean, as Hudi's HoodieCleaner.

    Returns the HoodieCleanMetadata of the last clean run, or None when there was nothing to clean.
    """
    options = dict(options or {})
    opts = CleanOptions.of({k: v for k, v in options.items() if k not in CLEAN_TRIGGER_KEYS})
    table = HudiTable.load(str(path))
    table.check_writable("clean")
    async_clean.join(table.storage.base_uri)     # one clean at a time: a background one finishes first
    return _clean(spark, table, table.timeline(), opts, options if respect_trigger else None,
                  MetadataTableOptions.of(options))


def clean_after_commit(spark, path, options: Mapping | C.HoodieConfig | None) -> CleanMetadata | None:
    """The cleaner after a successful commit (Hudi's postCommit, ``hoodie.clean.automatic``, default true): does
    nothing unless some file is due. The client runs it as a post-commit hook, before the archiver."""
    opts = CleanOptions.of(C.config_of(options))
    if not opts.automatic:
        return None
    table = HudiTable.load(str(path))
    return _clean(spark, table, table.timeline(), opts, options or {}, MetadataTableOptions.of(options))


def start_async_clean(spark, path, options: Mapping | C.HoodieConfig | None) -> bool:
    """hoodie.clean.async: start the automatic clean in the background (the writer calls this before it writes and
    joins it after its commit with join_async_clean). False when automatic cleaning is off."""
    if not CleanOptions.of(C.config_of(options)).automatic:
        return False
    async_clean.start(Storage(str(path)).base_uri, lambda: clean_after_commit(spark, path, options))
    return True


def join_async_clean(path) -> CleanMetadata | None:
    """Wait for the table's background clean; returns its metadata or raises its error."""
    return async_clean.join(Storage(str(path)).base_uri)


# --- the clean ----------------------------------------------------------------------------------------------
def _clean(spark, table: HudiTable, timeline: Timeline, opts: CleanOptions, trigger: Mapping | C.HoodieConfig | None,
           metadata_options: MetadataTableOptions) -> CleanMetadata | None:
    """Finish pending cleans, then schedule and run one; with `trigger` (options) only when the trigger is due."""
    result = None
    for pending in timeline.pending([CLEAN]):      # Hudi re-executes plans of interrupted cleans first
        result = _execute(spark, table, pending, metadata_options)
        timeline = table.timeline()
    if trigger is not None and not needs_cleaning(timeline, trigger):   # hoodie.clean.trigger.strategy/max.commits
        return result
    t = _schedule(table, timeline, opts)
    if t is not None:
        result = _execute(spark, table, Instant(t, CLEAN, State.REQUESTED), metadata_options)
    return result


def _schedule(table: HudiTable, timeline: Timeline, opts: CleanOptions) -> str | None:
    """Write `<t>.clean.requested` when some file is due; returns t (None: nothing to clean, nothing written)."""
    plan = plan_clean(table, timeline, opts)
    if plan is None:
        return None
    t = timeline.new_instant_time()
    ServiceInstantCommit.begin_plan(table.storage, t, CLEAN, CLEANER_PLAN_SCHEMA, plan.to_avro())
    return t


# --- execution ----------------------------------------------------------------------------------------------
def _execute(spark, table: HudiTable, instant: Instant,
             metadata_options: MetadataTableOptions | None = None) -> CleanMetadata:
    """CleanActionExecutor: requested -> inflight (same plan), delete the files, then `<t>.clean`."""
    storage = table.storage
    started = time.monotonic()
    t = instant.time
    commit = ServiceInstantCommit.resume(storage, instant, metadata_options)
    source = instant_file(storage, commit.requested)
    plan_bytes = storage.read_bytes(source)
    plan = CleanerPlan.from_bytes(plan_bytes, f"{storage.base_uri}/{source}")
    per_partition = _planned_files(storage, plan, source)      # checked before anything changes
    emptied = [storage.inside(p, source, allow_base=True) for p in plan.partitions_to_delete or []]
    commit.start_with(plan_bytes)                               # Hudi's clean inflight holds the same plan
    crash_point("clean.after_inflight")
    paths = [partition_file(p, name) for p, names in per_partition.items() for name in names]
    with progress.tracked(spark, f"clean {table.name}"):
        failed = set(_delete_files(spark, storage, paths))
    deleted_partitions = {p for p in emptied if p and _delete_partition_if_empty(storage, p)}
    timeline = table.timeline()
    last_commit = [i.time for i in timeline.completed_writes() if i.time < t]
    metadata = clean_metadata(t, plan, per_partition, failed, deleted_partitions, last_commit[-1] if last_commit else "",
                              int((time.monotonic() - started) * 1000))
    crash_point("clean.before_complete")
    try:
        commit.complete_with(CLEAN_METADATA_SCHEMA, metadata.to_avro())
    except TimelineError:
        # Two writers' post-commit cleans re-executed the same pending plan (idempotent deletes) and the other
        # completed it first: the clean is done, which is all this writer needed.
        if not storage.exists(instant_file(storage, commit.requested.with_state(State.COMPLETED))):
            raise
    progress.log_commit("clean", storage.base_uri, t, started,
                        extra=f"{metadata.total_files_deleted} files deleted, {len(failed)} failed")
    return metadata


def _planned_files(storage: Storage, plan: CleanerPlan, source: str) -> dict[str, list[str]]:
    """partition -> names of the data files the plan deletes; every path checked to be a data file inside the
    table (CorruptFileError naming the plan otherwise)."""
    per_partition: dict[str, list[str]] = {}
    entries = [(p, f.file_path) for p, files in (plan.file_paths or {}).items() for f in files if f.file_path]
    if not entries:                                  # version-1 plans: file names per partition
        entries = [(p, partition_file(p, posixpath.basename(n)))
                   for p, names in (plan.files or {}).items() for n in names]
    for partition, path in entries:
        partition = storage.inside(partition, source, allow_base=True) if partition else ""
        relative = storage.inside(path, source)
        name = posixpath.basename(relative)
        if partition_of(relative) != partition or relative.startswith(METAFOLDER + "/") or \
                not (parse_base_file_name(name) or parse_log_file_name(name) or parse_cdc_log_name(name)):
            raise CorruptFileError(f"{source} names the path {path!r} in partition {partition!r}, which is not a "
                                   "data file of that partition; the clean plan is corrupt: remove it")
        per_partition.setdefault(partition, []).append(name)
    return per_partition


def _delete_partition_if_empty(storage: Storage, partition: str) -> bool:
    """Delete a cleaned-out partition: its metadata file only once no data file is left in its folder, then the
    folder only if empty. A nested partition (a value containing '/') below it keeps its files and folder."""
    if any(parse_base_file_name(i.base_name) or parse_log_file_name(i.base_name) or parse_cdc_log_name(i.base_name)
           for i in storage.list_files(partition)):
        return False
    storage.delete_file(f"{partition}/{PARTITION_METAFILE}")
    storage.delete_empty_dirs(partition)
    return True


def _delete_files(spark, storage: Storage, paths: list[str]) -> list[str]:
    """Delete data files; returns those that could not be deleted. Many files: one Spark job, not a driver loop."""
    if len(paths) > DRIVER_DELETE_LIMIT and spark is not None and not is_connect(spark):   # Connect: no RDDs
        slices = max(1, min(len(paths) // DRIVER_DELETE_LIMIT, default_parallelism(spark) * 4))
        return spark.sparkContext.parallelize(paths, slices).mapPartitions(
            lambda part: _delete_partition(storage, part)).collect()
    return list(_delete_partition(storage, paths))


def _delete_partition(storage: Storage, paths) -> Iterable[str]:
    for relative in paths:
        try:
            storage.fs.delete_file(storage.full(relative))
        except FileNotFoundError:
            continue      # deleted by an earlier, interrupted run of the same plan
        except OSError:
            yield relative


__all__ = ["clean", "clean_after_commit", "start_async_clean", "join_async_clean", "plan_clean", "earliest_commit_to_retain",
           "read_clean_metadata", "read_cleaner_plan", "last_clean_metadata", "CleanOptions",
           "CLEANER_PLAN_SCHEMA", "CLEAN_METADATA_SCHEMA", "ACTION_INSTANT"]
