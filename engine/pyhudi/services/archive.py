"""The archiver: moves old instants out of the active timeline into `.hoodie/archived`, as Hudi 0.14/0.15 does.

When the active timeline holds more than ``hoodie.keep.max.commits`` completed commits, the oldest are archived
until ``hoodie.keep.min.commits`` remain (clean and rollback instants likewise, per action). Never archived: the
first savepoint and anything after it, anything at or after the oldest pending write or compaction, anything at or
after the earliest commit the last clean retained, a replacecommit whose replaced files are not cleaned yet, and
(merge-on-read) the delta commits since the last compaction, which the compaction trigger counts. Every state file
of an archived instant (requested, inflight, completed) goes.

Format (Hudi 0.x, before the LSM timeline): log files ``.hoodie/archived/.commits_.archive.<N>_<writeToken>``
holding AVRO_DATA blocks of HoodieArchivedMetaEntry records (header SCHEMA only), one record per instant file:
commit metadata converted to Avro for commits, the cleaner plan / clean metadata, rollback metadata, compaction
plans. Each archive run writes the next file version (object stores cannot append). Files older than the active
timeline count as committed (Hudi's isBeforeTimelineStarts), so reads and time travel within it are unchanged.
The file format is commit/archived_timeline.py's; this module selects the instants and moves them.

Hudi 1.x tables (timeline layout 2) archive into the LSM timeline history instead (commit/history_archive.py,
timeline/lsm_history.py), and, as Java's archiver, keep every commit that completed after their metadata table's
last compaction.
"""

from __future__ import annotations

from typing import Callable, ContextManager, Mapping

from pyhudi import config as C
from pyhudi.commit.archived_timeline import (ARCHIVED_META_ENTRY_SCHEMA, archive_entry, archived_instants,
                                              read_archived_entries, write_archive_file)
from pyhudi.commit.history_archive import move_to_history
from pyhudi.commit.metadata_table import maintained, metadata_storage
from pyhudi.commit.retention import CleanOptions, earliest_commit_to_retain
from pyhudi.commit.timeline_metadata import last_clean_metadata, read_clean_metadata
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.table.metadata_table import drop_metadata_table
from pyhudi.timeline import (CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, LOG_COMPACTION, METAFOLDER,
                             REPLACE_COMMIT, ROLLBACK, SAVEPOINT, TEMP_FOLDER, WRITE_ACTIONS, Instant, Timeline,
                             instant_time_of_clock, parse_instant_file_name, parse_instant_time)


# --- options ------------------------------------------------------------------------------------------------
def keep_commits(cfg: C.HoodieConfig) -> tuple[int, int]:
    """(hoodie.keep.min.commits, hoodie.keep.max.commits), checked as HoodieWriteConfig does."""
    C.check_archival_options(cfg)
    return cfg.get(C.KEEP_MIN_COMMITS), cfg.get(C.KEEP_MAX_COMMITS)


# --- public API ---------------------------------------------------------------------------------------------
# The transaction layer's table lock (pyhudi.transaction.lock.table_lock), handed down by the client: a service
# sits below the transaction layer and does not import it.
TableLock = Callable[[Storage, Mapping[str, str]], ContextManager]


def archive(spark, path, options: dict | None, lock: TableLock) -> list[str]:
    """Archive what is due now (with hoodie.keep.min.commits / hoodie.keep.max.commits and the cleaner options);
    returns the archived instant times, oldest first."""
    cfg = C.HoodieConfig(options or {})
    C.check_archival_options(cfg)
    table = HudiTable.load(str(path))
    table.check_writable("archive")
    return _archive(table, table.timeline(), cfg, lock)


