"""Rollback and restore: undo a write, as Hudi 0.14/0.15 (table version 6) records it on the timeline.

A rollback of instant X is its own instant R, later than everything on the timeline:

1. `R.rollback.requested` — a HoodieRollbackPlan (Avro): per file group, the files X created (found by X's
   markers in `.hoodie/.temp/X/`, X's commit metadata with its cdcStats, and base files named `*_X.parquet` and
   -cdc logs `.<fileId>_X.log.*-cdc`, which only X writes) and the log files that
   also hold other instants' blocks (those get a ROLLBACK command block instead of being deleted);
2. `R.rollback.inflight`, then: X's completed file goes first (readers stop seeing X at once), then X's data
   files, X's pending instant files and markers;
3. `R.rollback` — a HoodieRollbackMetadata (Avro) listing what was deleted.

A crash anywhere leaves a pending rollback that the next writer finishes from its plan (all steps are idempotent).
A restore rolls back every write after a savepoint, newest first, under one `restore` instant
(`.restore.requested` = HoodieRestorePlan, `.restore` = HoodieRestoreMetadata with each rollback's metadata).

Which pending writes are failed writes to roll back is the transaction layer's policy
(pyhudi/transaction/failed_writes.py). The instants go through the one commit protocol (commit/service_commit.py).
"""

from __future__ import annotations

import time

from pyhudi.commit.markers import create_marker, delete_markers, marked_files
from pyhudi.commit.metadata_table import MetadataTableOptions
from pyhudi.commit.service_commit import ServiceInstantCommit
from pyhudi.commit.timeline_metadata import savepoint_times
from pyhudi.cdc.logging import parse_cdc_log_name
from pyhudi.errors import CorruptFileError, TimelineError
from pyhudi.file_group.naming import parse_base_file_name, parse_log_file_name, partition_of
from pyhudi.file_group.log_writer import supports_append
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.timeline.avro_record import RESTORE_METADATA, RESTORE_PLAN, ROLLBACK_METADATA, ROLLBACK_PLAN
from pyhudi.timeline.restore import RestoreMetadata, RestorePlan
from pyhudi.timeline.rollback import (InstantInfo, RollbackMetadata, RollbackPartitionMetadata, RollbackPlan,
                                      RollbackRequest)
from pyhudi.timeline import (parse_commit, instant_file, COMMIT, COMPACTION, DELTA_COMMIT, LOG_COMPACTION, METAFOLDER, REPLACE_COMMIT,
                             RESTORE, ROLLBACK, SAVEPOINT, Instant, State, Timeline,
                             normalize_instant_argument)

# Actions a restore rolls back (Hudi's write timeline).
RESTORABLE_ACTIONS = (COMMIT, DELTA_COMMIT, REPLACE_COMMIT, COMPACTION, LOG_COMPACTION)


class RollbackError(TimelineError):
    """A rollback or restore was asked for an instant it cannot undo."""


# --- public API ---------------------------------------------------------------------------------------------
def rollback_to_instant(spark, path, instant_time: str) -> RollbackMetadata:
    """Roll back the latest completed commit `instant_time` (Hudi's `rollback_to_instant` procedure); returns its
    HoodieRollbackMetadata."""
    table = HudiTable.load(str(path))
    table.check_writable("roll back")
    instant_time = normalize_instant_argument(instant_time)
    finish_pending_rollbacks(table)
    timeline = table.timeline()
    base = table.storage.base_uri
    writes = timeline.completed_writes()
    target = next((i for i in writes if i.time == instant_time), None)
    latest = writes[-1].time if writes else None
    if target is None:
        found = timeline.find(instant_time)
        state = f"is a {found.action} in state {found.state.name}" if found else "does not exist"
        raise RollbackError(f"cannot roll back {instant_time} of table {base}: the instant {state}; only the latest "
                            f"completed commit can be rolled back (latest: {latest or 'none'})")
    if instant_time != latest:
        raise RollbackError(f"cannot roll back {instant_time} of table {base}: found commits after it, the latest "
                            f"completed commit is {latest}; roll back the later commits first (newest first)")
    if instant_time in {i.time for i in timeline.completed([SAVEPOINT])}:
        raise RollbackError(f"could not roll back the savepointed commit {instant_time} of table {base}; delete "
                            "the savepoint first (delete_savepoint)")
    later = [i for i in timeline.pending(RESTORABLE_ACTIONS) if i.time > instant_time]
    if later:
        raise RollbackError(f"cannot roll back {instant_time} of table {base}: instants after it are pending "
                            f"({', '.join(str(i) for i in later)}); finish or roll them back first")
    _refuse_if_cleaned(table, timeline, target)
    _refuse_if_last_active_write(table, timeline, target)
    return rollback(table, _resolve_action(table.storage, target), timeline)


