"""Moving completed instants of a Hudi 1.x timeline (layout 2) into its LSM timeline history, as Java's
TimelineArchiverV2 does: one HoodieLSMTimelineInstant per instant (timeline/lsm_history.py writes the history in
Java's format), then the instants' files leave the active timeline, pending states first, then completed ones
oldest first, so no reader sees a hole or a false pending instant. Which instants go is the caller's choice (the
data table's archiver, services/archive.py; the metadata table's, metadata_table/archive.py).
"""

from __future__ import annotations

from pyhudi.storage import Storage
from pyhudi.testing import crash_point
from pyhudi.timeline import (CLEAN, CLUSTERING, COMPACTION, COMPLETES_AS, LOG_COMPACTION, REPLACE_COMMIT, Instant,
                             State, TimelineLayout)
from pyhudi.timeline.lsm_history import DEFAULT_BATCH_SIZE, DEFAULT_COMPRESSION, ArchivedInstant, write_history


def move_to_history(storage: Storage, layout: TimelineLayout, selected: list[Instant],
                    batch_size: int = DEFAULT_BATCH_SIZE, compression: str = DEFAULT_COMPRESSION) -> None:
    """Archive the completed instants `selected` of the layout-2 timeline in `layout`."""
    wanted = {(i.time, i.action) for i in selected}
    files: dict[tuple[str, str], list[tuple[Instant, str]]] = {}
    for info in storage.list_files(layout.folder):
        instant = layout.parse(info.base_name)
        if instant is None:
            continue
        key = (instant.time, COMPLETES_AS.get(instant.action, instant.action))
        if key in wanted:
            files.setdefault(key, []).append((instant, info.base_name))
    archived = [_history_entry(storage, layout.folder, files.get((i.time, i.action), [])) for i in selected]
    write_history(storage, layout.history_folder, [entry for entry in archived if entry is not None], batch_size,
                  compression=compression)
    crash_point("archive.after_history")
    doomed = sorted((pair for pairs in files.values() for pair in pairs), key=lambda p: (p[0].is_completed, p[0].time))
    for _, name in doomed:
        storage.delete_file(f"{layout.folder}/{name}")


def _history_entry(storage: Storage, folder: str, states: list[tuple[Instant, str]]) -> ArchivedInstant | None:
    """MetadataConversionUtils.createLSMTimelineInstant of one instant's files. A legacy completed instant (upgraded
    from layout 1, no completion time in its name) archives with its requested time as completion time."""
    by_state = {instant.state: (instant, name) for instant, name in states}
    if State.COMPLETED not in by_state:
        return None
    completed = by_state[State.COMPLETED][0]

    def content(state: State) -> bytes | None:
        found = by_state.get(state)
        data = storage.read_bytes(f"{folder}/{found[1]}") if found else b""
        return data or None

    pending_action = next((i.action for i, _ in states if not i.is_completed), completed.action)
    plan = None
    if pending_action in (CLEAN, COMPACTION, LOG_COMPACTION):
        plan = content(State.REQUESTED)
    elif pending_action in (REPLACE_COMMIT, CLUSTERING):
        plan = content(State.INFLIGHT) or content(State.REQUESTED)
    return ArchivedInstant(completed.time, completed.completion_time or completed.time, completed.action,
                           content(State.COMPLETED), plan)
