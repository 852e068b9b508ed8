"""Compaction plans, as Hudi 0.14/0.15 writes them: the options that shape a plan (strategy, IO budget, log
thresholds), the HoodieCompactionPlan Avro record in `<t>.compaction.requested`, and the plan generator (latest
file slices with log files, outside pending compactions, ordered and bounded by the compaction strategy)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pyhudi import config as C
from pyhudi.errors import ConfigError, TimelineError
from pyhudi.file_group.base_file import BloomSettings
from pyhudi.file_group.model import FileSlice, LogFile
from pyhudi.actions import avro_metadata
from pyhudi.actions.avro_metadata import COMPACTION_PLAN_SCHEMA
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.timeline import COMPACTION, METAFOLDER, Instant, State, Timeline

# --- options (Hudi's keys and defaults) ----------------------------------------------------------------------
STRATEGY_KEY = "hoodie.compaction.strategy"
TARGET_IO_KEY = "hoodie.compaction.target.io"                       # MB per compaction, default 500 GB
LOG_SIZE_THRESHOLD_KEY = "hoodie.compaction.logfile.size.threshold"  # bytes, LogFileSizeBased filter
LOG_NUM_THRESHOLD_KEY = "hoodie.compaction.logfile.num.threshold"    # files, LogFileNumBased filter
SCHEDULE_INLINE_KEY = "hoodie.compact.schedule.inline"
COMPACTION_PAYLOAD_KEY = "hoodie.compaction.payload.class"
DEFAULT_TARGET_IO_MB = 500 * 1024

_STRATEGY_PACKAGE = "org.apache.hudi.table.action.compact.strategy."
LOG_FILE_SIZE_STRATEGY = _STRATEGY_PACKAGE + "LogFileSizeBasedCompactionStrategy"
LOG_FILE_NUM_STRATEGY = _STRATEGY_PACKAGE + "LogFileNumBasedCompactionStrategy"
BOUNDED_IO_STRATEGY = _STRATEGY_PACKAGE + "BoundedIOCompactionStrategy"
UNBOUNDED_STRATEGY = _STRATEGY_PACKAGE + "UnBoundedCompactionStrategy"
SUPPORTED_STRATEGIES = (LOG_FILE_SIZE_STRATEGY, LOG_FILE_NUM_STRATEGY, BOUNDED_IO_STRATEGY, UNBOUNDED_STRATEGY)

# Metric names of CompactionStrategy.captureMetrics (FileSliceMetricUtils).
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"
TOTAL_IO_MB = "TOTAL_IO_MB"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"

PLAN_VERSION = 2          # CompactionUtils.LATEST_COMPACTION_METADATA_VERSION: plans hold file names
_MB = 1024 * 1024

@dataclass(frozen=True)
class CompactionOperation:
    """One file slice to compact: its base file and log files (names, relative to the partition folder)."""

    partition_path: str
    file_id: str
    base_instant: str
    data_file: str | None
    delta_files: tuple[str, ...]
    metrics: Mapping[str, float] = field(default_factory=dict)
    bootstrap_file_path: str | None = None

    @property
    def file_group(self) -> tuple[str, str]:
        return (self.partition_path, self.file_id)

    def relative(self, name: str) -> str:
        return f"{self.partition_path}/{name}" if self.partition_path else name

    def to_avro(self) -> dict:
        return {"baseInstantTime": self.base_instant, "deltaFilePaths": list(self.delta_files),
                "dataFilePath": self.data_file, "fileId": self.file_id, "partitionPath": self.partition_path,
                "metrics": dict(self.metrics), "bootstrapFilePath": self.bootstrap_file_path}

    @classmethod
    def from_avro(cls, record: dict) -> "CompactionOperation":
        # Version-1 plans hold full paths; version 2 holds names (CompactionV2MigrationHandler): keep names.
        data = record.get("dataFilePath")
        return cls(partition_path=record.get("partitionPath") or "", file_id=record["fileId"],
                   base_instant=record.get("baseInstantTime") or "",
                   data_file=data.rsplit("/", 1)[-1] if data else None,
                   delta_files=tuple(p.rsplit("/", 1)[-1] for p in record.get("deltaFilePaths") or []),
                   metrics=dict(record.get("metrics") or {}), bootstrap_file_path=record.get("bootstrapFilePath"))


@dataclass
class CompactionPlan:
    operations: list[CompactionOperation]
    extra_metadata: dict[str, str] | None = None
    version: int = PLAN_VERSION

    def to_bytes(self) -> bytes:
        """The plan as Hudi serializes it (TimelineMetadataUtils.serializeCompactionPlan): an Avro data file."""
        record = {"operations": [op.to_avro() for op in self.operations], "extraMetadata": self.extra_metadata,
                  "version": self.version, "strategy": None, "preserveHoodieMetadata": None}
        return avro_metadata.to_bytes(COMPACTION_PLAN_SCHEMA, record)

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "compaction plan") -> "CompactionPlan":
        record = avro_metadata.from_bytes(data, where, "delete the pending compaction instant (unschedule it) "
                                          "and schedule again")
        return cls([CompactionOperation.from_avro(op) for op in record.get("operations") or []],
                   record.get("extraMetadata"), record.get("version") or 1)


def read_compaction_plan(storage: Storage, instant_time: str) -> CompactionPlan:
    """The plan of compaction `instant_time` (from `.hoodie/<t>.compaction.requested`)."""
    name = f"{METAFOLDER}/{Instant(instant_time, COMPACTION, State.REQUESTED).file_name}"
    if not storage.exists(name):
        raise TimelineError(f"compaction {instant_time} has no plan: {storage.base_uri}/{name} is missing")
    source = f"{storage.base_uri}/{name}"
    plan = CompactionPlan.from_bytes(storage.read_bytes(name), source)
    for op in plan.operations:   # a plan naming paths outside the table is corrupt: never follow it
        storage.inside(op.partition_path, source, allow_base=True)
        for file_name in ([op.data_file] if op.data_file else []) + list(op.delta_files):
            storage.inside(op.relative(file_name), source)
    return plan


# --- options --------------------------------------------------------------------------------------------------
def bool_option(raw: Mapping[str, str], key: str, default: bool) -> bool:
    text = str(raw.get(key, default)).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"option {key}={raw.get(key)!r} is invalid; use true or false")


def int_option(raw: Mapping[str, str], key: str, default: int) -> int:
    if key not in raw:
        return default
    try:
        return int(str(raw[key]).strip())
    except ValueError:
        raise ConfigError(f"option {key}={raw[key]!r} is not a whole number; default is {default}") from None


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
        strategy = raw.get(STRATEGY_KEY, LOG_FILE_SIZE_STRATEGY).strip()
        if "." not in strategy:
            strategy = _STRATEGY_PACKAGE + strategy
        if strategy not in SUPPORTED_STRATEGIES:
            raise ConfigError(f"{STRATEGY_KEY}={raw[STRATEGY_KEY]} is not supported by pyhudi; use one of "
                              f"{', '.join(s.rsplit('.', 1)[-1] for s in SUPPORTED_STRATEGIES)}")
        payload = (raw.get(COMPACTION_PAYLOAD_KEY) or table.properties.get(COMPACTION_PAYLOAD_KEY)
                   or raw.get(C.PAYLOAD_CLASS.key) or C.PAYLOAD_CLASS.default)
        ordering = table.properties.precombine_field or raw.get(C.PRECOMBINE.key) or None
        return cls(config, strategy, int_option(raw, TARGET_IO_KEY, DEFAULT_TARGET_IO_MB),
                   int_option(raw, LOG_SIZE_THRESHOLD_KEY, 0), int_option(raw, LOG_NUM_THRESHOLD_KEY, 0),
                   payload, ordering)

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
    log_size = sum(log.size for log in slice_.log_files if log.size >= 0)
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