def _refuse_if_cleaned(table: HudiTable, timeline: Timeline, target: Instant) -> None:
    """Rolling back `target` makes the table fall back to the file slices before it. When the cleaner already
    deleted those (e.g. KEEP_LATEST_FILE_VERSIONS with 1 version), the rollback would lose the rows: refuse, as Hudi
    refuses to savepoint or restore beyond the cleaner's window. The slices before it may belong to archived
    commits: the view just before the target counts them (they are older than the active timeline's start)."""
    meta = timeline.read_commit(target)
    needed = {(p, s.file_id) for p, stats in meta.stats_by_partition().items() for s in stats
              if str(s.prev_commit or "null") != "null"}
    needed |= {(p, f) for p, ids in (meta.replaced_file_ids or {}).items() for f in ids}
    if not needed:
        return
    just_before = str(int(target.time) - 1).zfill(len(target.time))
    present = table.view(as_of=just_before, timeline=timeline).file_groups
    missing = sorted(f"{p}/{f}" if p else str(f) for p, f in needed if (p, f) not in present)
    if missing:
        before = [i.time for i in timeline.completed_writes() if i.time < target.time]
        cleans = [i.time for i in timeline.completed(["clean"]) if not before or i.time > before[-1]]
        raise RollbackError(
            f"cannot roll back {target.time} of table {table.storage.base_uri}: the file slices the table would "
            f"fall back to are gone (file groups {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}"
            f"{'; deleted by clean ' + ', '.join(cleans) if cleans else ''}). Rolling back would lose their rows; "
            "the table is left unchanged. Restore a savepoint taken before the commit instead, or keep more "
            "versions (hoodie.cleaner.commits.retained / hoodie.cleaner.fileversions.retained)")


def _refuse_if_last_active_write(table: HudiTable, timeline: Timeline, target: Instant) -> None:
    """Readers (Hudi, hudi-rs, pyhudi) count the files of archived commits as committed because they are older
    than the first write on the active timeline. Rolling back the only write left there removes that boundary,
    and the archived commits' rows would vanish from every reader: refuse."""
    if any(i.time != target.time for i in timeline.completed_writes()):
        return
    if not table.has_archived_instants():
        return
    raise RollbackError(
        f"cannot roll back {target.time} of table {table.storage.base_uri}: it is the only commit left on the "
        "active timeline and the commits before it are archived; without a commit on the active timeline, "
        "readers no longer see the archived commits' files and the table would read empty. The table is left "
        "unchanged. Write the reverse change as a new commit instead, or keep more commits on the active "
        "timeline (hoodie.keep.min.commits / hoodie.keep.max.commits)")


def restore_to_savepoint(spark, path, instant_time: str) -> RestoreMetadata:
    """Restore the table to the savepoint `instant_time` (Hudi's `rollback_to_savepoint` procedure); returns its
    HoodieRestoreMetadata."""
    table = HudiTable.load(str(path))
    table.check_writable("restore")
    instant_time = normalize_instant_argument(instant_time)
    existing = savepoint_times(table.timeline())
    if instant_time not in existing:
        raise TimelineError(f"cannot restore table {table.storage.base_uri} to {instant_time}: there is no savepoint "
                            f"at that instant; savepoints: {', '.join(existing) or 'none'}")
    return restore(table, instant_time, savepoint=True)


def restore(table: HudiTable, instant_time: str, savepoint: bool = True) -> RestoreMetadata:
    """Roll back every write instant after `instant_time`, newest first, under one restore instant."""
    finish_pending_rollbacks(table)
    timeline = table.timeline()
    targets = [_resolve_action(table.storage, i) for i in reversed(timeline.instants)
               if i.time > instant_time and i.action in RESTORABLE_ACTIONS]
    restore_time = timeline.new_instant_time()
    plan = RestorePlan(instants_to_rollback=tuple(InstantInfo(i.time, i.action) for i in targets), version=2,
                       savepoint=instant_time if savepoint else None)
    commit = ServiceInstantCommit.begin_plan(table.storage, restore_time, RESTORE, RESTORE_PLAN, plan.to_avro())
    return _run_restore(table, commit, plan)


