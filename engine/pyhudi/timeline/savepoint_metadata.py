"""Hudi's HoodieSavepointMetadata (a completed savepoint, `<t>.savepoint`) as a typed value: the data files it
pins per partition, which the cleaner keeps and a restore returns to. The one owner of its Avro field names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pyhudi.timeline.avro_record import SAVEPOINT_METADATA, AvroRecord

SAVEPOINT_METADATA_VERSION = 1


@dataclass(frozen=True)
class SavepointPartitionMetadata(AvroRecord):
    """HoodieSavepointPartitionMetadata: the data files (names) a savepoint pins in one partition."""

    FIELDS = {"partition_path": "partitionPath", "data_files": "savepointDataFile"}
    partition_path: str = ""
    data_files: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SavepointMetadata(AvroRecord):
    """A savepoint: who took it, when (epoch seconds), and the files it pins per partition."""

    FIELDS = {"savepointed_by": "savepointedBy", "savepointed_at": "savepointedAt", "comments": "comments",
              "partition_metadata": "partitionMetadata", "version": "version"}
    SCHEMA = SAVEPOINT_METADATA
    savepointed_by: str = ""
    savepointed_at: int = 0
    comments: str = ""
    partition_metadata: Mapping[str, SavepointPartitionMetadata] = field(default_factory=dict)
    version: int | None = SAVEPOINT_METADATA_VERSION

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "partition_metadata" and value is not None:
            return {p: SavepointPartitionMetadata.from_avro(m) for p, m in value.items()}
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "partition_metadata" and value is not None:
            return {p: m.to_avro() for p, m in value.items()}
        return value
