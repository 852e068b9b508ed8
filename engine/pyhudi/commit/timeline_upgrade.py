"""Moving a version 6 table's timeline (layout 1) into Hudi 1.x's layout 2, as Hudi's SixToEightUpgradeHandler
does (UpgradeDowngradeUtils.upgradeActiveTimelineInstant, upgradeToLSMTimeline): every active instant file gets
its layout-2 name in `.hoodie/timeline` (a completed one `<requested>_<completion>.<action>`, its completion time
the file's modification time in the timeline zone, as Hudi's InstantGeneratorV2 reads a legacy instant), commit
metadata becomes Avro, a pending replacecommit (a clustering, once failed writes are rolled back) becomes a
`clustering`, and the archived timeline (`.hoodie/archived`) becomes the LSM history.

Unlike Java, which renames files in place, pyhudi *copies*: while hoodie.properties still says version 6 the old
timeline is whole and the new one unread; the caller flips hoodie.properties in one step and only then removes the
old files (`remove_layout_1_files`). A crash before the flip leaves a version 6 table and a stray
`.hoodie/timeline` (`copy_timeline` starts over); after it, a version 8/9 table and stray layout-1 files that no
reader of that layout looks at.
"""

from __future__ import annotations

from typing import Any

from pyhudi.timeline import avro_record as avro
from pyhudi.commit.archived_timeline import (ARCHIVED_META_ENTRY_SCHEMA, archive_files, read_archived_entries)
from pyhudi.storage import Storage
from pyhudi.testing import crash_point
from pyhudi.timeline import (ARCHIVED_FOLDER, CLEAN, COMMIT, DELTA_COMMIT, LAYOUT_1, METAFOLDER,
                             REPLACE_COMMIT, ROLLBACK, SAVEPOINT, CLUSTERING, Instant, State, TimelineLayout,
                             format_instant_time, parse_commit_metadata)
from pyhudi.timeline.commit_avro import commit_metadata_avro_bytes
from pyhudi.timeline.instant_time import UTC_ZONE
from pyhudi.timeline.lsm_history import ArchivedInstant, write_history

# The Avro record of each archived action's metadata in a HoodieArchivedMetaEntry (layout 1's archive).
_ENTRY_FIELDS = {f["name"]: f for f in ARCHIVED_META_ENTRY_SCHEMA["fields"]}
# The plan an archived completed instant carries into the LSM history (MetadataConversionUtils).
_PLAN_FIELDS = {CLEAN: "hoodieCleanerPlan", COMMIT: "hoodieCompactionPlan"}


def copy_timeline(storage: Storage, target: TimelineLayout, zone: str) -> int:
    """Write every layout-1 instant file of `storage` into `target`'s folder under its layout-2 name; returns how
    many. A folder an interrupted upgrade left is emptied first."""
    storage.delete_dir(target.folder)
    storage.makedirs(target.folder)
    files = [(LAYOUT_1.parse(info.base_name), info) for info in storage.list_files(METAFOLDER)]
    instants = [(instant, info) for instant, info in files if instant is not None]
    completed = {instant.time for instant, _ in instants if instant.is_completed}
    for instant, info in instants:
        data = storage.read_bytes(f"{METAFOLDER}/{info.base_name}")
        if instant.is_completed:
            completion = max(_completion_time(info.mtime, zone), instant.time)   # never before its request
            instant = Instant(instant.time, instant.action, State.COMPLETED, completion)
            data = _layout_2_metadata(instant, data, f"{storage.base_uri}/{METAFOLDER}/{info.base_name}")
        elif instant.action == REPLACE_COMMIT and instant.time not in completed:
            instant = Instant(instant.time, CLUSTERING, instant.state)   # Java renames pending replacecommits
        storage.write_bytes(target.path(instant), data)
    crash_point("upgrade.after_timeline_copy")
    return len(instants)


def _completion_time(mtime: Any, zone: str) -> str:
    """A file's modification time as an instant time in the timeline zone (HoodieInstantTimeGenerator)."""
    moment = mtime.astimezone() if zone != UTC_ZONE else mtime
    return format_instant_time(moment)


def _layout_2_metadata(instant: Instant, data: bytes, where: str) -> bytes:
    """Layout 2 keeps commit metadata as Avro (CommitMetadataSerDeV2); the other actions' files are Avro already."""
    if instant.action not in (COMMIT, DELTA_COMMIT, REPLACE_COMMIT) or not data.strip():
        return data
    return commit_metadata_avro_bytes(parse_commit_metadata(data, where), replace=instant.action == REPLACE_COMMIT)


def copy_archive_to_history(storage: Storage, target: TimelineLayout) -> int:
    """The archived timeline's completed instants as the LSM history (Java archives them again through
    TimelineArchiverV2); returns how many. Each keeps its metadata and, for a clean or compaction, its plan."""
    storage.delete_dir(target.history_folder)
    storage.makedirs(target.history_folder)
    entries = read_archived_entries(storage)
    plans = {(e["commitTime"], field): e[field] for e in entries for field in _PLAN_FIELDS.values() if e.get(field)}
    archived = []
    for entry in entries:
        time, action = entry.get("commitTime"), entry.get("actionType")
        if not time or not action or (entry.get("actionState") or "COMPLETED") != "COMPLETED":
            continue
        field = _PLAN_FIELDS.get(action)   # a completed compaction is archived as a commit
        plan = _avro_bytes(field, plans.get((time, field))) if field else None
        archived.append(ArchivedInstant(time, entry.get("stateTransitionTime") or time, action,
                                        _archived_metadata(entry, action), plan))
    if archived:
        write_history(storage, target.history_folder, archived)
    crash_point("upgrade.after_history")
    return len(archived)


def _archived_metadata(entry: dict, action: str) -> bytes | None:
    if action in (COMMIT, DELTA_COMMIT):
        record = entry.get("hoodieCommitMetadata")
        return commit_metadata_avro_bytes(record, replace=False) if record else None
    if action == REPLACE_COMMIT:
        record = entry.get("hoodieReplaceCommitMetadata")
        return commit_metadata_avro_bytes(record, replace=True) if record else None
    field = {CLEAN: "hoodieCleanMetadata", ROLLBACK: "hoodieRollbackMetadata",
             SAVEPOINT: "hoodieSavePointMetadata"}.get(action)
    return _avro_bytes(field, entry.get(field)) if field else None


def _avro_bytes(field: str | None, record: dict | None) -> bytes | None:
    """One metadata record as the Avro container file Hudi keeps it in (TimelineMetadataUtils.serializeAvroMetadata),
    under the schema the archive entry declares for it."""
    if field is None or not record:
        return None
    kinds = [k for k in _ENTRY_FIELDS[field]["type"] if k != "null"]
    return avro.to_bytes(kinds[0], record)


def remove_layout_1_files(storage: Storage) -> None:
    """After hoodie.properties names layout 2: the layout-1 instant files and the old archive go."""
    for info in storage.list_files(METAFOLDER):
        if LAYOUT_1.parse(info.base_name) is not None:
            storage.delete_file(f"{METAFOLDER}/{info.base_name}")
    if archive_files(storage):
        storage.delete_dir(ARCHIVED_FOLDER)


__all__ = ["copy_archive_to_history", "copy_timeline", "remove_layout_1_files"]
