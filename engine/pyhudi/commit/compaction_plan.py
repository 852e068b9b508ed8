"""The compaction plan as Hudi 0.14/0.15 writes it: the HoodieCompactionPlan Avro record in
`<t>.compaction.requested`, its operations, and the reader the layers above use (compaction runs it, the
transaction keeps writers off its file groups, the cleaner keeps the slices it reads). Here, below actions and
services, so that none of them imports compaction to read a plan."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from pyhudi.timeline import avro_record
from pyhudi.timeline.avro_record import COMPACTION_PLAN_SCHEMA
from pyhudi.errors import TimelineError
from pyhudi.storage import Storage
from pyhudi.timeline import instant_file, COMPACTION, Instant, State

# Metric names of CompactionStrategy.captureMetrics (FileSliceMetricUtils).
TOTAL_IO_READ_MB = "TOTAL_IO_READ_MB"
TOTAL_IO_WRITE_MB = "TOTAL_IO_WRITE_MB"
TOTAL_IO_MB = "TOTAL_IO_MB"
TOTAL_LOG_FILES_SIZE = "TOTAL_LOG_FILES_SIZE"
TOTAL_LOG_FILES = "TOTAL_LOG_FILES"

PLAN_VERSION = 2          # CompactionUtils.LATEST_COMPACTION_METADATA_VERSION: plans hold file names


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
        return avro_record.to_bytes(COMPACTION_PLAN_SCHEMA, record)

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "compaction plan") -> "CompactionPlan":
        record = avro_record.from_bytes(data, where, "delete the pending compaction instant (unschedule it) "
                                          "and schedule again")
        return cls([CompactionOperation.from_avro(op) for op in record.get("operations") or []],
                   record.get("extraMetadata"), record.get("version") or 1)


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
