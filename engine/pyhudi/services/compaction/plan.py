"""Compaction plans: the options that shape a plan (strategy, IO budget, log thresholds; keys declared in
config/compaction.py) and the plan generator (latest file slices with log files, outside pending compactions, ordered and
bounded by the compaction strategy). The plan record and its reader: timeline/compaction_plan.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from pyhudi import config as C
from pyhudi.errors import ConfigError
from pyhudi.file_group.base_file import BloomSettings
from pyhudi.file_group.model import FileSlice, LogFile
from pyhudi.timeline.avro_record import COMPACTION_PLAN_SCHEMA  # noqa: F401 - re-exported
from pyhudi.timeline.compaction_plan import (PLAN_VERSION, TOTAL_IO_MB, TOTAL_IO_READ_MB,  # noqa: F401 - re-exported
                                            TOTAL_IO_WRITE_MB, TOTAL_LOG_FILES, TOTAL_LOG_FILES_SIZE,
                                            CompactionOperation, CompactionPlan, read_compaction_plan)
from pyhudi.table import HudiTable
from pyhudi.timeline import Timeline

# --- options: the hoodie.compaction.* keys, defaults and docs are declared once in config/compaction.py -----

_STRATEGY_PACKAGE = "org.apache.hudi.table.action.compact.strategy."
LOG_FILE_SIZE_STRATEGY = _STRATEGY_PACKAGE + "LogFileSizeBasedCompactionStrategy"
LOG_FILE_NUM_STRATEGY = _STRATEGY_PACKAGE + "LogFileNumBasedCompactionStrategy"
BOUNDED_IO_STRATEGY = _STRATEGY_PACKAGE + "BoundedIOCompactionStrategy"
UNBOUNDED_STRATEGY = _STRATEGY_PACKAGE + "UnBoundedCompactionStrategy"
SUPPORTED_STRATEGIES = (LOG_FILE_SIZE_STRATEGY, LOG_FILE_NUM_STRATEGY, BOUNDED_IO_STRATEGY, UNBOUNDED_STRATEGY)

_MB = 1024 * 1024

bool_option = C.bool_option      # the one parser of options (pyhudi.config), under the names importers use
int_option = C.int_option


@dataclass(frozen=True)
class CompactionOptions:
    """Compaction settings: the table's identity (payload, ordering field) plus the caller's options."""

    config: C.HoodieConfig
    strategy: str
    target_io_mb: int
    log_size_threshold: int
    log_num_threshold: int
    payload_class: str
    ordering_field: str | None

    @classmethod
    def of(cls, table: HudiTable, options: Mapping | None, warn_unknown: bool = True) -> "CompactionOptions":
        raw = C.normalize_options(options or {})
        config = C.HoodieConfig(raw, warn_unknown=warn_unknown)
        compaction = C.CompactionConfig.from_options(raw)   # the raw text: an empty value means the default
        strategy = str(compaction.strategy).strip()
        if "." not in strategy:
            strategy = _STRATEGY_PACKAGE + strategy
        if strategy not in SUPPORTED_STRATEGIES:
            key = C.COMPACTION_STRATEGY.key
            raise ConfigError(f"{key}={raw[key]} is not supported by pyhudi; use one of "
                              f"{', '.join(s.rsplit('.', 1)[-1] for s in SUPPORTED_STRATEGIES)}")
        payload = (raw.get(C.COMPACTION_PAYLOAD_CLASS.key) or table.properties.get(C.COMPACTION_PAYLOAD_CLASS.key)
                   or raw.get(C.PAYLOAD_CLASS.key) or C.PAYLOAD_CLASS.default)
        ordering = table.properties.precombine_field or raw.get(C.PRECOMBINE.key) or None
        return cls(config, strategy, compaction.target_io_mb, compaction.log_size_threshold,
                   compaction.log_num_threshold, payload, ordering)

    @property
    def bloom(self) -> BloomSettings:
        cfg = self.config
        return BloomSettings(cfg.get(C.BLOOM_FILTER_TYPE), cfg.get(C.BLOOM_NUM_ENTRIES), cfg.get(C.BLOOM_FPP),
                             cfg.get(C.BLOOM_DYNAMIC_MAX_ENTRIES))


def generate_plan(table: HudiTable, timeline: Timeline, opts: CompactionOptions) -> CompactionPlan:
    """The operations a new compaction would run (BaseHoodieCompactionPlanGenerator + the strategy)."""
    view = table.view(timeline=timeline)
    busy = view.busy_groups   # Hudi keeps compaction off file groups under pending compaction or clustering
    max_file_size = opts.config.get(C.MAX_FILE_SIZE)
    operations = [_operation(s, max_file_size) for s in view.latest_slices()
                  if s.log_files and (s.partition_path, s.file_id) not in busy]
    return CompactionPlan(order_and_filter(operations, opts), None, PLAN_VERSION)


def _operation(slice_: FileSlice, default_base_size: int) -> CompactionOperation:
    log_size = slice_.log_size
    base_size = slice_.base_file.size if slice_.base_file else 0
    io_read = (base_size + log_size) // _MB
    io_write = (base_size if base_size > 0 else default_base_size) // _MB
    metrics = {TOTAL_IO_READ_MB: float(io_read), TOTAL_IO_WRITE_MB: float(io_write),
               TOTAL_IO_MB: float(io_read + io_write), TOTAL_LOG_FILES_SIZE: float(log_size),
               TOTAL_LOG_FILES: float(len(slice_.log_files))}
    return CompactionOperation(slice_.partition_path, slice_.file_id, slice_.base_instant,
                               slice_.base_file.name if slice_.base_file else None,
                               tuple(log.name for log in sorted(slice_.log_files, key=LogFile.sort_key)), metrics)


def order_and_filter(operations: list[CompactionOperation], opts: CompactionOptions) -> list[CompactionOperation]:
    """The compaction strategy: which operations a plan keeps, in which order."""
    if opts.strategy == UNBOUNDED_STRATEGY:
        return list(operations)
    if opts.strategy == LOG_FILE_SIZE_STRATEGY:
        operations = sorted((op for op in operations
                             if op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0) >= opts.log_size_threshold),
                            key=lambda op: -int(op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0)))
    elif opts.strategy == LOG_FILE_NUM_STRATEGY:
        operations = sorted((op for op in operations if len(op.delta_files) >= opts.log_num_threshold),
                            key=lambda op: -len(op.delta_files))
    # BoundedIOCompactionStrategy: take operations in order until the IO budget is spent (the last one may
    # overshoot it).
    out = []
    remaining = opts.target_io_mb
    for op in operations:
        remaining -= int(op.metrics.get(TOTAL_IO_MB, 0.0))
        out.append(op)
        if remaining <= 0:
            break
    return out
