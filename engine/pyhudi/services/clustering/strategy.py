"""The size-based clustering plan strategy (Hudi's SparkSizeBasedClusteringPlanStrategy on
PartitionAwareClusteringPlanStrategy) and the options that shape it. Driver only, metadata only.

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
from dataclasses import dataclass
from datetime import datetime
from typing import Mapping

from pyhudi import config as C
from pyhudi.errors import ConfigError
from pyhudi.file_group.model import FileSlice, LogFile
from pyhudi.services.clustering.plan import (
    ALLOW_UPDATES, BEGIN_PARTITION, END_PARTITION, EXECUTION_STRATEGY_CLASS, FILTER_MODE, FILTER_MODES,
    LAYOUT_STRATEGIES, LAYOUT_STRATEGY, PARTITION_REGEX, PARTITION_SELECTED, PLAN_STRATEGY_CLASS, PLAN_VERSION,
    REJECT_UPDATES, SIZE_BASED_PLAN_STRATEGY, SORT_AND_SIZE_EXECUTION, SORT_COLUMNS, TOTAL_IO_MB,
    TOTAL_IO_READ_MB, TOTAL_IO_WRITE_MB, TOTAL_LOG_FILES, TOTAL_LOG_FILES_SIZE, UPDATES_STRATEGY, ClusteringGroup,
    ClusteringPlan, SliceInfo)
from pyhudi.table import HudiTable
from pyhudi.timeline import Timeline

_MB = 1024 * 1024


# --- options ---------------------------------------------------------------------------------------------
_bool = C.bool_option


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
        values = {"small_file_limit": C.option(raw, C.CLUSTERING_SMALL_FILE_LIMIT),
                  "max_bytes_per_group": C.option(raw, C.CLUSTERING_MAX_BYTES_PER_GROUP),
                  "max_num_groups": C.option(raw, C.CLUSTERING_MAX_NUM_GROUPS),
                  "target_file_max_bytes": C.option(raw, C.CLUSTERING_TARGET_FILE_MAX_BYTES),
                  "inline_max_commits": C.option(raw, C.CLUSTERING_INLINE_MAX_COMMITS)}
        for key, value in values.items():
            if value < 0 or value == 0 and key not in ("small_file_limit", "inline_max_commits"):
                raise ConfigError(f"clustering option {key.replace('_', '.')} must be positive, got {value}")
        return cls(raw, sort_columns=str(raw.get(SORT_COLUMNS, "")).strip(),
                   single_group=C.option(raw, C.CLUSTERING_SINGLE_GROUP), filter_mode=mode, layout=layout,
                   parquet_max_file_size=cfg.get(C.MAX_FILE_SIZE),
                   inline=(C.option(raw, C.CLUSTERING_INLINE)
                           or _bool(raw, C.CLUSTERING_INLINE_ENABLE_LEGACY.key, False)),
                   schedule_inline=C.option(raw, C.CLUSTERING_SCHEDULE_INLINE), updates_strategy=updates, **values)

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
        lookback = C.option(raw, C.CLUSTERING_LOOKBACK_PARTITIONS)
        skip = max(C.option(raw, C.CLUSTERING_SKIP_FROM_LATEST), 0)
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
    log_size = sum(s.log_size for s in slices)
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
    busy = set(view.busy_groups)   # under a pending compaction or clustering
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