def _run_restore(table: HudiTable, commit: ServiceInstantCommit, plan: RestorePlan) -> RestoreMetadata:
    started = time.time()
    restore_time = commit.instant_time
    commit.start_with(b"")
    per_instant: dict[str, tuple[RollbackMetadata | None, ...]] = {}
    for index, info in enumerate(plan.instants_to_rollback):
        if not str(info.commit_time or "").isdigit() or not str(info.action or "").isalpha():
            raise CorruptFileError(f"{METAFOLDER}/{restore_time}.restore.requested names {info.to_avro()!r} as an "
                                   "instant to roll back, which is not an instant; the restore plan is corrupt: "
                                   "remove it")
        timeline = table.timeline()
        target = Instant(info.commit_time, info.action, State.COMPLETED)
        if not _instant_files(table.storage, target):
            continue    # rolled back before a crash
        per_instant[target.time] = (rollback(table, target, timeline, restore_time=restore_time),)
        if index == 0:
            crash_point("restore.after_first_rollback")
    savepoint = plan.savepoint
    if savepoint:
        # Savepoints of rolled-back commits pin files that no longer exist.
        for instant in table.timeline().completed([SAVEPOINT]):
            if instant.time > savepoint:
                table.storage.delete_file(instant_file(table.storage, instant))
                table.storage.delete_file(instant_file(table.storage, instant.with_state(State.INFLIGHT)))
    metadata = RestoreMetadata(
        start_restore_time=restore_time, time_taken_ms=int((time.time() - started) * 1000),
        instants_to_rollback=[i.commit_time for i in plan.instants_to_rollback], rollbacks=per_instant, version=1,
        restore_instant_info=plan.instants_to_rollback, extra_metadata=None)
    commit.complete_with(RESTORE_METADATA, metadata.to_avro())
    return metadata


def finish_pending_rollbacks(table: HudiTable) -> None:
    """Complete rollbacks and restores a crash interrupted, from their plans."""
    timeline = table.timeline()
    for instant in timeline.pending([RESTORE]):
        where = instant_file(table.storage, instant.with_state(State.REQUESTED))
        plan = RestorePlan.from_bytes(table.storage.read_bytes(where), f"{table.storage.base_uri}/{where}")
        _run_restore(table, ServiceInstantCommit.resume(table.storage, instant), plan)
    for instant in table.timeline().pending([ROLLBACK]):
        where = instant_file(table.storage, instant.with_state(State.REQUESTED))
        rollback_plan = RollbackPlan.from_bytes(table.storage.read_bytes(where), f"{table.storage.base_uri}/{where}")
        _execute(table, rollback_plan, ServiceInstantCommit.resume(table.storage, instant))


# --- one rollback ---------------------------------------------------------------------------------------------
def rollback(table: HudiTable, target: Instant, timeline: Timeline | None = None,
             restore_time: str | None = None, metadata_options: MetadataTableOptions | None = None) -> RollbackMetadata:
    """Roll back `target` (any state); returns its HoodieRollbackMetadata. Inside a restore
    (`restore_time`), no rollback instant is published: the restore instant records the metadata.
    `metadata_options`: the metadata table's settings from the writer's options that rolls back."""
    timeline = timeline or table.timeline()
    plan = plan_rollback(table, target)
    if restore_time is not None:
        return _execute(table, plan, restore_time=restore_time)
    rollback_time = timeline.new_instant_time()
    commit = ServiceInstantCommit.begin_plan(table.storage, rollback_time, ROLLBACK, ROLLBACK_PLAN, plan.to_avro(),
                                             metadata_options)
    crash_point("rollback.after_plan")
    return _execute(table, plan, commit)


