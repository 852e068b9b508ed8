"""Commit metadata as timeline layout 2 stores it (Hudi 1.x): one HoodieCommitMetadata record (a replacecommit:
HoodieReplaceCommitMetadata) in an Avro data file, in the inflight and completed files of commit, deltacommit and
replacecommit instants.

The schemas are Hudi's (hudi-common/src/main/avro HoodieCommitMetadata.avsc, HoodieWriteStat, HoodieRuntimeStats),
written down from the files Hudi 1.0/1.1 writes: field names, order, unions and defaults must match for Java's
SpecificDatumReader, so they are hand-written here. The field names are the JSON of layout 1, so one dict shape
serves both layouts (timeline/commit_metadata.py reads either).
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Any

_NS = "org.apache.hudi.avro.model"


def _optional(kind: Any) -> dict[str, Any]:
    return {"type": ["null", kind], "default": None}


_LONG_STATS = ("numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes", "totalWriteErrors")
_LOG_STATS = ("totalLogRecords", "totalLogFiles", "totalUpdatedRecordsCompacted", "numInserts", "totalLogBlocks",
              "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes")

WRITE_STAT = {
    "type": "record", "name": "HoodieWriteStat", "namespace": _NS,
    "fields": [
        {"name": "fileId", **_optional("string")},
        {"name": "path", **_optional("string")},
        {"name": "prevCommit", **_optional("string")},
        *({"name": name, **_optional("long")} for name in _LONG_STATS),
        {"name": "partitionPath", **_optional("string")},
        *({"name": name, **_optional("long")} for name in _LOG_STATS),
        {"name": "logVersion", **_optional("int")},
        {"name": "logOffset", **_optional("long")},
        {"name": "baseFile", **_optional("string")},
        {"name": "logFiles", **_optional({"type": "array", "items": "string"})},
        {"name": "cdcStats", **_optional({"type": "map", "values": "long"})},
        {"name": "prevBaseFile", **_optional("string")},
        {"name": "minEventTime", **_optional("long")},
        {"name": "maxEventTime", **_optional("long")},
        {"name": "runtimeStats", **_optional({
            "type": "record", "name": "HoodieRuntimeStats", "namespace": _NS,
            "fields": [{"name": name, **_optional("long")}
                       for name in ("totalScanTime", "totalCreateTime", "totalUpsertTime")]})},
        {"name": "totalLogFilesCompacted", **_optional("long")},
        {"name": "totalLogReadTimeMs", **_optional("long")},
        {"name": "totalLogSizeCompacted", **_optional("long")},
        {"name": "tempPath", **_optional("string")},
        {"name": "numUpdates", **_optional("long")},
    ],
}


def _commit_schema(name: str, replace: bool) -> dict[str, Any]:
    fields: list[dict[str, Any]] = [
        {"name": "partitionToWriteStats", **_optional({"type": "map", "values": {"type": "array", "items": WRITE_STAT}})},
        {"name": "compacted", **_optional("boolean")},
        {"name": "extraMetadata", **_optional({"type": "map", "values": "string"})},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", **_optional("string")},
    ]
    if replace:
        fields.append({"name": "partitionToReplaceFileIds",
                       **_optional({"type": "map", "values": {"type": "array", "items": "string"}})})
    return {"type": "record", "name": name, "namespace": _NS, "fields": fields}


COMMIT_METADATA = _commit_schema("HoodieCommitMetadata", replace=False)
REPLACE_COMMIT_METADATA = _commit_schema("HoodieReplaceCommitMetadata", replace=True)


@lru_cache(maxsize=None)
def _parsed(replace: bool) -> Any:
    import fastavro

    return fastavro.parse_schema(REPLACE_COMMIT_METADATA if replace else COMMIT_METADATA)


def commit_metadata_avro_bytes(metadata: dict[str, Any], replace: bool) -> bytes:
    """The commit metadata dict (layout 1's JSON shape) as layout 2's Avro data file. Write stats' numbers are
    longs, `version` is left null as Hudi 1.x leaves it; keys the schema does not name are not stored, absent
    ones are null."""
    import fastavro

    record = dict(metadata)
    record["version"] = None
    record["extraMetadata"] = {str(k): str(v) for k, v in (record.get("extraMetadata") or {}).items()}
    out = io.BytesIO()
    fastavro.writer(out, _parsed(replace), [record])
    return out.getvalue()

