"""Savepoints: pin a completed commit's files so the cleaner keeps them and the table can be restored to it.

A savepoint is `<t>.savepoint.inflight` (empty) then `<t>.savepoint`, a HoodieSavepointMetadata Avro file that
lists, per partition, the file names of the latest file slices at `t` (base file and log files), as Hudi's
SavepointActionExecutor does. Deleting a savepoint removes both files. Restoring rolls back every write after `t`
(newest first) under one `restore` instant (services/rollback.py).
"""

from __future__ import annotations

import time

from pyhudi.errors import TimelineError
from pyhudi.services import avro_metadata as avro
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.timeline import (CLEAN, METAFOLDER, SAVEPOINT, Instant, State, Timeline, normalize_instant_argument)


def savepoint_metadata(storage: Storage, instant_time: str) -> dict:
    """The HoodieSavepointMetadata record of the completed savepoint `instant_time`."""
    name = f"{METAFOLDER}/{Instant(instant_time, SAVEPOINT).file_name}"
    return avro.from_bytes(storage.read_bytes(name), f"{storage.base_uri}/{name}")


def savepointed_files(storage: Storage, timeline: Timeline) -> set[str]:
    """Paths (relative to the table base path) of every data file some completed savepoint pins."""
    pinned = set()
    for instant in timeline.completed([SAVEPOINT]):
        for partition, meta in (savepoint_metadata(storage, instant.time).get("partitionMetadata") or {}).items():
            for name in meta.get("savepointDataFile") or []:
                pinned.add(f"{partition}/{name}" if partition else name)
    return pinned


def savepoint_times(timeline: Timeline) -> list[str]:
    """Completed savepoint instant times, newest first."""
    return [i.time for i in reversed(timeline.completed([SAVEPOINT]))]


# --- public API -------------------------------------------------------------------------------------------
def create_savepoint(spark, path, instant_time: str | None = None, user: str = "", comments: str = "") -> str:
    """Savepoint the completed commit `instant_time` (default: the latest); returns the savepointed instant."""
    table = HudiTable.load(str(path))
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
    retained = _earliest_commit_retained(table.storage, timeline)
    if retained and instant_time < retained:
        raise TimelineError(f"could not savepoint commit {instant_time} of table {base}: it is beyond the lookup "
                            f"window {retained} (the cleaner may already have removed its files)")

    metadata = {"savepointedBy": user or "", "savepointedAt": int(time.time() * 1000), "comments": comments or "",
                "partitionMetadata": _latest_files(table, timeline, instant_time), "version": 1}
    inflight = Instant(instant_time, SAVEPOINT, State.INFLIGHT)
    storage = table.storage
    storage.delete_file(f"{METAFOLDER}/{inflight.file_name}")   # a leftover of a crashed savepoint
    if not storage.create_if_absent(f"{METAFOLDER}/{inflight.file_name}", b""):
        raise TimelineError(f"savepoint {instant_time} of table {base} is being created by another writer")
    crash_point("savepoint.after_inflight")
    if not storage.create_if_absent(f"{METAFOLDER}/{inflight.with_state(State.COMPLETED).file_name}",
                                    avro.to_bytes(avro.SAVEPOINT_METADATA, metadata)):
        raise TimelineError(f"commit {instant_time} of table {base} is already savepointed")
    return instant_time


def _existing_savepoint(path, instant_time: str, refusal: str) -> tuple[HudiTable, str]:
    """The table and the normalized savepoint time; TimelineError listing the savepoints when there is none."""
    table = HudiTable.load(str(path))
    instant_time = normalize_instant_argument(instant_time)
    existing = savepoint_times(table.timeline())
    if instant_time not in existing:
        raise TimelineError(refusal.format(base=table.storage.base_uri, t=instant_time)
                            + f"; savepoints: {', '.join(existing) or 'none'}")
    return table, instant_time


def delete_savepoint(spark, path, instant_time: str) -> bool:
    table, instant_time = _existing_savepoint(path, instant_time, "table {base} has no savepoint {t}")
    completed = Instant(instant_time, SAVEPOINT)
    table.storage.delete_file(f"{METAFOLDER}/{completed.file_name}")
    table.storage.delete_file(f"{METAFOLDER}/{completed.with_state(State.INFLIGHT).file_name}")
    return True


def show_savepoints(spark, path) -> list[str]:
    return savepoint_times(HudiTable.load(str(path)).timeline())


def restore_to_savepoint(spark, path, instant_time: str) -> bool:
    from pyhudi.services.rollback import restore

    table, instant_time = _existing_savepoint(
        path, instant_time, "cannot restore table {base} to {t}: there is no savepoint at that instant")
    restore(table, instant_time, savepoint=True)
    return True


# --- helpers ----------------------------------------------------------------------------------------------
def _latest_files(table: HudiTable, timeline: Timeline, instant_time: str) -> dict:
    """Per partition: the file names of the latest file slices as of `instant_time` (base and log files).
    Log files added to those slices by later delta commits are left out."""
    view = table.view(as_of=instant_time, timeline=timeline)
    later_logs = set()
    for instant in timeline.completed_writes():
        if instant.time > instant_time:
            for stats in (timeline.read_metadata(instant).get("partitionToWriteStats") or {}).values():
                later_logs.update(s.get("path") for s in stats if s.get("path"))
    out: dict[str, dict] = {}
    for slice_ in view.latest_slices():
        files = [slice_.base_file.path] if slice_.base_file else []
        files += [log.path for log in slice_.log_files if log.path not in later_logs]
        entry = out.setdefault(slice_.partition_path, {"partitionPath": slice_.partition_path,
                                                      "savepointDataFile": []})
        entry["savepointDataFile"].extend(p.rsplit("/", 1)[-1] for p in files)
    return out


def _earliest_commit_retained(storage: Storage, timeline: Timeline) -> str | None:
    """earliestCommitToRetain of the latest clean (completed: clean metadata; pending: cleaner plan)."""
    cleans = [i for i in timeline.instants if i.action == CLEAN]
    if not cleans:
        return None
    latest = cleans[-1]
    try:
        if latest.is_completed:
            record = avro.from_bytes(storage.read_bytes(f"{METAFOLDER}/{latest.file_name}"), latest.file_name)
            return record.get("earliestCommitToRetain") or None
        requested = latest.with_state(State.REQUESTED)
        record = avro.from_bytes(storage.read_bytes(f"{METAFOLDER}/{requested.file_name}"), requested.file_name)
        return (record.get("earliestInstantToRetain") or {}).get("timestamp") or None
    except Exception:  # noqa: BLE001 - an unreadable clean instant does not block savepoints
        return None
