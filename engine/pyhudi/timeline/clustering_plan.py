"""Hudi's HoodieRequestedReplaceMetadata (`<t>.replacecommit.requested`, on timeline layout 2 a clustering's
`<t>.clustering.requested`) as typed values: operationType CLUSTER with a HoodieClusteringPlan of
HoodieClusteringGroups of HoodieSliceInfos. The one owner of their Avro schemas and field names; paths are kept as
Hudi stores them (full paths), services/clustering/plan.py turns them into names inside the table. An empty
requested file (an insert_overwrite's) has no record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pyhudi.timeline.avro_record import AvroRecord, encode_optional

_NS = "org.apache.hudi.avro.model"
CLUSTER_OPERATION = "CLUSTER"          # WriteOperationType.CLUSTER

# --- Avro schemas (hudi-common/src/main/avro, 0.14/0.15) ----------------------------------------------------
_STRING_MAP = ["null", {"type": "map", "values": "string"}]
SLICE_INFO_SCHEMA = {
    "type": "record", "name": "HoodieSliceInfo", "namespace": _NS,
    "fields": [
        {"name": "dataFilePath", "type": ["null", "string"], "default": None},
        {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
        {"name": "fileId", "type": ["null", "string"]},
        {"name": "partitionPath", "type": ["null", "string"], "default": None},
        {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
CLUSTERING_GROUP_SCHEMA = {
    "type": "record", "name": "HoodieClusteringGroup", "namespace": _NS,
    "fields": [
        {"name": "slices", "type": ["null", {"type": "array", "items": SLICE_INFO_SCHEMA}], "default": None},
        {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
        {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
CLUSTERING_STRATEGY_SCHEMA = {
    "type": "record", "name": "HoodieClusteringStrategy", "namespace": _NS,
    "fields": [
        {"name": "strategyClassName", "type": ["null", "string"], "default": None},
        {"name": "strategyParams", "type": _STRING_MAP, "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
CLUSTERING_PLAN_SCHEMA = {
    "type": "record", "name": "HoodieClusteringPlan", "namespace": _NS,
    "fields": [
        {"name": "inputGroups", "type": ["null", {"type": "array", "items": CLUSTERING_GROUP_SCHEMA}],
         "default": None},
        {"name": "strategy", "type": ["null", CLUSTERING_STRATEGY_SCHEMA], "default": None},
        {"name": "extraMetadata", "type": _STRING_MAP, "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "preserveHoodieMetadata", "type": ["null", "boolean"], "default": None},
    ],
}
REQUESTED_REPLACE_METADATA_SCHEMA = {
    "type": "record", "name": "HoodieRequestedReplaceMetadata", "namespace": _NS,
    "fields": [
        {"name": "operationType", "type": ["null", "string"], "default": None},
        {"name": "clusteringPlan", "type": ["null", CLUSTERING_PLAN_SCHEMA], "default": None},
        {"name": "extraMetadata", "type": _STRING_MAP, "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


@dataclass(frozen=True)
class SliceInfo(AvroRecord):
    """HoodieSliceInfo: one file slice a clustering group rewrites (paths as stored: full paths, "" for a slice
    without a base file)."""

    FIELDS = {"data_file_path": "dataFilePath", "delta_file_paths": "deltaFilePaths", "file_id": "fileId",
              "partition_path": "partitionPath", "bootstrap_file_path": "bootstrapFilePath", "version": "version"}
    data_file_path: str | None = None
    delta_file_paths: list[str] | None = None
    file_id: str | None = None
    partition_path: str | None = None
    bootstrap_file_path: str | None = None
    version: int | None = 1


@dataclass(frozen=True)
class ClusteringGroup(AvroRecord):
    """HoodieClusteringGroup: slices rewritten together into num_output_file_groups file groups."""

    FIELDS = {"slices": "slices", "metrics": "metrics", "num_output_file_groups": "numOutputFileGroups",
              "version": "version"}
    slices: tuple[SliceInfo, ...] | None = ()
    metrics: Mapping[str, float] | None = field(default_factory=dict)
    num_output_file_groups: int | None = 1
    version: int | None = 1

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "slices" and value is not None:
            return tuple(SliceInfo.from_avro(s) for s in value)
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "slices" and value is not None:
            return [s.to_avro() for s in value]
        return value


@dataclass(frozen=True)
class ClusteringStrategy(AvroRecord):
    """HoodieClusteringStrategy: the execution strategy class and its parameters (sort columns, ...)."""

    FIELDS = {"class_name": "strategyClassName", "params": "strategyParams", "version": "version"}
    class_name: str | None = None
    params: Mapping[str, str] | None = None
    version: int | None = 1


@dataclass(frozen=True)
class ClusteringPlan(AvroRecord):
    """HoodieClusteringPlan: the groups a clustering rewrites and how."""

    FIELDS = {"input_groups": "inputGroups", "strategy": "strategy", "extra_metadata": "extraMetadata",
              "version": "version", "preserve_hoodie_metadata": "preserveHoodieMetadata"}
    input_groups: tuple[ClusteringGroup, ...] | None = ()
    strategy: ClusteringStrategy | None = None
    extra_metadata: Mapping[str, str] | None = None
    version: int | None = 1
    preserve_hoodie_metadata: bool | None = None

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "input_groups" and value is not None:
            return tuple(ClusteringGroup.from_avro(g) for g in value)
        if attr == "strategy" and value is not None:
            return ClusteringStrategy.from_avro(value)
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "input_groups" and value is not None:
            return [g.to_avro() for g in value]
        if attr == "strategy":
            return encode_optional(value)
        return value


@dataclass(frozen=True)
class RequestedReplaceMetadata(AvroRecord):
    """What a requested replacecommit holds: a clustering's plan (operationType CLUSTER), or, for Java's
    insert_overwrite, an all-null record."""

    FIELDS = {"operation_type": "operationType", "clustering_plan": "clusteringPlan",
              "extra_metadata": "extraMetadata", "version": "version"}
    SCHEMA = REQUESTED_REPLACE_METADATA_SCHEMA
    operation_type: str | None = None
    clustering_plan: ClusteringPlan | None = None
    extra_metadata: Mapping[str, str] | None = None
    version: int | None = 1

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "clustering_plan" and value is not None:
            return ClusteringPlan.from_avro(value)
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "clustering_plan":
            return encode_optional(value)
        return value

    @property
    def is_clustering(self) -> bool:
        """A clustering's requested file (ClusteringUtils: operationType CLUSTER, or a plan at all)."""
        return self.operation_type == CLUSTER_OPERATION or self.clustering_plan is not None