def plan_rollback(table: HudiTable, target: Instant) -> RollbackPlan:
    """HoodieRollbackPlan for `target`: the files it wrote, grouped by file group."""
    storage = table.storage
    written = set(marked_files(storage, target.time))
    completed_action = COMMIT if target.action == COMPACTION else target.action
    source = instant_file(storage, Instant(target.time, completed_action))
    # A restore interrupted while rolling `target` back already removed its completed file: the markers it left
    # (_mark_planned) name the files then.
    if target.is_completed and storage.exists(source):
        meta = parse_commit(storage.read_bytes(source), f"{storage.base_uri}/{source}")
        written.update(storage.inside(s.path, source) for s in meta.write_stats if s.path)
        written.update(storage.inside(p, source) for s in meta.write_stats for p in (s.cdc_stats or {}))
    base_path = storage.base_path
    for info in storage.list_files("", recursive=True):   # files named with the instant (no marker left)
        relative = info.path[len(base_path) + 1:]
        if relative.startswith(METAFOLDER + "/"):
            continue
        parsed = parse_base_file_name(info.base_name)
        cdc = parse_cdc_log_name(info.base_name)
        if (parsed and parsed[2] == target.time) or (cdc and cdc[1] == target.time):
            written.add(relative)
    requests: dict[tuple[str, str], dict] = {}
    whole_files = not supports_append(storage.fs)
    for relative in sorted(written):
        name = relative.rsplit("/", 1)[-1]
        base = parse_base_file_name(name)
        log = parse_log_file_name(name) or parse_cdc_log_name(name)
        instants = _block_instants(storage, relative) if log and storage.exists(relative) else set()
        if whole_files and instants and target.time not in instants:
            continue   # another instant wrote it whole: the target's marker names it, but it lost the create
        file_id = base[0] if base else (log[0] if log else None)
        key = (partition_of(relative), file_id or "")
        request = requests.setdefault(key, {"partitionPath": key[0], "fileId": file_id,
                                            "latestBaseInstant": log[1] if log else target.time,
                                            "filesToBeDeleted": [], "logBlocksToBeDeleted": None})
        if instants - {target.time}:
            request["logBlocksToBeDeleted"] = {**(request["logBlocksToBeDeleted"] or {}),
                                               storage.full(relative): storage.file_size(relative)}
        else:
            request["filesToBeDeleted"].append(storage.full(relative))
    return RollbackPlan(instant_to_rollback=InstantInfo(target.time, target.action),
                        requests=tuple(RollbackRequest.from_avro(r) for r in requests.values()), version=1)


def _checked_plan(storage: Storage, plan: RollbackPlan,
                  source: str) -> tuple[Instant, list[tuple[RollbackRequest, list, list]]]:
    """The plan's target and, per request, the relative paths of files to delete and of logs to append to; every
    path inside the table and outside `.hoodie` (CorruptFileError naming the plan file otherwise)."""
    info = plan.instant_to_rollback or InstantInfo()
    commit_time, action = str(info.commit_time or ""), str(info.action or "")
    if not commit_time.isdigit() or not action.isalpha():
        raise CorruptFileError(f"{source} names the instant {commit_time!r} ({action!r}) to roll back, which is "
                               "not an instant; the rollback plan is corrupt: remove it")

    def data_file(full: str) -> str:
        relative = storage.inside(full, source)
        if relative.startswith(METAFOLDER + "/"):
            raise CorruptFileError(f"{source} names {full!r}, a timeline file, as a data file to roll back; the "
                                   "rollback plan is corrupt: remove it")
        return relative

    requests = [(request, [(full, data_file(full)) for full in request.files_to_delete or []],
                 [(full, data_file(full)) for full in request.log_blocks_to_delete or {}])
                for request in plan.requests or ()]
    return Instant(commit_time, action, State.COMPLETED), requests