def archive_after_commit(spark, path, options, lock: TableLock) -> list[str]:
    """The archiver after a successful commit (Hudi's postCommit), run by the client as a hook after the cleaner:
    does nothing unless ``hoodie.archive.automatic`` (default true) and something is due."""
    table = HudiTable.load(str(path))
    cfg = options if isinstance(options, C.HoodieConfig) else C.HoodieConfig(options or {}, warn_unknown=False)
    if not cfg.get(C.ARCHIVE_AUTOMATIC):
        return []
    return _archive(table, table.timeline(), cfg, lock)


# --- selection ----------------------------------------------------------------------------------------------
def instants_to_archive(table: HudiTable, timeline: Timeline, cfg: C.HoodieConfig) -> list[Instant]:
    """HoodieTimelineArchiver.getInstantsToArchive (completed instants; their other state files go too)."""
    low, high = _min_max_to_keep(timeline, cfg)
    out: list[Instant] = []
    for action in (CLEAN, ROLLBACK):
        done = timeline.completed([action])
        if len(done) > high:
            out += done[:len(done) - low]
    commits = timeline.completed_writes()
    if len(commits) > high:
        bound = min(_commit_bounds(table, timeline, cfg), default=None)
        eligible = [i for i in commits if bound is None or i.time < bound]
        out += eligible[:len(commits) - low]
    return sorted(out)


def _min_max_to_keep(timeline: Timeline, cfg: C.HoodieConfig) -> tuple[int, int]:
    """ArchivalUtils.getMinAndMaxInstantsToKeep: never fewer commits than the cleaner retains (+2)."""
    low, high = keep_commits(cfg)
    commits = timeline.completed_writes()
    if not commits:
        return low, high
    retain = earliest_commit_to_retain(timeline, CleanOptions.of(cfg, warn_unknown=False),
                                       now=parse_instant_time(commits[-1].time))
    if retain is not None:
        by_cleaning = sum(1 for i in commits if i.time > retain.time) + 2
        if low < by_cleaning:
            return by_cleaning, by_cleaning + high - low
    return low, high


def _commit_bounds(table: HudiTable, timeline: Timeline, cfg: C.HoodieConfig) -> list[str]:
    """Instant times commits must be strictly older than to be archived."""
    bounds = []
    savepoints = timeline.completed([SAVEPOINT])
    if savepoints:
        bounds.append(savepoints[0].time)
    commits = timeline.completed_writes()
    pending = timeline.pending(WRITE_ACTIONS + (COMPACTION, LOG_COMPACTION))
    if pending:
        before = [i for i in commits if i.time < pending[0].time]
        bounds.append(before[-1].time if before else pending[0].time)
    last_clean = last_clean_metadata(table.storage, timeline)
    if last_clean and last_clean.earliest_commit_to_retain:
        bounds.append(last_clean.earliest_commit_to_retain)
    replace = _oldest_uncleaned_replace(table.storage, timeline)
    if replace:
        bounds.append(replace)
    if maintained(table.properties.values):
        # Java's archiver keeps every commit that completed after the metadata table's last compaction (none
        # without one): the metadata table's reader checks the delta commits since then against them
        compactions = Timeline.load(metadata_storage(table.storage)).completed([COMMIT])
        later = [i.time for i in commits if (i.completion_time or i.time) > compactions[-1].time] \
            if compactions else ["0"]
        if later:
            bounds.append(min(later))
    if table.properties.is_mor and cfg.get(C.COMPACT_TRIGGER) in ("NUM_COMMITS", "NUM_AND_TIME"):
        # CompactionUtils.getOldestInstantToRetainForCompaction: keep the delta commits the trigger counts
        compactions = [i.time for i in commits if i.action in (COMMIT, REPLACE_COMMIT)]
        deltas = [i.time for i in commits if i.action == DELTA_COMMIT
                  and (not compactions or i.time > compactions[-1])]
        if deltas:
            bounds.append(deltas[0])
    return bounds


