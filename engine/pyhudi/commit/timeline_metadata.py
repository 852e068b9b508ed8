"""Readers of the Avro instants table services leave on the timeline (clean plans and metadata, savepoints), for
the actions that must respect them: the cleaner keeps savepointed files, the archiver and savepoint respect the
cleaner's window, restore checks savepoints. Here so that no action imports another to read its instants."""

from __future__ import annotations

from pyhudi.commit.retention import KEEP_LATEST_COMMITS
from pyhudi.file_group.naming import partition_file
from pyhudi.storage import Storage
from pyhudi.timeline import instant_file, CLEAN, SAVEPOINT, Instant, State, Timeline
from pyhudi.timeline.savepoint_metadata import SavepointMetadata
from pyhudi.timeline.clean_metadata import CLEAN_METADATA_VERSION, CleanMetadata, CleanPartitionMetadata
from pyhudi.timeline.clean_plan import CLEAN_PLAN_VERSION, ActionInstant, CleanerPlan, CleanFileInfo


# --- clean ----------------------------------------------------------------------------------------------------
def read_clean_metadata(storage: Storage, instant: Instant) -> CleanMetadata:
    """The HoodieCleanMetadata of the completed clean `instant`."""
    name = instant_file(storage, instant.with_state(State.COMPLETED))
    return CleanMetadata.from_bytes(storage.read_bytes(name), f"{storage.base_uri}/{name}")


def read_cleaner_plan(storage: Storage, instant_time: str) -> CleanerPlan:
    """The HoodieCleanerPlan of the clean `instant_time` (its requested file)."""
    name = instant_file(storage, Instant(instant_time, CLEAN, State.REQUESTED))
    return CleanerPlan.from_bytes(storage.read_bytes(name), f"{storage.base_uri}/{name}")


def last_clean_metadata(storage: Storage, timeline: Timeline) -> CleanMetadata | None:
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
            return read_clean_metadata(storage, latest).earliest_commit_to_retain or None
        return read_cleaner_plan(storage, latest.time).earliest_commit_to_retain
    except Exception:  # noqa: BLE001 - see docstring
        return None


def cleaner_plan(retain: Instant | None, policy: str, files: dict[str, list[str]], partitions_to_delete: list[str],
                 extra: dict[str, str]) -> CleanerPlan:
    """A new HoodieCleanerPlan: `files` is partition -> full paths of the files to delete."""
    return CleanerPlan(
        earliest_instant_to_retain=ActionInstant(retain.time, retain.action, "COMPLETED") if retain else None,
        policy=policy, files=None, version=CLEAN_PLAN_VERSION,
        file_paths={partition: tuple(CleanFileInfo(path, False) for path in paths)
                    for partition, paths in files.items()},
        partitions_to_delete=partitions_to_delete, extra_metadata=extra)


def clean_metadata(instant_time: str, plan: CleanerPlan, deleted: dict[str, list[str]], failed: set[str],
                   deleted_partitions: set[str], last_commit: str, took_ms: int) -> CleanMetadata:
    """The HoodieCleanMetadata of the clean `instant_time` that ran `plan`: `deleted` is partition -> names of the
    files it tried to delete, `failed` the paths (relative to the table) it could not."""
    partition_metadata = {}
    for partition in sorted(set(deleted) | deleted_partitions):
        names = deleted.get(partition, [])
        partition_metadata[partition] = CleanPartitionMetadata(
            partition_path=partition, policy=plan.policy or KEEP_LATEST_COMMITS, delete_path_patterns=names,
            success_delete_files=[n for n in names if partition_file(partition, n) not in failed],
            failed_delete_files=[n for n in names if partition_file(partition, n) in failed],
            is_partition_deleted=partition in deleted_partitions)
    return CleanMetadata(
        start_clean_time=instant_time, time_taken_ms=took_ms,
        total_files_deleted=sum(len(m.success_delete_files) for m in partition_metadata.values()),
        earliest_commit_to_retain=plan.earliest_commit_to_retain or "", last_completed_commit=last_commit,
        partition_metadata=partition_metadata, version=CLEAN_METADATA_VERSION, bootstrap_partition_metadata={},
        extra_metadata=plan.extra_metadata)


# --- savepoint ------------------------------------------------------------------------------------------------
def savepoint_metadata(storage: Storage, instant_time: str) -> SavepointMetadata:
    """The HoodieSavepointMetadata of the completed savepoint `instant_time`."""
    name = instant_file(storage, Instant(instant_time, SAVEPOINT))
    return SavepointMetadata.from_bytes(storage.read_bytes(name), f"{storage.base_uri}/{name}")


def savepointed_files(storage: Storage, timeline: Timeline) -> set[str]:
    """Paths (relative to the table base path) of every data file some completed savepoint pins."""
    pinned = set()
    for instant in timeline.completed([SAVEPOINT]):
        for partition, meta in savepoint_metadata(storage, instant.time).partition_metadata.items():
            for name in meta.data_files or []:
                pinned.add(partition_file(partition, name))
    return pinned


def savepoint_times(timeline: Timeline) -> list[str]:
    """Completed savepoint instant times, newest first."""
    return [i.time for i in reversed(timeline.completed([SAVEPOINT]))]
