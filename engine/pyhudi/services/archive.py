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

Known deviation: ``hoodieRequestedReplaceMetadata`` and ``hoodieIndexCommitMetadata`` are declared as always-null
fields (pyhudi writes neither clustering plans nor indexes); Avro schema resolution still reads them with Hudi's
entry schema.
"""

from __future__ import annotations

import io
import json
import re
import struct
from pyhudi import config as C
from pyhudi.errors import CorruptFileError
from pyhudi.file_group.log_block import LOG_BLOCK_VERSION, BlockType, LogBlock, encode_metadata
from pyhudi.file_group.log_file import DEFAULT_WRITE_TOKEN, read_log_bytes, write_log_file
from pyhudi.actions import avro_metadata as avro
from pyhudi.actions.avro_metadata import CLEAN_METADATA_SCHEMA, CLEANER_PLAN_SCHEMA, COMPACTION_PLAN_SCHEMA
from pyhudi.actions.retention import CleanOptions, earliest_commit_to_retain
from pyhudi.actions.timeline_metadata import last_clean_metadata, read_clean_metadata
from pyhudi.services.lock import table_lock
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.timeline import (ARCHIVED_FOLDER, CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, LOG_COMPACTION, METAFOLDER,
                             REPLACE_COMMIT, ROLLBACK, SAVEPOINT, TEMP_FOLDER, WRITE_ACTIONS, Instant, State,
                             Timeline, parse_instant_file_name, parse_instant_time)

ARCHIVE_FILE_PREFIX = ".commits_.archive."
ROLLING_STAT_METADATA_KEY = "ROLLING_STAT_METADATA"
_ARCHIVE_RE = re.compile(r"^\.commits_\.archive\.(\d+)(?:_(.*))?$")
_NS = "org.apache.hudi.avro.model"

# --- HoodieArchivedMetaEntry and the records it nests (hudi-common/src/main/avro) -----------------------------
_WRITE_STAT_FIELDS = [
    ("fileId", "string"), ("path", "string"), ("prevCommit", "string"), ("prevFilePathOverwritten", "string"),
    ("numWrites", "long"), ("numDeletes", "long"), ("numUpdateWrites", "long"), ("totalWriteBytes", "long"),
    ("totalWriteErrors", "long"), ("partitionPath", "string"), ("totalLogRecords", "long"),
    ("totalLogFiles", "long"), ("totalUpdatedRecordsCompacted", "long"), ("numInserts", "long"),
    ("totalLogBlocks", "long"), ("totalCorruptLogBlock", "long"), ("totalRollbackBlocks", "long"),
    ("fileSizeInBytes", "long")]
_STRING_MAP = ["null", {"type": "map", "values": "string"}]
COMMIT_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieCommitMetadata", "namespace": _NS,
    "fields": [
        {"name": "partitionToWriteStats", "default": None, "type": ["null", {"type": "map", "values": {
            "type": "array", "items": {"type": "record", "name": "HoodieWriteStat", "namespace": _NS, "fields": [
                {"name": n, "type": ["null", t], "default": None} for n, t in _WRITE_STAT_FIELDS]}}}]},
        {"name": "extraMetadata", "type": _STRING_MAP, "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", "string"], "default": None},
    ],
}
_COMPACTION_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieCompactionMetadata", "namespace": _NS,
    "fields": [{"name": "partitionToCompactionWriteStats", "type": ["null", {"type": "map", "values": {
        "type": "array", "items": {"type": "record", "name": "HoodieCompactionWriteStat", "namespace": _NS,
                                   "fields": [{"name": "partitionPath", "type": ["null", "string"]},
                                              {"name": "totalLogRecords", "type": ["null", "long"]},
                                              {"name": "totalLogFiles", "type": ["null", "long"]},
                                              {"name": "totalUpdatedRecordsCompacted", "type": ["null", "long"]},
                                              {"name": "hoodieWriteStat", "type": ["null", "HoodieWriteStat"]}]}}}]}],
}
_REPLACE_COMMIT_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieReplaceCommitMetadata", "namespace": _NS,
    "fields": [
        {"name": "partitionToWriteStats", "default": None,
         "type": ["null", {"type": "map", "values": {"type": "array", "items": "HoodieWriteStat"}}]},
        {"name": "extraMetadata", "type": _STRING_MAP, "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", "string"], "default": None},
        {"name": "partitionToReplaceFileIds", "default": None,
         "type": ["null", {"type": "map", "values": {"type": "array", "items": "string"}}]},
    ],
}


def _archived_entry_schema() -> dict:
    def optional(name, schema):
        return {"name": name, "type": ["null", schema], "default": None}

    return {
        "type": "record", "name": "HoodieArchivedMetaEntry", "namespace": _NS,
        "fields": [
            optional("hoodieCommitMetadata", COMMIT_METADATA_SCHEMA),
            optional("hoodieCleanMetadata", CLEAN_METADATA_SCHEMA),
            optional("hoodieCompactionMetadata", _COMPACTION_METADATA_SCHEMA),
            optional("hoodieRollbackMetadata", avro.ROLLBACK_METADATA),
            optional("hoodieSavePointMetadata", avro.SAVEPOINT_METADATA),
            optional("commitTime", "string"),
            optional("actionType", "string"),
            {"name": "version", "type": ["int", "null"], "default": 1},
            optional("hoodieCompactionPlan", COMPACTION_PLAN_SCHEMA),
            optional("hoodieCleanerPlan", CLEANER_PLAN_SCHEMA),
            optional("actionState", "string"),
            optional("hoodieReplaceCommitMetadata", _REPLACE_COMMIT_METADATA_SCHEMA),
            {"name": "hoodieRequestedReplaceMetadata", "type": ["null"], "default": None},
            optional("HoodieInflightReplaceMetadata", "HoodieCommitMetadata"),
            {"name": "hoodieIndexCommitMetadata", "type": ["null"], "default": None},
            optional("stateTransitionTime", "string"),
        ],
    }


ARCHIVED_META_ENTRY_SCHEMA = _archived_entry_schema()
_ENTRY_SCHEMA_JSON = json.dumps(ARCHIVED_META_ENTRY_SCHEMA, separators=(",", ":"))


# --- options ------------------------------------------------------------------------------------------------
def keep_commits(cfg: C.HoodieConfig) -> tuple[int, int]:
    """(hoodie.keep.min.commits, hoodie.keep.max.commits), checked as HoodieWriteConfig does."""
    C.check_archival_options(cfg)
    return cfg.get(C.KEEP_MIN_COMMITS), cfg.get(C.KEEP_MAX_COMMITS)


# --- public API ---------------------------------------------------------------------------------------------
def archive(spark, path, options: dict | None = None) -> list[str]:
    """Archive what is due now (with hoodie.keep.min.commits / hoodie.keep.max.commits and the cleaner options);
    returns the archived instant times, oldest first."""
    cfg = C.HoodieConfig(options or {})
    C.check_archival_options(cfg)
    table = HudiTable.load(str(path))
    return _archive(table, table.timeline(), cfg)


def archive_after_commit(spark, path, options) -> list[str]:
    """The archiver after a successful commit (Hudi's postCommit), run by the client as a hook after the cleaner."""
    table = HudiTable.load(str(path))
    return archive_if_due(table, table.timeline(), options)


def archive_if_due(table: HudiTable, timeline: Timeline, options) -> list[str]:
    """The archiver after a commit (``hoodie.archive.automatic``, default true): metadata only when nothing is due."""
    cfg = options if isinstance(options, C.HoodieConfig) else C.HoodieConfig(options or {}, warn_unknown=False)
    if not cfg.get(C.ARCHIVE_AUTOMATIC):
        return []
    return _archive(table, timeline, cfg)


def archived_instants(storage: Storage) -> list[Instant]:
    """Every instant file recorded in `.hoodie/archived`, as Instant(time, action, state), sorted."""
    out = set()
    for record in read_archived_entries(storage):
        action = record.get("actionType")
        if record.get("commitTime") and action:
            state = State[(record.get("actionState") or "COMPLETED").upper()]
            out.add(Instant(record["commitTime"], action, state))
    return sorted(out)


def read_archived_entries(storage: Storage) -> list[dict]:
    """The HoodieArchivedMetaEntry records of the archive files, in file order."""
    records = []
    for _, name in _archive_files(storage):
        relative = f"{ARCHIVED_FOLDER}/{name}"
        data = storage.read_bytes(relative)
        for block in read_log_bytes(data, relative, decode=False):
            if block.block_type == BlockType.AVRO_DATA_BLOCK:
                records += _decode_block(data, block, f"{storage.base_uri}/{relative}")
    return records


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
    if last_clean and last_clean.get("earliestCommitToRetain"):
        bounds.append(last_clean["earliestCommitToRetain"])
    replace = _oldest_uncleaned_replace(table.storage, timeline)
    if replace:
        bounds.append(replace)
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
        if not storage.file_size(f"{METAFOLDER}/{instant.file_name}"):
            continue
        meta = read_clean_metadata(storage, instant)
        cleaned_up_to = max(cleaned_up_to, meta.get("earliestCommitToRetain") or instant.time)
    for instant in timeline.completed([REPLACE_COMMIT]):
        if instant.time >= cleaned_up_to and timeline.read_metadata(instant).get("partitionToReplaceFileIds"):
            return instant.time
    return None


# --- archiving ----------------------------------------------------------------------------------------------
def _archive(table: HudiTable, timeline: Timeline, cfg: C.HoodieConfig) -> list[str]:
    """Archive what is due. Under optimistic concurrency control the archiver holds the table lock while it moves
    instants (Hudi's archiveIfRequired acquires it), so two archivers (a writer's post-commit one and `pyhudi
    services`) never archive the same instants; it checks first without the lock so nothing due costs no lock."""
    if not instants_to_archive(table, timeline, cfg):
        return []
    if cfg.get(C.CONCURRENCY_MODE) != "optimistic_concurrency_control":
        return _move_to_archive(table, timeline, cfg)
    with table_lock(table.storage, cfg.string_options()):
        return _move_to_archive(table, table.timeline(), cfg)


def _move_to_archive(table: HudiTable, timeline: Timeline, cfg: C.HoodieConfig) -> list[str]:
    selected = instants_to_archive(table, timeline, cfg)
    if not selected:
        return []
    storage = table.storage
    files = _state_files(storage, selected)
    records = [_entry(storage, instant) for instant in files]
    _write_archive_file(storage, records)
    # Pending-state files first, then completed ones oldest first, so no reader sees a hole or a false pending.
    for instant in sorted(files, key=lambda i: (i.is_completed, i.time)):
        storage.delete_file(f"{METAFOLDER}/{instant.file_name}")
    for instant in selected:
        storage.delete_dir(f"{TEMP_FOLDER}/{instant.time}")
    return sorted({i.time for i in selected})


def _comparable(action: str) -> str:
    return COMMIT if action == COMPACTION else action


def _state_files(storage: Storage, selected: list[Instant]) -> list[Instant]:
    """Every state file (requested/inflight/completed) of the selected instants, as raw timeline entries."""
    wanted = {(i.time, _comparable(i.action)) for i in selected}
    out = []
    for info in storage.list_files(METAFOLDER):
        instant = parse_instant_file_name(info.base_name)
        if instant is not None and (instant.time, _comparable(instant.action)) in wanted:
            if instant.action == COMPACTION and instant.is_completed:
                instant = Instant(instant.time, COMMIT)
            out.append(instant)
    return sorted(out)


def _entry(storage: Storage, instant: Instant) -> dict:
    """MetadataConversionUtils.createMetaWrapper for one instant file."""
    data = storage.read_bytes(f"{METAFOLDER}/{instant.file_name}")
    where = f"{storage.base_uri}/{METAFOLDER}/{instant.file_name}"
    entry = {"commitTime": instant.time, "actionState": instant.state.name, "actionType": instant.action,
             "version": 1}
    action = instant.action
    if action in (COMMIT, DELTA_COMMIT):
        entry["hoodieCommitMetadata"] = _commit_metadata(data, where)
    elif action == REPLACE_COMMIT:
        if instant.is_completed:
            meta = _commit_metadata(data, where)
            meta["partitionToReplaceFileIds"] = _json(data, where).get("partitionToReplaceFileIds") or {}
            entry["hoodieReplaceCommitMetadata"] = meta
        elif instant.state == State.INFLIGHT and data.strip():
            entry["HoodieInflightReplaceMetadata"] = _commit_metadata(data, where)
    elif action == CLEAN:
        if data:
            key = "hoodieCleanMetadata" if instant.is_completed else "hoodieCleanerPlan"
            entry[key] = avro.from_bytes(data, where)
    elif action == ROLLBACK:
        if instant.is_completed and data:
            entry["hoodieRollbackMetadata"] = avro.from_bytes(data, where)
    elif action == SAVEPOINT:
        if instant.is_completed and data:
            entry["hoodieSavePointMetadata"] = avro.from_bytes(data, where)
    elif action == COMPACTION:
        if data:
            entry["hoodieCompactionPlan"] = avro.from_bytes(data, where)
    return entry


def _json(data: bytes, where: str) -> dict:
    if not data.strip():
        return {}
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise CorruptFileError(f"timeline file {where} is not valid JSON ({exc}); it cannot be archived") from None


def _commit_metadata(data: bytes, where: str) -> dict:
    """JSON commit metadata as the Avro HoodieCommitMetadata (MetadataConversionUtils.convertCommitMetadata)."""
    meta = _json(data, where)
    stats = {partition: [{n: _stat_value(s.get(n), t) for n, t in _WRITE_STAT_FIELDS} for s in group]
             for partition, group in (meta.get("partitionToWriteStats") or {}).items()}
    extra = {k: str(v) for k, v in (meta.get("extraMetadata") or {}).items()}
    extra[ROLLING_STAT_METADATA_KEY] = ""
    operation = "COMPACT" if meta.get("compacted") else meta.get("operationType")
    return {"partitionToWriteStats": stats, "extraMetadata": extra, "version": 1, "operationType": operation}


def _stat_value(value, avro_type: str):
    if value is None:
        return None
    return int(value) if avro_type == "long" else str(value)


def _archive_files(storage: Storage) -> list[tuple[int, str]]:
    found = []
    for info in storage.list_files(ARCHIVED_FOLDER):
        match = _ARCHIVE_RE.match(info.base_name)
        if match:
            found.append((int(match.group(1)), info.base_name))
    return sorted(found)


def _write_archive_file(storage: Storage, records: list[dict]) -> str:
    """One AVRO_DATA block of HoodieArchivedMetaEntry records, in the next archive file version."""
    import fastavro

    parsed = fastavro.parse_schema(ARCHIVED_META_ENTRY_SCHEMA)
    payloads = []
    for record in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record)
        payloads.append(buf.getvalue())
    content = struct.pack(">ii", LOG_BLOCK_VERSION, len(payloads)) + b"".join(
        struct.pack(">i", len(p)) + p for p in payloads)
    block = LogBlock(BlockType.AVRO_DATA_BLOCK, {"SCHEMA": _ENTRY_SCHEMA_JSON}, {}, content=content)
    existing = _archive_files(storage)
    version = existing[-1][0] + 1 if existing else 1
    name = f"{ARCHIVE_FILE_PREFIX}{version}_{DEFAULT_WRITE_TOKEN}"
    storage.makedirs(ARCHIVED_FOLDER)
    write_log_file(storage.fs, storage.full(f"{ARCHIVED_FOLDER}/{name}"), [block])
    return name


def _decode_block(data: bytes, block: LogBlock, where: str) -> list[dict]:
    import fastavro

    start = block.offset + 6 + 8 + 4 + 4 + len(encode_metadata(block.header))
    (length,) = struct.unpack_from(">q", data, start)
    content = data[start + 8:start + 8 + length]
    try:
        schema = fastavro.parse_schema(json.loads(block.header["SCHEMA"]))
        version, count = struct.unpack_from(">ii", content, 0)
        pos, out = 8, []
        for _ in range(count):
            (size,) = struct.unpack_from(">i", content, pos)
            out.append(fastavro.schemaless_reader(io.BytesIO(content[pos + 4:pos + 4 + size]), schema, None))
            pos += 4 + size
        return out
    except Exception as exc:  # noqa: BLE001 - fastavro/struct raise many types for bad input
        raise CorruptFileError(f"archive file {where}: the block at offset {block.offset} cannot be decoded "
                               f"({exc}); restore it from a backup") from None


__all__ = ["archive", "archive_if_due", "archived_instants", "read_archived_entries", "instants_to_archive",
           "ARCHIVED_META_ENTRY_SCHEMA"]