def _oldest_uncleaned_replace(storage: Storage, timeline: Timeline) -> str | None:
    """The oldest replacecommit whose replaced file groups no completed clean has removed yet: archiving it would
    let readers see the replaced files again (ClusteringUtils.getOldestInstantToRetainForClustering)."""
    cleaned_up_to = ""
    for instant in timeline.completed([CLEAN]):
        if not storage.file_size(timeline.path_of(instant)):
            continue
        meta = read_clean_metadata(storage, instant)
        cleaned_up_to = max(cleaned_up_to, meta.earliest_commit_to_retain or instant.time)
    for instant in timeline.completed([REPLACE_COMMIT]):
        if instant.time >= cleaned_up_to and timeline.read_commit(instant).replaced_file_ids:
            return instant.time
    return None


# --- archiving ----------------------------------------------------------------------------------------------
def _archive(table: HudiTable, timeline: Timeline, cfg: C.HoodieConfig, lock: TableLock) -> list[str]:
    """Archive what is due. Under optimistic concurrency control the archiver holds the table lock while it moves
    instants (Hudi's archiveIfRequired acquires it), so two archivers (a writer's post-commit one and `pyhudi
    services`) never archive the same instants; it checks first without the lock so nothing due costs no lock."""
    if not instants_to_archive(table, timeline, cfg):
        return []
    if cfg.get(C.CONCURRENCY_MODE) != "optimistic_concurrency_control":
        return _move_to_archive(table, timeline, cfg)
    with lock(table.storage, cfg.string_options()):
        return _move_to_archive(table, table.timeline(), cfg)


def _move_to_archive(table: HudiTable, timeline: Timeline, cfg: C.HoodieConfig) -> list[str]:
    selected = instants_to_archive(table, timeline, cfg)
    if not selected:
        return []
    storage = table.storage
    if not maintained(table.properties.values):
        drop_metadata_table(storage)   # Java archives only what its metadata table synced; this one is not kept
    if timeline.layout.version == 2:   # Hudi 1.x: the LSM timeline history (commit/history_archive.py)
        move_to_history(storage, timeline.layout, selected, cfg.get(C.TIMELINE_COMPACTION_BATCH_SIZE),
                        cfg.get(C.PARQUET_COMPRESSION))
    else:
        files = _state_files(storage, selected, timeline.zone)
        records = [archive_entry(storage, instant, transition) for instant, transition in files]
        write_archive_file(storage, records)
        # Pending-state files first, then completed ones oldest first, so no reader sees a hole or a false pending.
        for instant in sorted((i for i, _ in files), key=lambda i: (i.is_completed, i.time)):
            storage.delete_file(f"{METAFOLDER}/{instant.file_name}")
    for instant in selected:
        storage.delete_dir(f"{TEMP_FOLDER}/{instant.time}")
    return sorted({i.time for i in selected})


def _comparable(action: str) -> str:
    return COMMIT if action == COMPACTION else action


def _state_files(storage: Storage, selected: list[Instant], zone: str) -> list[tuple[Instant, str | None]]:
    """Every state file (requested/inflight/completed) of the selected instants, as raw timeline entries, each
    with its state transition time: the file's modification time in the timeline zone, as Hudi 0.14+ archives it
    (stateTransitionTime; an upgrade to version 8 takes it as the completion time)."""
    wanted = {(i.time, _comparable(i.action)) for i in selected}
    out = []
    for info in storage.list_files(METAFOLDER):
        instant = parse_instant_file_name(info.base_name)
        if instant is not None and (instant.time, _comparable(instant.action)) in wanted:
            if instant.action == COMPACTION and instant.is_completed:
                instant = Instant(instant.time, COMMIT)
            out.append((instant, None if info.mtime_ns is None else instant_time_of_clock(info.mtime_ns, zone)))
    return sorted(out, key=lambda entry: entry[0])


__all__ = ["archive", "archive_after_commit", "archived_instants", "read_archived_entries", "instants_to_archive",
           "ARCHIVED_META_ENTRY_SCHEMA"]
