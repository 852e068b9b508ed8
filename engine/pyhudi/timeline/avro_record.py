"""Avro timeline metadata of Hudi's table services (hudi-common/src/main/avro, Hudi 0.14/0.15).

Clean, savepoint, rollback and restore instants (and compaction plans) hold one Avro record in an Avro data file
(container), as Hudi's TimelineMetadataUtils.serializeAvroMetadata writes them; fastavro writes and reads the same
bytes. Here in the timeline layer so that the typed instant metadata (timeline/clean_plan.py, rollback.py, ...)
and every action that writes or reads these instants share one schema.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, TypeVar

from pyhudi.errors import CorruptFileError

R = TypeVar("R", bound="AvroRecord")

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
        # the failed commit's log files a rollback leaves (full path -> size); Hudi 0.11+ names it so
        {"name": "logFilesFromFailedCommit", "type": ["null", {"type": "map", "values": "long"}], "default": None},
    ],
}


def _rollback_metadata_schema(instant_info: dict[str, Any]) -> dict[str, Any]:
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

# --- clean: HoodieCleanerPlan and HoodieCleanMetadata ------------------------------------------------------
ACTION_INSTANT = {"type": "record", "name": "HoodieActionInstant", "namespace": _NS,
                  "fields": [{"name": "timestamp", "type": "string"}, {"name": "action", "type": "string"},
                             {"name": "state", "type": "string"}]}
CLEANER_PLAN_SCHEMA = {
    "type": "record", "name": "HoodieCleanerPlan", "namespace": _NS,
    "fields": [
        {"name": "earliestInstantToRetain", "type": ["null", ACTION_INSTANT], "default": None},
        {"name": "policy", "type": "string"},
        {"name": "filesToBeDeletedPerPartition", "default": None,
         "type": ["null", {"type": "map", "values": {"type": "array", "items": "string"}}]},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "filePathsToBeDeletedPerPartition", "default": None, "type": ["null", {
            "type": "map", "values": {"type": "array", "items": {
                "type": "record", "name": "HoodieCleanFileInfo", "namespace": _NS,
                "fields": [{"name": "filePath", "type": ["null", "string"], "default": None},
                           {"name": "isBootstrapBaseFile", "type": ["null", "boolean"], "default": None}]}}}]},
        {"name": "partitionsToBeDeleted", "type": ["null", {"type": "array", "items": "string"}], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
    ],
}
CLEAN_PARTITION_METADATA = {
    "type": "record", "name": "HoodieCleanPartitionMetadata", "namespace": _NS,
    "fields": [
        {"name": "partitionPath", "type": "string"},
        {"name": "policy", "type": "string"},
        {"name": "deletePathPatterns", "type": {"type": "array", "items": "string"}},
        {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None},
    ],
}
CLEAN_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieCleanMetadata", "namespace": _NS,
    "fields": [
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "partitionMetadata", "type": {"type": "map", "values": CLEAN_PARTITION_METADATA}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "bootstrapPartitionMetadata", "type": ["null", {"type": "map",
                                                                 "values": "HoodieCleanPartitionMetadata"}],
         "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
    ],
}


# --- compaction: HoodieCompactionPlan (also archived with a compaction instant) ------------------------------
COMPACTION_PLAN_SCHEMA = {
    "type": "record", "name": "HoodieCompactionPlan", "namespace": _NS,
    "fields": [
        {"name": "operations", "default": None, "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieCompactionOperation", "namespace": _NS,
            "fields": [
                {"name": "baseInstantTime", "type": ["null", "string"]},
                {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
                {"name": "dataFilePath", "type": ["null", "string"], "default": None},
                {"name": "fileId", "type": ["null", "string"]},
                {"name": "partitionPath", "type": ["null", "string"], "default": None},
                {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
            ]}}]},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "strategy", "default": None, "type": ["null", {
            "type": "record", "name": "HoodieCompactionStrategy", "namespace": _NS,
            "fields": [
                {"name": "compactorClassName", "type": ["null", "string"], "default": None},
                {"name": "strategyParams", "type": ["null", {"type": "map", "values": "string"}], "default": None},
                {"name": "version", "type": ["int", "null"], "default": 1},
            ]}]},
        {"name": "preserveHoodieMetadata", "type": ["null", "boolean"], "default": None},
    ],
}


def to_bytes(schema: dict[str, Any], record: Mapping[str, Any]) -> bytes:
    """One record as an Avro data file (what Hudi stores in the instant file)."""
    import fastavro

    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), [record])
    return out.getvalue()


DEFAULT_FIX = "restore it from a backup or delete the instant"


def from_bytes(data: bytes, where: str, fix: str = DEFAULT_FIX) -> dict[str, Any]:
    """The single record of an Avro instant file; CorruptFileError naming `where` and the `fix` otherwise."""
    import fastavro

    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as exc:  # noqa: BLE001 - fastavro raises many types for bad input
        raise CorruptFileError(f"{where} is not an Avro instant file ({exc}); {fix}") from None
    if len(records) != 1:
        raise CorruptFileError(f"{where} holds {len(records)} records, expected 1; {fix}")
    if not isinstance(records[0], dict):
        raise CorruptFileError(f"{where} holds an Avro {type(records[0]).__name__}, not a record; {fix}")
    return records[0]


@dataclass(frozen=True)
class AvroRecord:
    """Base of the typed instant records (clean, rollback, savepoint, compaction and clustering plans): FIELDS maps
    each snake_case attribute to its field of Hudi's Avro schema, in schema order. A parsed record keeps the fields
    it has that are not modelled (`rest`, e.g. a newer Hudi's) and its field order (`keys`), so to_avro gives back
    the record it was read from (archival copies these records into its entries). Subclasses convert their nested
    records in _decode / _encode."""

    FIELDS: ClassVar[Mapping[str, str]] = {}
    SCHEMA: ClassVar[dict[str, Any]] = {}   # the Avro schema of a record stored as an instant file of its own
    rest: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False, kw_only=True)
    keys: tuple[str, ...] | None = field(default=None, compare=False, repr=False, kw_only=True)

    @classmethod
    def from_avro(cls: type[R], record: Mapping[str, Any]) -> R:
        names = {key: attr for attr, key in cls.FIELDS.items()}
        known = {names[k]: cls._decode(names[k], v) for k, v in record.items() if k in names}
        return cls(**known, rest={k: v for k, v in record.items() if k not in names}, keys=tuple(record))

    def to_avro(self) -> dict[str, Any]:
        """The Avro record (a dict fastavro writes): a parsed one's fields in their order, a new one's in schema
        order followed by `rest`."""
        values = {key: self._encode(attr, getattr(self, attr)) for attr, key in self.FIELDS.items()}
        if self.keys is not None:
            return {k: values[k] if k in values else self.rest[k] for k in self.keys}
        return {**values, **self.rest}

    @classmethod
    def from_bytes(cls: type[R], data: bytes, where: str, fix: str = DEFAULT_FIX) -> R:
        """The record of an instant file (an Avro data file); CorruptFileError naming `where` and the `fix`."""
        return cls.from_avro(from_bytes(data, where, fix))

    def to_bytes(self) -> bytes:
        """The instant file, as Hudi writes it (an Avro data file of SCHEMA)."""
        return to_bytes(self.SCHEMA, self.to_avro())

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        return value


def encode_optional(value: AvroRecord | None) -> dict[str, Any] | None:
    """A nested optional record's Avro value."""
    return value.to_avro() if value is not None else None