def _execute(table: HudiTable, plan: RollbackPlan, commit: ServiceInstantCommit | None = None,
             restore_time: str | None = None) -> RollbackMetadata:
    """Follow a rollback plan. On its own (`commit`), the rollback instant goes inflight, then completed with the
    metadata; inside a restore (`restore_time`) only the metadata is returned, for the restore instant."""
    storage = table.storage
    started = time.time()
    rollback_time = commit.instant_time if commit is not None else restore_time
    target, requests = _checked_plan(storage, plan, f"{METAFOLDER}/{rollback_time}.rollback.requested"
                                     if commit is not None else f"{METAFOLDER}/{rollback_time}.restore.requested")
    if commit is not None:
        commit.start_with(b"")
    if commit is None:
        _mark_planned(storage, target.time, requests)
    # Readers stop seeing the target first, then its files go.
    storage.delete_file(instant_file(storage, target))
    crash_point("rollback.after_instant_deleted")
    deleted_files: dict[str, list[str]] = {}       # partition -> full paths deleted
    log_sizes: dict[str, dict[str, int]] = {}       # partition -> {full path of a log appended to: its size}
    failed_logs: dict[str, dict[str, int]] = {}     # partition -> {that log's full path: its size before}
    deleted = 0
    for request, files, logs in requests:
        done = deleted_files.setdefault(request.partition_path, [])
        for full, relative in files:
            if storage.exists(relative):
                storage.delete_file(relative)
                done.append(full)
                deleted += 1
        for full, relative in logs:
            failed_logs.setdefault(request.partition_path, {})[full] = int(
                (request.log_blocks_to_delete or {}).get(full) or storage.file_size(relative))
            size = _append_rollback_block(storage, relative, rollback_time, target.time)
            log_sizes.setdefault(request.partition_path, {})[full] = size
    for path in _instant_files(storage, target):
        storage.delete_file(path)
    delete_markers(storage, target.time)
    metadata = RollbackMetadata(
        start_rollback_time=rollback_time or "", time_taken_ms=int((time.time() - started) * 1000),
        total_files_deleted=deleted, commits_rollback=[target.time],
        partition_metadata={p: RollbackPartitionMetadata(p, names, [], log_sizes.get(p, {}), failed_logs.get(p, {}))
                            for p, names in deleted_files.items()}, version=1,
        instants_rollback=(InstantInfo(target.time, target.action),))
    if commit is not None:
        crash_point("rollback.before_complete")
        commit.complete_with(ROLLBACK_METADATA, metadata.to_avro())
    return metadata


# --- helpers --------------------------------------------------------------------------------------------------
def _mark_planned(storage: Storage, instant_time: str, requests: list[tuple[RollbackRequest, list, list]]) -> None:
    """Inside a restore no rollback plan is stored: before the target's completed file (and with it its write
    stats) goes, name its planned files by markers, so a restore a crash interrupts re-plans the same files."""
    for _, files, logs in requests:
        for _, relative in files:
            create_marker(storage, instant_time, relative, "CREATE")
        for _, relative in logs:
            create_marker(storage, instant_time, relative, "APPEND")


def _resolve_action(storage: Storage, instant: Instant) -> Instant:
    """A completed compaction appears as `<t>.commit`; roll it back as the compaction it was."""
    if instant.action == COMMIT and instant.is_completed and \
            storage.exists(instant_file(storage, Instant(instant.time, COMPACTION, State.REQUESTED))):
        return Instant(instant.time, COMPACTION, State.COMPLETED)
    return instant


def _instant_files(storage: Storage, target: Instant) -> list[str]:
    """Timeline files of `target` that exist (relative to the table), completed first (so a crash leaves it
    pending, never half-done)."""
    paths = [instant_file(storage, target.with_state(s)) for s in (State.COMPLETED, State.INFLIGHT, State.REQUESTED)]
    return [p for p in paths if storage.exists(p)]


def _block_instants(storage: Storage, relative: str) -> set[str]:
    """The instants whose blocks a log file holds (a Java writer appends other commits' blocks to a file; on an
    object store two writers may race to create one name, and the loser's marker names the winner's file)."""
    from pyhudi.file_group.log_file import block_instants

    try:
        # Corrupt (half-written) blocks are skipped by the reader; what fails here is the file itself.
        return block_instants(storage.fs, storage.full(relative))
    except Exception as error:  # noqa: BLE001 - never guess: deleting a shared log would lose other commits
        raise CorruptFileError(f"cannot read the log file {storage.full(relative)} to decide whether it holds "
                               f"other commits' blocks ({error}); nothing was rolled back. Fix the file's access "
                               "(or restore it) and retry") from error


def _append_rollback_block(storage: Storage, relative: str, rollback_time: str, target_time: str) -> int:
    """Hudi's rollback of blocks inside a shared log file: a ROLLBACK command block targeting the instant."""
    from pyhudi.file_group.log_file import append_log_blocks, rollback_command_block

    return append_log_blocks(storage.fs, storage.full(relative), [rollback_command_block(rollback_time, target_time)])
