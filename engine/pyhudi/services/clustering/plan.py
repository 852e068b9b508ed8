"""Clustering plans, as Hudi 0.14/0.15 writes them: Hudi's clustering keys, the Avro records of
`<t>.replacecommit.requested` (HoodieRequestedReplaceMetadata, operationType CLUSTER, holding a
HoodieClusteringPlan of HoodieClusteringGroups of HoodieSliceInfos), readers of pending and completed clusterings,
and the update strategy for file groups under a pending clustering. The plan strategy (which slices a plan takes)
is clustering_strategy.py. Driver only, metadata only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pyhudi.timeline import clustering_plan as records
from pyhudi.timeline.clustering_plan import CLUSTER_OPERATION  # noqa: F401 - re-exported
from pyhudi import config as C
from pyhudi.errors import TimelineError
from pyhudi.storage import Storage
from pyhudi.timeline import CLUSTERING, REPLACE_COMMIT, Instant, State, Timeline, instant_file, timeline_layout

PLAN_VERSION = 1                       # ClusteringPlanStrategy.CLUSTERING_PLAN_VERSION_1

# --- Hudi's keys (HoodieClusteringConfig), declared once in config/clustering.py ---------------------------------
SMALL_FILE_LIMIT = C.CLUSTERING_SMALL_FILE_LIMIT.key
MAX_BYTES_PER_GROUP = C.CLUSTERING_MAX_BYTES_PER_GROUP.key
MAX_NUM_GROUPS = C.CLUSTERING_MAX_NUM_GROUPS.key
TARGET_FILE_MAX_BYTES = C.CLUSTERING_TARGET_FILE_MAX_BYTES.key
SORT_COLUMNS = C.CLUSTERING_SORT_COLUMNS.key
SINGLE_GROUP = C.CLUSTERING_SINGLE_GROUP.key
PARTITION_REGEX = C.CLUSTERING_PARTITION_REGEX.key
PARTITION_SELECTED = C.CLUSTERING_PARTITION_SELECTED.key
LOOKBACK_PARTITIONS = C.CLUSTERING_LOOKBACK_PARTITIONS.key
SKIP_FROM_LATEST = C.CLUSTERING_SKIP_FROM_LATEST.key
BEGIN_PARTITION = C.CLUSTERING_BEGIN_PARTITION.key
END_PARTITION = C.CLUSTERING_END_PARTITION.key
PLAN_STRATEGY_CLASS = C.CLUSTERING_PLAN_STRATEGY_CLASS.key
EXECUTION_STRATEGY_CLASS = C.CLUSTERING_EXECUTION_STRATEGY_CLASS.key
FILTER_MODE = C.CLUSTERING_FILTER_MODE.key
INLINE = C.CLUSTERING_INLINE.key
INLINE_MAX_COMMITS = C.CLUSTERING_INLINE_MAX_COMMITS.key
SCHEDULE_INLINE = C.CLUSTERING_SCHEDULE_INLINE.key
ASYNC_ENABLED = C.CLUSTERING_ASYNC_ENABLED.key
ASYNC_MAX_COMMITS = C.CLUSTERING_ASYNC_MAX_COMMITS.key
UPDATES_STRATEGY = C.CLUSTERING_UPDATES_STRATEGY.key
PRESERVE_METADATA = C.CLUSTERING_PRESERVE_METADATA.key
LAYOUT_STRATEGY = C.LAYOUT_OPTIMIZE_STRATEGY.key

SIZE_BASED_PLAN_STRATEGY = C.CLUSTERING_PLAN_STRATEGY_CLASS.default
SORT_AND_SIZE_EXECUTION = C.CLUSTERING_EXECUTION_STRATEGY_CLASS.default
REJECT_UPDATES = C.CLUSTERING_UPDATES_STRATEGY.default
ALLOW_UPDATES = "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"
FILTER_MODES = ("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING")
LAYOUT_STRATEGIES = ("linear", "z-order", "hilbert")

# Metric names of FileSliceMetricUtils (as in compaction plans).
TOTAL_IO_READ_MB, TOTAL_IO_WRITE_MB, TOTAL_IO_MB = "TOTAL_IO_READ_MB", "TOTAL_IO_WRITE_MB", "TOTAL_IO_MB"
TOTAL_LOG_FILES_SIZE, TOTAL_LOG_FILES = "TOTAL_LOG_FILES_SIZE", "TOTAL_LOG_FILES"

# --- the plan --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SliceInfo:
    """One file slice of a clustering group (HoodieSliceInfo): names relative to the partition folder."""

    partition_path: str
    file_id: str
    data_file: str | None
    delta_files: tuple[str, ...] = ()

    def relative(self, name: str) -> str:
        return f"{self.partition_path}/{name}" if self.partition_path else name

    def to_record(self, storage: Storage) -> records.SliceInfo:
        # Hudi stores full paths (BaseFile.getPath / HoodieLogFile.getPath) and "" for a slice without a base file.
        return records.SliceInfo(storage.uri(self.relative(self.data_file)) if self.data_file else "",
                                 [storage.uri(self.relative(n)) for n in self.delta_files], self.file_id,
                                 self.partition_path, None, 1)

    @classmethod
    def of_record(cls, record: records.SliceInfo, storage: Storage, source: str) -> "SliceInfo":
        partition = record.partition_path or ""
        if partition:
            storage.inside(partition, source)

        def name(path: str) -> str:   # a path outside the table is corrupt: never follow it
            relative = storage.inside(path if "/" in path else (f"{partition}/{path}" if partition else path),
                                      source)
            return relative.rsplit("/", 1)[-1]

        data = record.data_file_path or ""
        if record.file_id is None:
            raise TimelineError(f"{source} names a file slice without a file id; the clustering plan is corrupt: "
                                "remove the pending clustering and schedule again")
        return cls(partition, record.file_id, name(data) if data else None,
                   tuple(name(p) for p in record.delta_file_paths or []))


@dataclass
class ClusteringGroup:
    slices: list[SliceInfo]
    num_output_file_groups: int = 1
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def partition_path(self) -> str:
        return self.slices[0].partition_path if self.slices else ""


@dataclass
class ClusteringPlan:
    groups: list[ClusteringGroup]
    strategy_class: str = SORT_AND_SIZE_EXECUTION
    strategy_params: dict[str, str] = field(default_factory=dict)
    extra_metadata: dict[str, str] = field(default_factory=dict)
    preserve_metadata: bool = True
    version: int = PLAN_VERSION

    @property
    def sort_columns(self) -> list[str]:
        return [c.strip() for c in (self.strategy_params.get(SORT_COLUMNS) or "").split(",") if c.strip()]

    @property
    def file_groups(self) -> set[tuple[str, str]]:
        return {(s.partition_path, s.file_id) for g in self.groups for s in g.slices}

    @property
    def partitions(self) -> list[str]:
        """The partitions the plan reads, in plan order (HoodieCLIUtils.extractPartitions)."""
        out: list[str] = []
        for group in self.groups:
            for s in group.slices:
                if s.partition_path not in out:
                    out.append(s.partition_path)
        return out

    def to_bytes(self, storage: Storage) -> bytes:
        """HoodieRequestedReplaceMetadata (operationType CLUSTER) as an Avro data file, as Hudi's
        TimelineMetadataUtils.serializeRequestedReplaceMetadata writes `<t>.replacecommit.requested`."""
        groups = tuple(records.ClusteringGroup(tuple(s.to_record(storage) for s in g.slices), dict(g.metrics),
                                               g.num_output_file_groups, 1) for g in self.groups)
        plan = records.ClusteringPlan(groups, records.ClusteringStrategy(self.strategy_class,
                                                                         dict(self.strategy_params), 1),
                                      dict(self.extra_metadata), self.version, self.preserve_metadata)
        return records.RequestedReplaceMetadata(CLUSTER_OPERATION, plan, {}, 1).to_bytes()

    @classmethod
    def from_record(cls, record: records.RequestedReplaceMetadata, storage: Storage, source: str) -> "ClusteringPlan":
        plan = record.clustering_plan or records.ClusteringPlan()
        strategy = plan.strategy or records.ClusteringStrategy()
        groups = [ClusteringGroup([SliceInfo.of_record(s, storage, source) for s in g.slices or ()],
                                  int(g.num_output_file_groups or 1), dict(g.metrics or {}))
                  for g in plan.input_groups or ()]
        return cls(groups, strategy.class_name or SORT_AND_SIZE_EXECUTION, dict(strategy.params or {}),
                   dict(plan.extra_metadata or {}), plan.preserve_hoodie_metadata is not False,
                   int(plan.version or 1))


def clustering_action(storage: Storage) -> str:
    """The action a clustering is pending as: `replacecommit` (layout 1), `clustering` (layout 2, Hudi 1.x; it
    completes as a replacecommit)."""
    return CLUSTERING if timeline_layout(storage).version == 2 else REPLACE_COMMIT


def requested_file(storage: Storage, instant_time: str) -> str:
    """The requested file of replacecommit or clustering `instant_time` (on layout 2 a clustering's, if there is
    one: an insert_overwrite there is a replacecommit)."""
    if clustering_action(storage) == CLUSTERING:
        clustering = instant_file(storage, Instant(instant_time, CLUSTERING, State.REQUESTED))
        if storage.exists(clustering):
            return clustering
    return instant_file(storage, Instant(instant_time, REPLACE_COMMIT, State.REQUESTED))


def read_requested_record(storage: Storage, instant_time: str) -> records.RequestedReplaceMetadata | None:
    """The HoodieRequestedReplaceMetadata of replacecommit `instant_time`; None when the requested file is gone
    (archived) or empty (pyhudi's insert_overwrite/delete_partition write an empty one)."""
    name = requested_file(storage, instant_time)
    if not storage.exists(name):
        return None
    data = storage.read_bytes(name)
    if not data:
        return None
    return records.RequestedReplaceMetadata.from_bytes(
        data, f"{storage.base_uri}/{name}", "remove the pending clustering (delete the replacecommit's requested "
        "file) and schedule again")


def read_clustering_plan(storage: Storage, instant_time: str) -> ClusteringPlan | None:
    """The clustering plan of replacecommit `instant_time`, or None when that replacecommit is not a clustering
    (ClusteringUtils.getClusteringPlan)."""
    record = read_requested_record(storage, instant_time)
    if record is None or not record.is_clustering:
        return None
    return ClusteringPlan.from_record(record, storage, f"{storage.base_uri}/{requested_file(storage, instant_time)}")


def clustering_instants(storage: Storage, timeline: Timeline) -> list[Instant]:
    """Replacecommits (and layout 2's clustering instants) of the timeline that are clusterings (any state),
    oldest first."""
    out = []
    for instant in timeline.instants:
        if instant.action in (REPLACE_COMMIT, CLUSTERING):
            record = read_requested_record(storage, instant.time)
            if record is not None and record.is_clustering:
                out.append(instant)
    return out


def check_update_allowed(pending: Mapping[tuple[str, str], str], partition: str, file_id: str,
                         table_name: str, strategy: str = REJECT_UPDATES) -> None:
    """SparkRejectUpdateStrategy: an update or delete of a file group under pending clustering is refused
    (HoodieClusteringUpdateException); SparkAllowUpdateStrategy lets it through (the clustering then fails its
    commit check and is removed). Raises WriteConflictError, which survives the trip from an executor."""
    from pyhudi.errors import WriteConflictError
    instant = pending.get((partition, file_id))
    if instant is None or strategy.rsplit(".", 1)[-1] == ALLOW_UPDATES.rsplit(".", 1)[-1]:
        return
    raise WriteConflictError(
        f"Not allowed to update the clustering file group {partition}/{file_id} of table {table_name}: clustering "
        f"{instant} is pending on it. Run it first (CALL run_clustering(op => 'execute', ...) or "
        f"pyhudi.cluster(spark, path, op='execute')), or set {UPDATES_STRATEGY}={ALLOW_UPDATES}")


def require_plan(storage: Storage, instant_time: str, where: str) -> ClusteringPlan:
    plan = read_clustering_plan(storage, instant_time)
    if plan is None:
        raise TimelineError(f"replacecommit {instant_time} of {where} holds no clustering plan")
    return plan
