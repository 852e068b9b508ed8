"""Savepoints: pin a completed commit's files so the cleaner keeps them and the table can be restored to it.

A savepoint is `<t>.savepoint.inflight` (empty) then `<t>.savepoint`, a HoodieSavepointMetadata Avro file that
lists, per partition, the file names of the latest file slices at `t` (base file and log files, with a CDC table's
-cdc logs of those slices, which Hudi's file system view counts as their log files), as Hudi's
SavepointActionExecutor does, on the one commit protocol (commit/service_commit.py; like Hudi, no requested file).
Deleting a savepoint removes both files. Restoring to a savepoint is the restore action's (services/rollback.py).
"""

from __future__ import annotations

import time

from pyhudi.commit.service_commit import ServiceInstantCommit
from pyhudi.commit.timeline_metadata import latest_clean_retained_commit, savepoint_times
from pyhudi.errors import TimelineError
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.timeline import instant_file, SAVEPOINT, WRITE_ACTIONS, Instant, State, Timeline, normalize_instant_argument
from pyhudi.timeline.avro_record import SAVEPOINT_METADATA
from pyhudi.timeline.savepoint_metadata import SavepointMetadata, SavepointPartitionMetadata


# --- public API -------------------------------------------------------------------------------------------
def create_savepoint(spark, path, instant_time: str | None = None, user: str = "", comments: str = "") -> str:
    """Savepoint the completed commit `instant_time` (default: the latest); returns the savepointed instant."""
    table = HudiTable.load(str(path))
    table.check_writable("savepoint")
    timeline = table.timeline()
    base = table.storage.base_uri
    if instant_time is None:
        latest = timeline.latest_completed_write()
        if latest is None:
            raise TimelineError(f"table at {base} has no completed commit to savepoint; write to it first")
        instant_time = latest.time
    instant_time = normalize_instant_argument(instant_time)
    if not timeline.is_completed_write(instant_time):
        found = timeline.find(instant_time)
        state = f"is {found.action} in state {found.state.name}" if found else "does not exist"
        raise TimelineError(f"cannot savepoint {instant_time} of table {base}: the instant {state}; savepoint a "
                            f"completed commit (latest: {getattr(timeline.latest_completed_write(), 'time', None)})")
    if Instant(instant_time, SAVEPOINT) in timeline.completed([SAVEPOINT]):
        raise TimelineError(f"commit {instant_time} of table {base} is already savepointed")
    retained = latest_clean_retained_commit(table.storage, timeline)
    if retained and instant_time < retained:
        raise TimelineError(f"could not savepoint commit {instant_time} of table {base}: it is beyond the lookup "
                            f"window {retained} (the cleaner may already have removed its files)")

    metadata = SavepointMetadata(savepointed_by=user or "", savepointed_at=int(time.time() * 1000),
                                 comments=comments or "", partition_metadata=_latest_files(table, timeline, instant_time),
                                 version=1)
    commit = ServiceInstantCommit(table.storage, Instant(instant_time, SAVEPOINT, State.REQUESTED))
    table.storage.delete_file(instant_file(table.storage, commit.requested.with_state(State.INFLIGHT)))  # crash leftover
    try:
        commit.start_with(b"")
        crash_point("savepoint.after_inflight")
        commit.complete_with(SAVEPOINT_METADATA, metadata.to_avro())
    except TimelineError as exc:
        raise TimelineError(f"commit {instant_time} of table {base} is already savepointed or being savepointed "
                            f"by another writer ({exc})") from None
    return instant_time


def _existing_savepoint(path, instant_time: str, refusal: str) -> tuple[HudiTable, str]:
    """The table and the normalized savepoint time; TimelineError listing the savepoints when there is none."""
    table = HudiTable.load(str(path))
    table.check_writable("change the savepoints of")
    instant_time = normalize_instant_argument(instant_time)
    existing = savepoint_times(table.timeline())
    if instant_time not in existing:
        raise TimelineError(refusal.format(base=table.storage.base_uri, t=instant_time)
                            + f"; savepoints: {', '.join(existing) or 'none'}")
    return table, instant_time


def delete_savepoint(spark, path, instant_time: str) -> bool:
    table, instant_time = _existing_savepoint(path, instant_time, "table {base} has no savepoint {t}")
    completed = Instant(instant_time, SAVEPOINT)
    table.storage.delete_file(instant_file(table.storage, completed))
    table.storage.delete_file(instant_file(table.storage, completed.with_state(State.INFLIGHT)))
    return True


def show_savepoints(spark, path) -> list[str]:
    return savepoint_times(HudiTable.load(str(path)).timeline())


# --- helpers ----------------------------------------------------------------------------------------------
def _latest_files(table: HudiTable, timeline: Timeline, instant_time: str) -> dict[str, SavepointPartitionMetadata]:
    """Per partition: the file names of the latest file slices as of `instant_time` (base and log files).
    Log files added to those slices by later delta commits are left out."""
    view = table.view(as_of=instant_time, timeline=timeline)
    later_logs = set()
    for instant in timeline.completed_writes():
        if instant.time > instant_time:
            later_logs.update(s.path for s in timeline.read_commit(instant).write_stats if s.path)
    out: dict[str, list[str]] = {}
    for slice_ in view.latest_slices():
        files = [slice_.base_file.path] if slice_.base_file else []
        files += [log.path for log in slice_.log_files if log.path not in later_logs]
        files += _cdc_logs(timeline, slice_)
        out.setdefault(slice_.partition_path, []).extend(p.rsplit("/", 1)[-1] for p in files)
    return {p: SavepointPartitionMetadata(p, names) for p, names in out.items()}


def _cdc_logs(timeline: Timeline, slice_) -> list[str]:
    """The -cdc logs of a slice: those its base instant's commit wrote for its file group (the write stats'
    cdcStats, relative paths), when that commit is on the active timeline."""
    instant = timeline.find(slice_.base_instant)
    if instant is None or not instant.is_completed or instant.action not in WRITE_ACTIONS:
        return []
    stats = timeline.read_commit(instant).stats_by_partition().get(slice_.partition_path) or []
    return sorted(p for s in stats if s.file_id == slice_.file_id for p in (s.cdc_stats or {}))
