"""The compaction plan as Hudi writes it: the HoodieCompactionPlan Avro record in `<t>.compaction.requested`, its
operations (HoodieCompactionOperation), and the reader the layers above use (compaction runs it, the transaction
keeps writers off its file groups, the cleaner keeps the slices it reads). In the timeline layer, so that no
action or service imports compaction to read a plan.

A parsed plan keeps the fields it has that are not modelled (a newer Hudi's missingSchedulePartitions, ...) and its
field order, so it serialises back to the record it was read from. Version-1 plans hold full paths, version 2 file
names; operations hold names either way (as CompactionV2MigrationHandler migrates a plan)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pyhudi.errors import TimelineError
from pyhudi.storage import Storage
from pyhudi.timeline.active import instant_file
from pyhudi.timeline.avro_record import COMPACTION_PLAN_SCHEMA, AvroRecord, from_bytes
from pyhudi.timeline.instant import COMPACTION, Instant, State

# Metric names of CompactionStrategy.captureMetrics (FileSliceMetricUtils).
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"
TOTAL_IO_MB = "TOTAL_IO_MB"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"

PLAN_VERSION = 2          # CompactionUtils.LATEST_COMPACTION_METADATA_VERSION: plans hold file names


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class CompactionOperation(AvroRecord):
    """One file slice to compact: its base file and log files (names, relative to the partition folder)."""

    FIELDS = {"base_instant": "baseInstantTime", "delta_files": "deltaFilePaths", "data_file": "dataFilePath",
              "file_id": "fileId", "partition_path": "partitionPath", "metrics": "metrics",
              "bootstrap_file_path": "bootstrapFilePath"}
    partition_path: str = ""
    file_id: str = ""
    base_instant: str = ""
    data_file: str | None = None
    delta_files: tuple[str, ...] = ()
    metrics: Mapping[str, float] = field(default_factory=dict)
    bootstrap_file_path: str | None = None

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr in ("partition_path", "base_instant"):
            return value or ""
        if attr == "data_file":
            return _name(value) if value else None
        if attr == "delta_files":
            return tuple(_name(p) for p in value or [])
        if attr == "metrics":
            return dict(value or {})
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "delta_files":
            return list(value)
        if attr == "metrics":
            return dict(value)
        return value

    @property
    def file_group(self) -> tuple[str, str]:
        return (self.partition_path, self.file_id)

    def relative(self, name: str) -> str:
        return f"{self.partition_path}/{name}" if self.partition_path else name


@dataclass(frozen=True)
class CompactionPlan(AvroRecord):
    """The file slices a requested compaction merges."""

    FIELDS = {"operations": "operations", "extra_metadata": "extraMetadata", "version": "version",
              "strategy": "strategy", "preserve_hoodie_metadata": "preserveHoodieMetadata"}
    SCHEMA = COMPACTION_PLAN_SCHEMA
    operations: tuple[CompactionOperation, ...] = ()
    extra_metadata: Mapping[str, str] | None = None
    version: int | None = PLAN_VERSION
    strategy: Mapping[str, Any] | None = None        # HoodieCompactionStrategy, as read
    preserve_hoodie_metadata: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "operations", tuple(self.operations))

    @classmethod
    def _decode(cls, attr: str, value: Any) -> Any:
        if attr == "operations":
            return tuple(CompactionOperation.from_avro(op) for op in value or [])
        return value

    def _encode(self, attr: str, value: Any) -> Any:
        if attr == "operations":
            return [op.to_avro() for op in value]
        return value

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "compaction plan",
                   fix: str = "delete the pending compaction instant (unschedule it) and schedule again"
                   ) -> CompactionPlan:
        return cls.from_avro(from_bytes(data, where, fix))


def read_compaction_plan(storage: Storage, instant_time: str) -> CompactionPlan:
    """The plan of compaction `instant_time` (from `.hoodie/<t>.compaction.requested`)."""
    name = instant_file(storage, Instant(instant_time, COMPACTION, State.REQUESTED))
    if not storage.exists(name):
        raise TimelineError(f"compaction {instant_time} has no plan: {storage.base_uri}/{name} is missing")
    source = f"{storage.base_uri}/{name}"
    plan = CompactionPlan.from_bytes(storage.read_bytes(name), source)
    for op in plan.operations:   # a plan naming paths outside the table is corrupt: never follow it
        storage.inside(op.partition_path, source, allow_base=True)
        for file_name in ([op.data_file] if op.data_file else []) + list(op.delta_files):
            storage.inside(op.relative(file_name), source)
    return plan
