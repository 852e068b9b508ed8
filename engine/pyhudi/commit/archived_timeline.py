"""The archived timeline's files (Hudi 0.x, before the LSM timeline): ``.hoodie/archived/.commits_.archive.<N>_<token>``
log files of AVRO_DATA blocks holding HoodieArchivedMetaEntry records, one per instant file. This module owns the
format (the entry schema, converting an instant file to an entry as MetadataConversionUtils does, writing the next
file version, reading entries back); services/archive.py decides what to archive.

Known deviation: ``hoodieRequestedReplaceMetadata`` and ``hoodieIndexCommitMetadata`` are declared as always-null
fields (pyhudi writes neither clustering plans nor indexes); Avro schema resolution still reads them with Hudi's
entry schema.
"""

from __future__ import annotations

import io
import json
import re
import struct

from pyhudi.errors import CorruptFileError
from pyhudi.file_group.log_block import LOG_BLOCK_VERSION, BlockType, LogBlock, encode_metadata
from pyhudi.file_group.log_file import DEFAULT_WRITE_TOKEN, read_log_bytes, write_log_file
from pyhudi.timeline import avro_record as avro
from pyhudi.timeline.avro_record import CLEAN_METADATA_SCHEMA, CLEANER_PLAN_SCHEMA, COMPACTION_PLAN_SCHEMA
from pyhudi.storage import Storage
from pyhudi.timeline import (ARCHIVED_FOLDER, CLEAN, COMMIT, COMPACTION, DELTA_COMMIT, METAFOLDER, REPLACE_COMMIT,
                             ROLLBACK, SAVEPOINT, Instant, State)

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
    for _, name in archive_files(storage):
        relative = f"{ARCHIVED_FOLDER}/{name}"
        data = storage.read_bytes(relative)
        for block in read_log_bytes(data, relative, decode=False):
            if block.block_type == BlockType.AVRO_DATA_BLOCK:
                records += _decode_block(data, block, f"{storage.base_uri}/{relative}")
    return records


def archive_entry(storage: Storage, instant: Instant, transition_time: str | None = None) -> dict:
    """MetadataConversionUtils.createMetaWrapper for one instant file (`transition_time`: its state transition
    time, when known)."""
    data = storage.read_bytes(f"{METAFOLDER}/{instant.file_name}")
    where = f"{storage.base_uri}/{METAFOLDER}/{instant.file_name}"
    entry = {"commitTime": instant.time, "actionState": instant.state.name, "actionType": instant.action,
             "version": 1, "stateTransitionTime": transition_time}
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


def archive_files(storage: Storage) -> list[tuple[int, str]]:
    found = []
    for info in storage.list_files(ARCHIVED_FOLDER):
        match = _ARCHIVE_RE.match(info.base_name)
        if match:
            found.append((int(match.group(1)), info.base_name))
    return sorted(found)


def write_archive_file(storage: Storage, records: list[dict]) -> str:
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
    existing = archive_files(storage)
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


__all__ = ["ARCHIVED_META_ENTRY_SCHEMA", "COMMIT_METADATA_SCHEMA", "archive_entry", "archive_files", "archived_instants",
           "read_archived_entries", "write_archive_file"]
