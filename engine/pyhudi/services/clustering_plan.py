"""Clustering plans, as Hudi 0.14/0.15 writes them: the options that shape a plan, the Avro records of
`<t>.replacecommit.requested` (HoodieRequestedReplaceMetadata, operationType CLUSTER, holding a
HoodieClusteringPlan of HoodieClusteringGroups of HoodieSliceInfos), and the size-based plan strategy
(SparkSizeBasedClusteringPlanStrategy on PartitionAwareClusteringPlanStrategy). Driver only, metadata only.

Which file slices a plan takes: the latest slice of every file group whose base file is smaller than
``hoodie.clustering.plan.strategy.small.file.limit`` (a log-only slice counts as 0 bytes), outside pending
compactions and pending clusterings, in the partitions the filters keep (``...partition.selected``, else
``...partition.regex.pattern``, then ``hoodie.clustering.plan.partition.filter.mode``). Per partition, slices are
taken largest first into groups of at most ``...max.bytes.per.group`` bytes (a slice without a base file counts
as ``hoodie.parquet.max.file.size``); each group writes ceil(size / ``...target.file.max.bytes``) file groups; a
partition's last group of one slice is kept only when sort columns are set or
``...single.group.clustering.enabled`` (default true); at most ``...max.num.groups`` groups in all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Mapping

from pyhudi import config as C
from pyhudi.actions import avro_metadata as avro
from pyhudi.errors import ConfigError, TimelineError
from pyhudi.file_group.model import FileSlice, LogFile
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.timeline import METAFOLDER, REPLACE_COMMIT, Instant, State, Timeline

_NS = "org.apache.hudi.avro.model"
CLUSTER_OPERATION = "CLUSTER"          # WriteOperationType.CLUSTER
PLAN_VERSION = 1                       # ClusteringPlanStrategy.CLUSTERING_PLAN_VERSION_1

# --- Hudi's keys and defaults (HoodieClusteringConfig) -----------------------------------------------------
_P = "hoodie.clustering.plan.strategy."
SMALL_FILE_LIMIT = _P + "small.file.limit"
MAX_BYTES_PER_GROUP = _P + "max.bytes.per.group"
MAX_NUM_GROUPS = _P + "max.num.groups"
TARGET_FILE_MAX_BYTES = _P + "target.file.max.bytes"
SORT_COLUMNS = _P + "sort.columns"
SINGLE_GROUP = _P + "single.group.clustering.enabled"
PARTITION_REGEX = _P + "partition.regex.pattern"
PARTITION_SELECTED = _P + "partition.selected"
LOOKBACK_PARTITIONS = _P + "daybased.lookback.partitions"
SKIP_FROM_LATEST = _P + "daybased.skipfromlatest.partitions"
BEGIN_PARTITION = _P + "cluster.begin.partition"
END_PARTITION = _P + "cluster.end.partition"
PLAN_STRATEGY_CLASS = "hoodie.clustering.plan.strategy.class"
EXECUTION_STRATEGY_CLASS = "hoodie.clustering.execution.strategy.class"
FILTER_MODE = "hoodie.clustering.plan.partition.filter.mode"
INLINE = "hoodie.clustering.inline"
INLINE_MAX_COMMITS = "hoodie.clustering.inline.max.commits"
SCHEDULE_INLINE = "hoodie.clustering.schedule.inline"
ASYNC_ENABLED = "hoodie.clustering.async.enabled"
ASYNC_MAX_COMMITS = "hoodie.clustering.async.max.commits"
UPDATES_STRATEGY = "hoodie.clustering.updates.strategy"
PRESERVE_METADATA = "hoodie.clustering.preserve.commit.metadata"
LAYOUT_STRATEGY = "hoodie.layout.optimize.strategy"

SIZE_BASED_PLAN_STRATEGY = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
SORT_AND_SIZE_EXECUTION = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
REJECT_UPDATES = "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy"
ALLOW_UPDATES = "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"
FILTER_MODES = ("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING")
LAYOUT_STRATEGIES = ("linear", "z-order", "hilbert")

# Metric names of FileSliceMetricUtils (as in compaction plans).
TOTAL_IO_READ_MB, TOTAL_IO_WRITE_MB, TOTAL_IO_MB = "TOTAL_IO_READ_MB", "TOTAL_IO_WRITE_MB", "TOTAL_IO_MB"
TOTAL_LOG_FILES_SIZE, TOTAL_LOG_FILES = "TOTAL_LOG_FILES_SIZE", "TOTAL_LOG_FILES"
_MB = 1024 * 1024

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

    def to_avro(self, storage: Storage) -> dict:
        # Hudi stores full paths (BaseFile.getPath / HoodieLogFile.getPath) and "" for a slice without a base file.
        return {"dataFilePath": storage.uri(self.relative(self.data_file)) if self.data_file else "",
                "deltaFilePaths": [storage.uri(self.relative(n)) for n in self.delta_files],
                "fileId": self.file_id, "partitionPath": self.partition_path, "bootstrapFilePath": None,
                "version": 1}

    @classmethod
    def from_avro(cls, record: dict, storage: Storage, source: str) -> "SliceInfo":
        partition = record.get("partitionPath") or ""
        if partition:
            storage.inside(partition, source)

        def name(path: str) -> str:   # a path outside the table is corrupt: never follow it
            relative = storage.inside(path if "/" in path else (f"{partition}/{path}" if partition else path),
                                      source)
            return relative.rsplit("/", 1)[-1]

        data = record.get("dataFilePath") or ""
        return cls(partition, record["fileId"], name(data) if data else None,
                   tuple(name(p) for p in record.get("deltaFilePaths") or []))


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
        plan = {"inputGroups": [{"slices": [s.to_avro(storage) for s in g.slices], "metrics": dict(g.metrics),
                                 "numOutputFileGroups": g.num_output_file_groups, "version": 1}
                                for g in self.groups],
                "strategy": {"strategyClassName": self.strategy_class, "strategyParams": dict(self.strategy_params),
                             "version": 1},
                "extraMetadata": dict(self.extra_metadata), "version": self.version,
                "preserveHoodieMetadata": self.preserve_metadata}
        record = {"operationType": CLUSTER_OPERATION, "clusteringPlan": plan, "extraMetadata": {}, "version": 1}
        return avro.to_bytes(REQUESTED_REPLACE_METADATA_SCHEMA, record)

    @classmethod
    def from_record(cls, record: dict, storage: Storage, source: str) -> "ClusteringPlan":
        plan = record.get("clusteringPlan") or {}
        strategy = plan.get("strategy") or {}
        groups = [ClusteringGroup([SliceInfo.from_avro(s, storage, source) for s in g.get("slices") or []],
                                  int(g.get("numOutputFileGroups") or 1), dict(g.get("metrics") or {}))
                  for g in plan.get("inputGroups") or []]
        return cls(groups, strategy.get("strategyClassName") or SORT_AND_SIZE_EXECUTION,
                   dict(strategy.get("strategyParams") or {}), dict(plan.get("extraMetadata") or {}),
                   plan.get("preserveHoodieMetadata") is not False, int(plan.get("version") or 1))


def requested_file(instant_time: str) -> str:
    return f"{METAFOLDER}/{Instant(instant_time, REPLACE_COMMIT, State.REQUESTED).file_name}"


def read_requested_record(storage: Storage, instant_time: str) -> dict | None:
    """The HoodieRequestedReplaceMetadata of replacecommit `instant_time`; None when the requested file is gone
    (archived) or empty (pyhudi's insert_overwrite/delete_partition write an empty one)."""
    name = requested_file(instant_time)
    if not storage.exists(name):
        return None
    data = storage.read_bytes(name)
    if not data:
        return None
    return avro.from_bytes(data, f"{storage.base_uri}/{name}", "remove the pending clustering (delete the "
                           "replacecommit's requested file) and schedule again")


def read_clustering_plan(storage: Storage, instant_time: str) -> ClusteringPlan | None:
    """The clustering plan of replacecommit `instant_time`, or None when that replacecommit is not a clustering
    (ClusteringUtils.getClusteringPlan)."""
    record = read_requested_record(storage, instant_time)
    if record is None or record.get("operationType") != CLUSTER_OPERATION and not record.get("clusteringPlan"):
        return None
    return ClusteringPlan.from_record(record, storage, f"{storage.base_uri}/{requested_file(instant_time)}")


def clustering_instants(storage: Storage, timeline: Timeline) -> list[Instant]:
    """Replacecommits of the timeline that are clusterings (any state), oldest first."""
    out = []
    for instant in timeline.instants:
        if instant.action == REPLACE_COMMIT:
            record = read_requested_record(storage, instant.time)
            if record is not None and (record.get("operationType") == CLUSTER_OPERATION
                                       or record.get("clusteringPlan")):
                out.append(instant)
    return out


def pending_clustering_groups(storage: Storage, timeline: Timeline) -> dict[tuple[str, str], str]:
    """(partition, file id) -> instant of the pending clustering whose plan reads that file group
    (FileSystemView.getFileGroupsInPendingClustering): inserts must not go to them, updates are rejected."""
    groups: dict[tuple[str, str], str] = {}
    for instant in timeline.pending([REPLACE_COMMIT]):
        plan = read_clustering_plan(storage, instant.time)
        for key in (plan.file_groups if plan else ()):
            groups[key] = instant.time
    return groups


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


# --- options ---------------------------------------------------------------------------------------------
def _int(raw: Mapping[str, str], key: str, default: int) -> int:
    if key not in raw:
        return default
    try:
        return int(str(raw[key]).strip())
    except ValueError:
        raise ConfigError(f"option {key}={raw[key]!r} is not a whole number; default is {default}") from None


def _bool(raw: Mapping[str, str], key: str, default: bool) -> bool:
    text = str(raw.get(key, default)).strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(f"option {key}={raw[key]!r} is invalid; use true or false")
    return text == "true"


@dataclass(frozen=True)
class ClusteringOptions:
    """Clustering settings from the caller's options (the table's TBLPROPERTIES included by the SQL layer)."""

    raw: dict
    small_file_limit: int
    max_bytes_per_group: int
    max_num_groups: int
    target_file_max_bytes: int
    sort_columns: str
    single_group: bool
    filter_mode: str
    layout: str
    parquet_max_file_size: int
    inline: bool
    inline_max_commits: int
    schedule_inline: bool
    updates_strategy: str

    @classmethod
    def of(cls, options: Mapping | None) -> "ClusteringOptions":
        raw = C.normalize_options(options or {})
        cfg = C.HoodieConfig(raw, warn_unknown=False)
        mode = str(raw.get(FILTER_MODE, "NONE")).strip().upper()
        if mode not in FILTER_MODES:
            raise ConfigError(f"{FILTER_MODE}={raw[FILTER_MODE]} is not one of {', '.join(FILTER_MODES)}")
        layout = str(raw.get(LAYOUT_STRATEGY, "linear")).strip().lower().replace("_", "-")
        layout = {"zorder": "z-order"}.get(layout, layout)
        if layout not in LAYOUT_STRATEGIES:
            raise ConfigError(f"{LAYOUT_STRATEGY}={raw[LAYOUT_STRATEGY]} is not one of linear, z-order, hilbert")
        for key, supported in ((PLAN_STRATEGY_CLASS, SIZE_BASED_PLAN_STRATEGY),
                               (EXECUTION_STRATEGY_CLASS, SORT_AND_SIZE_EXECUTION)):
            value = str(raw.get(key, supported)).strip()
            if value.rsplit(".", 1)[-1] != supported.rsplit(".", 1)[-1]:
                raise ConfigError(f"{key}={value} is not supported by pyhudi; use {supported}")
        updates = str(raw.get(UPDATES_STRATEGY, REJECT_UPDATES)).strip()
        if updates.rsplit(".", 1)[-1] not in (REJECT_UPDATES.rsplit(".", 1)[-1], ALLOW_UPDATES.rsplit(".", 1)[-1]):
            raise ConfigError(f"{UPDATES_STRATEGY}={updates} is not supported by pyhudi; use {REJECT_UPDATES} "
                              f"(Hudi's default) or {ALLOW_UPDATES}")
        values = {"small_file_limit": _int(raw, SMALL_FILE_LIMIT, 300 * _MB),
                  "max_bytes_per_group": _int(raw, MAX_BYTES_PER_GROUP, 2 * 1024 * _MB),
                  "max_num_groups": _int(raw, MAX_NUM_GROUPS, 30),
                  "target_file_max_bytes": _int(raw, TARGET_FILE_MAX_BYTES, 1024 * _MB),
                  "inline_max_commits": _int(raw, INLINE_MAX_COMMITS, 4)}
        for key, value in values.items():
            if value < 0 or value == 0 and key not in ("small_file_limit", "inline_max_commits"):
                raise ConfigError(f"clustering option {key.replace('_', '.')} must be positive, got {value}")
        return cls(raw, sort_columns=str(raw.get(SORT_COLUMNS, "")).strip(),
                   single_group=_bool(raw, SINGLE_GROUP, True), filter_mode=mode, layout=layout,
                   parquet_max_file_size=cfg.get(C.MAX_FILE_SIZE),
                   inline=_bool(raw, INLINE, False) or _bool(raw, "hoodie.datasource.clustering.inline.enable", False),
                   schedule_inline=_bool(raw, SCHEDULE_INLINE, False), updates_strategy=updates, **values)

    @property
    def sort_column_list(self) -> list[str]:
        return [c.strip() for c in self.sort_columns.split(",") if c.strip()]


# --- the size-based plan strategy ------------------------------------------------------------------------
def filter_partitions(partitions: list[str], opts: ClusteringOptions) -> list[str]:
    """getMatchedPartitions (selected, else regex), then ClusteringPlanPartitionFilter by mode."""
    raw = opts.raw
    selected = str(raw.get(PARTITION_SELECTED, "")).strip()
    if selected:
        wanted = [p.strip() for p in selected.split(",") if p.strip()]
        partitions = [p for p in wanted if p in partitions]
    elif str(raw.get(PARTITION_REGEX, "")).strip():
        try:
            pattern = re.compile(str(raw[PARTITION_REGEX]).strip())
        except re.error as exc:
            raise ConfigError(f"{PARTITION_REGEX}={raw[PARTITION_REGEX]!r} is not a regular expression ({exc})") \
                from None
        partitions = [p for p in partitions if pattern.fullmatch(p)]
    if opts.filter_mode == "RECENT_DAYS":
        lookback = _int(raw, LOOKBACK_PARTITIONS, 2)
        skip = max(_int(raw, SKIP_FROM_LATEST, 0), 0)
        ordered = sorted(partitions, reverse=True)[skip:]
        return ordered[:lookback] if lookback > 0 else ordered
    if opts.filter_mode == "SELECTED_PARTITIONS":
        begin, end = raw.get(BEGIN_PARTITION), raw.get(END_PARTITION)
        return [p for p in partitions if (begin is None or p >= begin) and (end is None or p <= end)]
    if opts.filter_mode == "DAY_ROLLING":
        hour = datetime.now().hour
        return [p for i, p in enumerate(sorted(partitions)) if i % 24 == hour]
    return partitions


def _slice_size(slice_: FileSlice, opts: ClusteringOptions) -> int:
    return slice_.base_file.size if slice_.base_file is not None else opts.parquet_max_file_size


def _metrics(slices: list[FileSlice], opts: ClusteringOptions) -> dict[str, float]:
    """FileSliceMetricUtils.addFileSliceCommonMetrics over the group's slices."""
    log_size = sum(log.size for s in slices for log in s.log_files if log.size >= 0)
    base = sum(s.base_file.size for s in slices if s.base_file is not None)
    io_read = (base + log_size) / _MB
    io_write = sum(_slice_size(s, opts) for s in slices) / _MB
    return {TOTAL_IO_READ_MB: float(io_read), TOTAL_IO_WRITE_MB: float(io_write),
            TOTAL_IO_MB: float(io_read + io_write), TOTAL_LOG_FILES_SIZE: float(log_size),
            TOTAL_LOG_FILES: float(sum(len(s.log_files) for s in slices))}


def _groups_for_partition(slices: list[FileSlice], opts: ClusteringOptions) -> list[ClusteringGroup]:
    ordered = sorted(slices, key=lambda s: -_slice_size(s, opts))
    groups: list[tuple[list[FileSlice], int]] = []
    current: list[FileSlice] = []
    total = 0
    for slice_ in ordered:
        size = _slice_size(slice_, opts)
        if total + size > opts.max_bytes_per_group and current:
            groups.append((current, total))
            current, total = [], 0
            if len(groups) >= opts.max_num_groups:
                break
        current.append(slice_)
        total += size
    if current and len(groups) < opts.max_num_groups and (len(current) > 1 or opts.sort_columns or opts.single_group):
        groups.append((current, total))
    out = []
    for members, size in groups:
        infos = [SliceInfo(s.partition_path, s.file_id, s.base_file.name if s.base_file else None,
                           tuple(log.name for log in sorted(s.log_files, key=LogFile.sort_key))) for s in members]
        out.append(ClusteringGroup(infos, max(1, math.ceil(size / opts.target_file_max_bytes)),
                                   _metrics(members, opts)))
    return out


def generate_plan(table: HudiTable, timeline: Timeline, opts: ClusteringOptions) -> ClusteringPlan | None:
    """The plan a new clustering would run, or None when no file slice qualifies."""
    view = table.view(timeline=timeline)
    busy = set(view.pending_compaction_groups) | set(pending_clustering_groups(table.storage, timeline))
    partitions = filter_partitions(view.partitions(), opts)
    groups: list[ClusteringGroup] = []
    for partition in partitions:
        eligible = [s for s in view.latest_slices([partition])
                    if (s.partition_path, s.file_id) not in busy
                    and (s.base_file.size if s.base_file else 0) < opts.small_file_limit]
        groups.extend(_groups_for_partition(eligible, opts)[:opts.max_num_groups])
        if len(groups) >= opts.max_num_groups:
            break
    groups = groups[:opts.max_num_groups]
    if not groups:
        return None
    params = {SORT_COLUMNS: opts.sort_columns} if opts.sort_columns else {}
    if opts.layout != "linear":
        params[LAYOUT_STRATEGY] = opts.layout
    return ClusteringPlan(groups, SORT_AND_SIZE_EXECUTION, params, {}, True, PLAN_VERSION)


def check_sort_columns(columns: list[str], schema_names: list[str], table_name: str) -> list[str]:
    """Sort columns must be columns of the table (RunClusteringProcedure.validateOrderColumns); returns them
    with the table's spelling."""
    by_lower = {n.lower(): n for n in schema_names}
    out = []
    for column in columns:
        if column.lower() not in by_lower:
            raise ConfigError(f"Order column not exist: {column} (table {table_name} has "
                              f"{', '.join(n for n in schema_names if not n.startswith('_hoodie_'))}); fix "
                              f"{SORT_COLUMNS} or the order argument")
        out.append(by_lower[column.lower()])
    return out


def require_plan(storage: Storage, instant_time: str, where: str) -> ClusteringPlan:
    plan = read_clustering_plan(storage, instant_time)
    if plan is None:
        raise TimelineError(f"replacecommit {instant_time} of {where} holds no clustering plan")
    return plan
