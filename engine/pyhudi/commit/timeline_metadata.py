"""Readers of the Avro instants table services leave on the timeline (clean plans and metadata, savepoints), for
the actions that must respect them: the cleaner keeps savepointed files, the archiver and savepoint respect the
cleaner's window, restore checks savepoints. Here so that no action imports another to read its instants."""

from __future__ import annotations

from pyhudi.timeline import avro_record as avro
from pyhudi.commit.retention import KEEP_LATEST_COMMITS
from pyhudi.file_group.naming import partition_file
from pyhudi.storage import Storage
from pyhudi.timeline import instant_file, CLEAN, SAVEPOINT, Instant, State, Timeline


# --- clean ----------------------------------------------------------------------------------------------------
def read_clean_metadata(storage: Storage, instant: Instant) -> dict:
    """The HoodieCleanMetadata record of the completed clean `instant`."""
    name = instant_file(storage, instant.with_state(State.COMPLETED))
    return avro.from_bytes(storage.read_bytes(name), f"{storage.base_uri}/{name}")


def read_cleaner_plan(storage: Storage, instant_time: str) -> dict:
    """The HoodieCleanerPlan record of the clean `instant_time` (its requested file)."""
    name = instant_file(storage, Instant(instant_time, CLEAN, State.REQUESTED))
    return avro.from_bytes(storage.read_bytes(name), f"{storage.base_uri}/{name}")


def last_clean_metadata(storage: Storage, timeline: Timeline) -> dict | None:
    """HoodieCleanMetadata of the latest completed clean (None without one; empty clean files are skipped)."""
    for instant in reversed(timeline.completed([CLEAN])):
        if storage.file_size(instant_file(storage, instant)):
            return read_clean_metadata(storage, instant)
    return None


def latest_clean_retained_commit(storage: Storage, timeline: Timeline) -> str | None:
    """earliestCommitToRetain of the latest clean (completed: clean metadata; pending: cleaner plan); None without
    one, or when it cannot be read (an unreadable clean instant does not block a savepoint)."""
    cleans = [i for i in timeline.instants if i.action == CLEAN]
    if not cleans:
        return None
    latest = cleans[-1]
    try:
        if latest.is_completed:
            return read_clean_metadata(storage, latest).get("earliestCommitToRetain") or None
        return (read_cleaner_plan(storage, latest.time).get("earliestInstantToRetain") or {}).get("timestamp") or None
    except Exception:  # noqa: BLE001 - see docstring
        return None


CLEAN_PLAN_VERSION = 2          # CleanPlanner.LATEST_CLEAN_PLAN_VERSION: HoodieCleanFileInfo paths
CLEAN_METADATA_VERSION = 2      # CleanerUtils.LATEST_CLEAN_METADATA_VERSION


def cleaner_plan(retain: Instant | None, policy: str, files: dict[str, list[str]], partitions_to_delete: list[str],
                 extra: dict[str, str]) -> dict:
    """A HoodieCleanerPlan record: `files` is partition -> full paths of the files to delete."""
    return {
        "earliestInstantToRetain": {"timestamp": retain.time, "action": retain.action, "state": "COMPLETED"}
        if retain else None,
        "policy": policy,
        "filesToBeDeletedPerPartition": None,
        "version": CLEAN_PLAN_VERSION,
        "filePathsToBeDeletedPerPartition": {
            partition: [{"filePath": path, "isBootstrapBaseFile": False} for path in paths]
            for partition, paths in files.items()},
        "partitionsToBeDeleted": partitions_to_delete,
        "extraMetadata": extra,
    }


def clean_metadata(instant_time: str, plan: dict, deleted: dict[str, list[str]], failed: set[str],
                   deleted_partitions: set[str], last_commit: str, took_ms: int) -> dict:
    """The HoodieCleanMetadata record of the clean `instant_time` that ran `plan`: `deleted` is partition -> names
    of the files it tried to delete, `failed` the paths (relative to the table) it could not."""
    partition_metadata = {}
    for partition in sorted(set(deleted) | deleted_partitions):
        names = deleted.get(partition, [])
        partition_metadata[partition] = {
            "partitionPath": partition, "policy": plan.get("policy") or KEEP_LATEST_COMMITS,
            "deletePathPatterns": names,
            "successDeleteFiles": [n for n in names if partition_file(partition, n) not in failed],
            "failedDeleteFiles": [n for n in names if partition_file(partition, n) in failed],
            "isPartitionDeleted": partition in deleted_partitions}
    return {
        "startCleanTime": instant_time,
        "timeTakenInMillis": took_ms,
        "totalFilesDeleted": sum(len(m["successDeleteFiles"]) for m in partition_metadata.values()),
        "earliestCommitToRetain": (plan.get("earliestInstantToRetain") or {}).get("timestamp") or "",
        "lastCompletedCommitTimestamp": last_commit,
        "partitionMetadata": partition_metadata,
        "version": CLEAN_METADATA_VERSION,
        "bootstrapPartitionMetadata": {},
        "extraMetadata": plan.get("extraMetadata"),
    }


# --- savepoint ------------------------------------------------------------------------------------------------
def savepoint_metadata(storage: Storage, instant_time: str) -> dict:
    """The HoodieSavepointMetadata record of the completed savepoint `instant_time`."""
    name = instant_file(storage, Instant(instant_time, SAVEPOINT))
    return avro.from_bytes(storage.read_bytes(name), f"{storage.base_uri}/{name}")


def savepointed_files(storage: Storage, timeline: Timeline) -> set[str]:
    """Paths (relative to the table base path) of every data file some completed savepoint pins."""
    pinned = set()
    for instant in timeline.completed([SAVEPOINT]):
        for partition, meta in (savepoint_metadata(storage, instant.time).get("partitionMetadata") or {}).items():
            for name in meta.get("savepointDataFile") or []:
                pinned.add(partition_file(partition, name))
    return pinned


def savepoint_times(timeline: Timeline) -> list[str]:
    """Completed savepoint instant times, newest first."""
    return [i.time for i in reversed(timeline.completed([SAVEPOINT]))]
