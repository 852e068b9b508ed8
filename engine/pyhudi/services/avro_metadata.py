"""Avro timeline metadata of Hudi's table services (hudi-common/src/main/avro, Hudi 0.14/0.15).

Savepoint, rollback and restore instants hold one Avro record in an Avro data file (container), as Hudi's
TimelineMetadataUtils.serializeAvroMetadata writes them; fastavro writes and reads the same bytes.
"""

from __future__ import annotations

import io

from pyhudi.errors import CorruptFileError

_NS = "org.apache.hudi.avro.model"

INSTANT_INFO = {"type": "record", "name": "HoodieInstantInfo", "namespace": _NS,
                "fields": [{"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}]}

SAVEPOINT_METADATA = {
    "type": "record", "name": "HoodieSavepointMetadata", "namespace": _NS,
    "fields": [
        {"name": "savepointedBy", "type": "string"},
        {"name": "savepointedAt", "type": "long"},
        {"name": "comments", "type": "string"},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieSavepointPartitionMetadata", "namespace": _NS,
            "fields": [{"name": "partitionPath", "type": "string"},
                       {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}}]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

_ROLLBACK_PARTITION = {
    "type": "record", "name": "HoodieRollbackPartitionMetadata", "namespace": _NS,
    "fields": [
        {"name": "partitionPath", "type": "string"},
        {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "rollbackLogFiles", "type": ["null", {"type": "map", "values": "long"}], "default": None},
        {"name": "writtenLogFiles", "type": ["null", {"type": "map", "values": "long"}], "default": None},
    ],
}


def _rollback_metadata_schema(instant_info) -> dict:
    return {
        "type": "record", "name": "HoodieRollbackMetadata", "namespace": _NS,
        "fields": [
            {"name": "startRollbackTime", "type": "string"},
            {"name": "timeTakenInMillis", "type": "long"},
            {"name": "totalFilesDeleted", "type": "int"},
            {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
            {"name": "partitionMetadata", "type": {"type": "map", "values": _ROLLBACK_PARTITION}},
            {"name": "version", "type": ["int", "null"], "default": 1},
            {"name": "instantsRollback", "default": [], "type": {"type": "array", "items": instant_info}},
        ],
    }


ROLLBACK_METADATA = _rollback_metadata_schema(INSTANT_INFO)

ROLLBACK_PLAN = {
    "type": "record", "name": "HoodieRollbackPlan", "namespace": _NS,
    "fields": [
        {"name": "instantToRollback", "type": ["null", INSTANT_INFO], "default": None},
        {"name": "RollbackRequests", "default": None, "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieRollbackRequest", "namespace": _NS,
            "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "fileId", "type": ["null", "string"], "default": None},
                {"name": "latestBaseInstant", "type": ["null", "string"], "default": None},
                {"name": "filesToBeDeleted", "default": [], "type": {"type": "array", "items": "string"}},
                {"name": "logBlocksToBeDeleted", "type": ["null", {"type": "map", "values": "long"}],
                 "default": None},
            ]}}]},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

RESTORE_PLAN = {
    "type": "record", "name": "HoodieRestorePlan", "namespace": _NS,
    "fields": [
        {"name": "instantsToRollback", "default": [], "type": {"type": "array", "items": INSTANT_INFO}},
        {"name": "version", "type": ["int", "null"], "default": 2},
        {"name": "savepointToRestoreTimestamp", "type": ["string", "null"], "default": None},
    ],
}

RESTORE_METADATA = {
    "type": "record", "name": "HoodieRestoreMetadata", "namespace": _NS,
    "fields": [
        {"name": "startRestoreTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "instantsToRollback", "type": {"type": "array", "items": "string"}},
        {"name": "hoodieRestoreMetadata", "type": {"type": "map", "values": {
            "type": "array", "items": ["null", _rollback_metadata_schema(INSTANT_INFO)]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "restoreInstantInfo", "default": [], "type": {"type": "array", "items": f"{_NS}.HoodieInstantInfo"}},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
    ],
}

def to_bytes(schema: dict, record: dict) -> bytes:
    """One record as an Avro data file (what Hudi stores in the instant file)."""
    import fastavro

    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [record])
    return out.getvalue()


def from_bytes(data: bytes, where: str, fix: str = "restore it from a backup or delete the instant") -> dict:
    """The single record of an Avro instant file; CorruptFileError naming `where` and the `fix` otherwise."""
    import fastavro

    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as exc:  # noqa: BLE001 - fastavro raises many types for bad input
        raise CorruptFileError(f"{where} is not an Avro instant file ({exc}); {fix}") from None
    if len(records) != 1:
        raise CorruptFileError(f"{where} holds {len(records)} records, expected 1; {fix}")
    return records[0]
