"""Compaction of merge-on-read tables, as Apache Hudi 0.14/0.15 (table version 6) does it.

A merge-on-read write appends log files to a file slice; compaction folds a slice's base file and log files into
a new base file, so readers stop merging. It is two instants on the timeline:

* **schedule** (driver, metadata only): pick the latest file slices that have log files (not already in a pending
  compaction), order and bound them with the compaction strategy (``hoodie.compaction.strategy``, default
  ``LogFileSizeBasedCompactionStrategy``: largest total log size first, up to ``hoodie.compaction.target.io`` MB),
  and publish the plan as ``<t>.compaction.requested``: an Avro data file holding one ``HoodieCompactionPlan``
  record (plan version 2: file names, not paths). ``t`` is later than every instant on the timeline, and no write
  may be pending before it (Hudi refuses to schedule over an unfinished write, whose log files would be missed).
* **execute**: ``<t>.compaction.inflight`` (empty), then one Spark task per operation merges the slice (base +
  logs, only blocks of writes completed before ``t``) and writes ``<fileId>_<token>_<t>.parquet`` (marker first).
  Records keep their ``_hoodie_commit_time``/``_hoodie_commit_seqno``; ``_hoodie_file_name`` names the new file
  (Hudi's merge handle with preserved metadata). The driver publishes ``<t>.commit`` with the commit metadata
  (``compacted: true``, ``operationType: COMPACT``). A failure deletes the files the markers name and the inflight
  file: the requested plan stays, and the next run executes it again.

While a compaction is pending, writers open a new file slice whose base instant is ``t`` (log files only until the
compaction commits); readers merge the previous slice with those logs (`FileSystemView.merged_latest_slices`).

Inline compaction (``hoodie.compact.inline=true``) runs after a delta commit when the trigger strategy says so
(:func:`should_compact`): ``NUM_COMMITS`` (``hoodie.compact.inline.max.delta.commits`` delta commits since the last
compaction), ``TIME_ELAPSED`` (``hoodie.compact.inline.max.delta.seconds`` since it), ``NUM_AND_TIME``,
``NUM_OR_TIME``. Without a completed compaction, the count starts at the first delta commit.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterator, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi import config as C
from pyhudi.actions.commit import InstantCommit
from pyhudi.actions.markers import create_marker
from pyhudi.actions.metadata import CommitMetadata, write_stat
from pyhudi.actions.spark_jobs import collect_or_raise
from pyhudi.errors import ConfigError, CorruptFileError, TimelineError
from pyhudi.file_group.base_file import BloomSettings, read_base_file, write_base_file
from pyhudi.file_group.model import BaseFile, FileSlice, LogFile
from pyhudi.file_group.naming import base_file_name, parse_base_file_name, parse_log_file_name
from pyhudi.services import avro_metadata
from pyhudi.services.heartbeat import is_heartbeat_expired
from pyhudi.services.lock import table_lock
from pyhudi.services.rollback import CONCURRENCY_KEY, OCC, rollback_failed_writes
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.timeline import (COMMIT, COMPACTION, DELTA_COMMIT, METAFOLDER, REPLACE_COMMIT, WRITE_ACTIONS,
                             Instant, State, Timeline, create_requested, format_instant_time, new_instant_time,
                             normalize_instant_argument, parse_instant_time)

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

COMPACT_OPERATION_TYPE = "COMPACT"
PLAN_VERSION = 2          # CompactionUtils.LATEST_COMPACTION_METADATA_VERSION: plans hold file names
_MB = 1024 * 1024

# --- the plan: HoodieCompactionPlan / HoodieCompactionOperation (hudi-common/src/main/avro) ------------------
_NS = "org.apache.hudi.avro.model"
COMPACTION_PLAN_SCHEMA = {
    "type": "record", "name": "HoodieCompactionPlan", "namespace": _NS,
    "fields": [
        {"name": "operations", "default": None, "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieCompactionOperation", "namespace": _NS,
            "fields": [
                {"name": "baseInstantTime", "type": ["null", "string"]},
                {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}], "default": None},
                {"name": "dataFilePath", "type": ["null", "string"], "default": None},
                {"name": "fileId", "type": ["null", "string"]},
                {"name": "partitionPath", "type": ["null", "string"], "default": None},
                {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
            ]}}]},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "strategy", "default": None, "type": ["null", {
            "type": "record", "name": "HoodieCompactionStrategy", "namespace": _NS,
            "fields": [
                {"name": "compactorClassName", "type": ["null", "string"], "default": None},
                {"name": "strategyParams", "type": ["null", {"type": "map", "values": "string"}], "default": None},
                {"name": "version", "type": ["int", "null"], "default": 1},
            ]}]},
        {"name": "preserveHoodieMetadata", "type": ["null", "boolean"], "default": None},
    ],
}


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
    return CompactionPlan.from_bytes(storage.read_bytes(name), f"{storage.base_uri}/{name}")


# --- public API -----------------------------------------------------------------------------------------------
def schedule_compaction(spark, path, options: dict | None = None, instant_time: str | None = None) -> str | None:
    """Plan a compaction of the table at `path`; returns its instant time, or None when no file slice has log
    files outside pending compactions (nothing is written then).

    An explicit schedule does not consult the inline trigger (:func:`should_compact`). Raises TimelineError when
    a write is pending before the compaction instant, or `instant_time` is not later than the timeline.
    """
    table = _load_mor(path)
    opts = _Options.of(table, options)
    with _scheduling(table, options):
        return _schedule(table, table.timeline(), opts, instant_time)


def execute_compaction(spark, path, instant_time: str, options: dict | None = None) -> dict:
    """Run the pending compaction `instant_time` in Spark executors and commit it; returns the commit metadata."""
    table = _load_mor(path)
    return _execute(spark, table, table.timeline(), normalize_instant_argument(instant_time),
                    _Options.of(table, options))


def compact(spark, path, op: str = "scheduleAndExecute", instant_time: str | None = None,
            options: dict | None = None) -> list[str]:
    """Hudi's `run_compaction` operations; returns the compaction instants acted on.

    * ``schedule``: plan a compaction (at `instant_time` when given).
    * ``execute``: run pending compactions, oldest first (only `instant_time` when given).
    * ``scheduleAndExecute`` (also ``run``, as Hudi maps it): plan one and run it; when nothing could be
      planned, run the pending ones. With `instant_time`, runs that pending compaction.
    """
    operation = str(op or "scheduleAndExecute").strip().lower()
    if operation == "run":
        operation = "scheduleandexecute"
    if operation not in ("schedule", "execute", "scheduleandexecute"):
        raise ConfigError(f"compaction op {op!r} is not one of schedule, execute, run, scheduleAndExecute")
    table = _load_mor(path)
    opts = _Options.of(table, options)
    if operation == "schedule":
        with _scheduling(table, options):
            scheduled = _schedule(table, table.timeline(), opts, instant_time)
        return [scheduled] if scheduled else []
    timeline = table.timeline()

    pending = [i.time for i in timeline.pending([COMPACTION])]
    if instant_time is not None:
        wanted = normalize_instant_argument(instant_time)
        if wanted not in pending:
            raise TimelineError(f"compaction instant {wanted} is not pending in {table.storage.base_uri}; pending "
                                f"compactions: {', '.join(pending) or 'none'}")
        targets = [wanted]
    else:
        targets = pending
        if operation == "scheduleandexecute":
            with _scheduling(table, options):
                scheduled = _schedule(table, table.timeline(), opts, None)
            if scheduled:
                targets = [scheduled]
    for target in targets:
        _execute(spark, table, table.timeline(), target, opts)
    return targets


def should_compact(table, timeline: Timeline, config, *, instant_time: str | None = None) -> bool:
    """Hudi's compaction trigger (ScheduleCompactionActionExecutor.needCompact) for a compaction at
    `instant_time` (default: now).

    Delta commits are counted after the latest completed commit or replacecommit (compactions complete as
    commits); without one, all delta commits count and the time runs from the first of them.
    """
    cfg = config if isinstance(config, C.HoodieConfig) else C.HoodieConfig(config or {}, warn_unknown=False)
    strategy = cfg.get(C.COMPACT_TRIGGER)
    max_commits = cfg.get(C.COMPACT_MAX_DELTA_COMMITS)
    max_seconds = cfg.get(C.COMPACT_MAX_DELTA_SECONDS)
    deltas = [i for i in timeline.instants if i.action == DELTA_COMMIT]
    last = timeline.completed([COMMIT, REPLACE_COMMIT])
    if last:
        since = last[-1].time
        count = sum(1 for i in deltas if i.time > since)
    elif deltas:
        since = deltas[0].time
        count = len(deltas)
    else:
        return False
    now = instant_time or format_instant_time(datetime.now(timezone.utc))
    elapsed = int(parse_instant_time(now).timestamp()) - int(parse_instant_time(since).timestamp())
    by_count = count >= max_commits
    by_time = elapsed >= max_seconds
    if strategy == "NUM_COMMITS":
        return by_count
    if strategy == "TIME_ELAPSED":
        return by_time
    if strategy == "NUM_OR_TIME":
        return by_count or by_time
    if strategy == "NUM_AND_TIME":
        return by_count and by_time
    raise ConfigError(f"{C.COMPACT_TRIGGER.key}={strategy} is not supported; use NUM_COMMITS, TIME_ELAPSED, "
                      "NUM_AND_TIME or NUM_OR_TIME")


def run_inline_compaction_if_due(spark, path, options) -> str | None:
    """After a delta commit: with ``hoodie.compact.inline=true``, run pending compactions, then schedule and run
    a new one if the trigger is due (``hoodie.compact.schedule.inline=true`` alone only schedules). Returns the
    instant compacted (or scheduled), else None. A write pending on the timeline (another writer) skips the
    scheduling with a warning: the delta commit that called this is already committed."""
    raw = C.normalize_options(options or {})
    cfg = C.HoodieConfig(raw, warn_unknown=False)
    inline = cfg.get(C.COMPACT_INLINE)
    schedule_only = _bool_option(raw, SCHEDULE_INLINE_KEY, False)
    if not (inline or schedule_only):
        return None
    table = HudiTable.load(str(path))
    if not table.properties.is_mor:
        return None
    opts = _Options.of(table, options, warn_unknown=False)   # the write that called us checked its options
    acted = None
    if inline:   # Hudi's runAnyPendingCompactions: finish plans left by earlier (failed) runs first
        for instant in table.timeline().pending([COMPACTION]):
            _execute(spark, table, table.timeline(), instant.time, opts)
            acted = instant.time
    timeline = table.timeline()
    if not should_compact(table, timeline, cfg):
        return acted
    try:
        scheduled = _schedule(table, timeline, opts, None)
    except TimelineError as exc:
        warnings.warn(f"inline compaction of {table.name} skipped: {exc}", stacklevel=2)
        return acted
    if scheduled is None:
        return acted
    if inline:
        _execute(spark, table, table.timeline(), scheduled, opts)
    return scheduled


# --- options --------------------------------------------------------------------------------------------------
def _bool_option(raw: Mapping[str, str], key: str, default: bool) -> bool:
    text = str(raw.get(key, default)).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"option {key}={raw.get(key)!r} is invalid; use true or false")


def _int_option(raw: Mapping[str, str], key: str, default: int) -> int:
    if key not in raw:
        return default
    try:
        return int(str(raw[key]).strip())
    except ValueError:
        raise ConfigError(f"option {key}={raw[key]!r} is not a whole number; default is {default}") from None


@dataclass(frozen=True)
class _Options:
    """Compaction settings: the table's identity (payload, ordering field) plus the caller's options."""

    config: C.HoodieConfig
    strategy: str
    target_io_mb: int
    log_size_threshold: int
    log_num_threshold: int
    payload_class: str
    ordering_field: str | None

    @classmethod
    def of(cls, table: HudiTable, options: Mapping | None, warn_unknown: bool = True) -> "_Options":
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
        return cls(config, strategy, _int_option(raw, TARGET_IO_KEY, DEFAULT_TARGET_IO_MB),
                   _int_option(raw, LOG_SIZE_THRESHOLD_KEY, 0), _int_option(raw, LOG_NUM_THRESHOLD_KEY, 0),
                   payload, ordering)

    @property
    def bloom(self) -> BloomSettings:
        cfg = self.config
        return BloomSettings(cfg.get(C.BLOOM_FILTER_TYPE), cfg.get(C.BLOOM_NUM_ENTRIES), cfg.get(C.BLOOM_FPP),
                             cfg.get(C.BLOOM_DYNAMIC_MAX_ENTRIES))


def _load_mor(path) -> HudiTable:
    table = HudiTable.load(str(path)) if not isinstance(path, HudiTable) else path
    if not table.properties.is_mor:
        raise ConfigError(f"table {table.name} at {table.storage.base_uri} is {table.properties.table_type}; only "
                          "MERGE_ON_READ tables have log files to compact")
    return table


# --- scheduling (driver) --------------------------------------------------------------------------------------
@contextlib.contextmanager
def _scheduling(table: HudiTable, options: Mapping | None):
    """Prepare to schedule: roll back the pending writes of failed writers, never a live one. A write whose
    heartbeat is fresh is left alone (the schedule then refuses while it is pending, see _check_can_schedule):
    a table service must not undo a running write. Under optimistic concurrency control the table lock is held
    until the plan is published, so no write can start before the compaction instant meanwhile."""
    raw = C.normalize_options(options or {})
    occ = str(raw.get(CONCURRENCY_KEY, "")).strip().lower() == OCC
    with (table_lock(table.storage, raw) if occ else contextlib.nullcontext()):
        live = {i.time for i in table.timeline().pending(WRITE_ACTIONS)
                if not is_heartbeat_expired(table.storage, i.time, raw)}
        rollback_failed_writes(table, raw, exclude=live)
        yield


def _schedule(table: HudiTable, timeline: Timeline, opts: _Options, instant_time: str | None) -> str | None:
    t = normalize_instant_argument(instant_time) if instant_time else new_instant_time(after=timeline.latest_time())
    _check_can_schedule(table, timeline, t)
    plan = generate_plan(table, timeline, opts)
    if not plan.operations:
        return None
    create_requested(table.storage, t, COMPACTION, plan.to_bytes())
    return t


def _check_can_schedule(table: HudiTable, timeline: Timeline, t: str) -> None:
    """Hudi's rules: no write pending before the compaction instant (its log files would be left out), and every
    completed write and pending compaction strictly before it."""
    where = f"table {table.name} at {table.storage.base_uri}"
    blocking = [i for i in timeline.pending(WRITE_ACTIONS) if i.time < t]
    if blocking:
        raise TimelineError(f"cannot schedule a compaction of {where} at {t}: write {blocking[0]} is still "
                            "pending. Let it finish, or roll it back, then schedule again.")
    later = [i for i in timeline.instants
             if i.time >= t and (i.is_completed and i.action in WRITE_ACTIONS + (COMPACTION,)
                                 or i.action == COMPACTION)]
    if later:
        raise TimelineError(f"cannot schedule a compaction of {where} at {t}: instant {later[0]} is not earlier; "
                            "a compaction instant must be later than every completed write and pending compaction "
                            "(leave the instant time out to get a fresh one)")


def generate_plan(table: HudiTable, timeline: Timeline, opts: _Options) -> CompactionPlan:
    """The operations a new compaction would run (BaseHoodieCompactionPlanGenerator + the strategy)."""
    view = table.view(timeline=timeline)
    busy = view.pending_compaction_groups
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


def order_and_filter(operations: list[CompactionOperation], opts: _Options) -> list[CompactionOperation]:
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


# --- execution --------------------------------------------------------------------------------------------------
_OPS_DDL = ("partition_path string, file_id string, base_instant string, data_file string, "
            "delta_files array<string>, total_log_size long")
_DDL_TYPES = {pa.string(): "string", pa.int64(): "long", pa.int32(): "int", pa.bool_(): "boolean",
              pa.float64(): "double"}


def _stats_schema() -> pa.Schema:
    """The writer's stats row (so `write_stat` reads it) plus the log-scan figures of a compaction."""
    from pyhudi.writer.file_writer import STATS_SCHEMA

    extra = [("total_log_records", pa.int64()), ("total_log_files", pa.int64()), ("total_log_size", pa.int64()),
             ("total_updated_records", pa.int64()), ("total_log_blocks", pa.int64()),
             ("total_corrupt_blocks", pa.int64()), ("total_rollback_blocks", pa.int64()),
             ("scan_time_ms", pa.int64()), ("write_time_ms", pa.int64())]
    return pa.schema(list(STATS_SCHEMA) + [pa.field(n, t) for n, t in extra if n not in STATS_SCHEMA.names])


COMPACTION_STATS_SCHEMA = _stats_schema()
COMPACTION_STATS_DDL = ", ".join(f"{f.name} {_DDL_TYPES[f.type]}" for f in COMPACTION_STATS_SCHEMA)


@dataclass(frozen=True)
class _CompactContext:
    """Everything an executor needs (metadata only, pickled into the task)."""

    storage: Storage
    instant_time: str
    schema: pa.Schema                 # meta + data columns, storage types
    visible_instants: frozenset
    committed_before: str | None
    ordering_field: str | None
    payload_class: str
    bloom: BloomSettings
    compression: str
    avro_schema_json: str | None      # writer schema with meta fields, for the parquet footer


def _execute(spark, table: HudiTable, timeline: Timeline, t: str, opts: _Options) -> dict:
    storage = table.storage
    where = f"table {table.name} at {storage.base_uri}"
    state = {i.state for i in timeline.instants if i.time == t and i.action == COMPACTION}
    if not state:
        done = any(i.time == t and i.action == COMMIT and i.is_completed for i in timeline.instants)
        pending = ", ".join(i.time for i in timeline.pending([COMPACTION])) or "none"
        raise TimelineError(f"compaction {t} of {where} is " + ("already completed" if done else "not scheduled")
                            + f"; pending compactions: {pending}")
    plan = read_compaction_plan(storage, t)
    requested = Instant(t, COMPACTION, State.REQUESTED)
    if State.INFLIGHT in state:   # an earlier run died: undo its files, back to requested (Hudi rolls it back)
        InstantCommit(storage, requested, keep_plan=True).abort()

    from pyhudi.reader.plan import table_schema
    from pyhudi.schema import arrow_to_avro, avro_json, with_meta_fields_avro

    schema_json = _latest_schema_json(timeline)
    avro = table.latest_avro_schema(timeline)
    schema = table_schema(table, timeline)
    if avro is None:
        avro = arrow_to_avro(pa.schema([f for f in schema if not f.name.startswith("_hoodie_")]), table.name)
    ctx = _CompactContext(
        storage=storage, instant_time=t, schema=schema,
        visible_instants=frozenset(i.time for i in timeline.completed_writes() if i.time < t),
        committed_before=timeline.instants[0].time if timeline.instants else None,
        ordering_field=opts.ordering_field, payload_class=opts.payload_class, bloom=opts.bloom,
        compression=opts.config.get(C.PARQUET_COMPRESSION),
        avro_schema_json=avro_json(with_meta_fields_avro(avro)))

    commit = InstantCommit(storage, requested, keep_plan=True)
    commit.start()
    try:
        crash_point("compaction.after_inflight")
        frame = _operations_frame(spark, plan, ctx)
        stats = [_compaction_stat(row) for row in collect_or_raise(frame)] if frame is not None else []
        extra = {"schema": schema_json or avro_json(avro)}
        extra.update(plan.extra_metadata or {})
        metadata = CommitMetadata(COMPACT_OPERATION_TYPE, stats, extra, compacted=True)
        crash_point("compaction.before_commit")
        commit.complete(metadata)   # files of failed or speculative attempts are reconciled away first
    except BaseException:
        commit.abort()   # back to the requested plan; nothing once the commit exists
        raise
    commit.finish()
    return metadata.to_json()


def _latest_schema_json(timeline: Timeline) -> str | None:
    """The writer schema string of the latest completed write, verbatim."""
    for instant in reversed(timeline.completed_writes()):
        schema = (timeline.read_metadata(instant).get("extraMetadata") or {}).get("schema")
        if schema:
            return schema
    return None


def _operations_frame(spark, plan: CompactionPlan, ctx: _CompactContext):
    """One Spark partition per operation; each task compacts its slice and returns one stats row."""
    if not plan.operations:
        return None
    rows = [(op.partition_path, op.file_id, op.base_instant, op.data_file, list(op.delta_files),
             int(op.metrics.get(TOTAL_LOG_FILES_SIZE, 0.0))) for op in plan.operations]
    try:
        rdd = spark.sparkContext.parallelize(rows, len(rows))
        ops = spark.createDataFrame(rdd, _OPS_DDL)
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext: let Spark spread the rows
        ops = spark.createDataFrame(rows, _OPS_DDL).repartition(len(rows))
    return ops.mapInArrow(lambda batches: _compact_batches(ctx, batches), COMPACTION_STATS_DDL)


def _compaction_stat(row) -> dict:
    stat = write_stat(row)
    stat.update({
        "totalLogRecords": row["total_log_records"], "totalLogFilesCompacted": row["total_log_files"],
        "totalLogSizeCompacted": row["total_log_size"], "totalUpdatedRecordsCompacted": row["total_updated_records"],
        "totalLogBlocks": row["total_log_blocks"], "totalCorruptLogBlock": row["total_corrupt_blocks"],
        "totalRollbackBlocks": row["total_rollback_blocks"],
        "runtimeStats": {"totalScanTime": row["scan_time_ms"],
                         "totalUpsertTime": row["write_time_ms"] if row["prev_commit"] != "null" else 0,
                         "totalCreateTime": row["write_time_ms"] if row["prev_commit"] == "null" else 0},
    })
    return stat


# --- executor side ------------------------------------------------------------------------------------------
def _compact_batches(ctx: _CompactContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for op in batch.to_pylist():
            yield from compact_file_slice(ctx, op).to_batches()


def _slice_of(op: dict) -> FileSlice:
    partition = op["partition_path"] or ""
    prefix = f"{partition}/" if partition else ""
    base = None
    if op["data_file"]:
        parsed = parse_base_file_name(op["data_file"])
        if parsed is None:
            raise CorruptFileError(f"compaction plan names {op['data_file']!r} as the base file of file group "
                                   f"{op['file_id']}, which is not a Hudi base file name")
        base = BaseFile(prefix + op["data_file"], op["file_id"], parsed[1], parsed[2], -1)
    logs = []
    for name in op["delta_files"] or []:
        parsed_log = parse_log_file_name(name)
        if parsed_log is None:
            raise CorruptFileError(f"compaction plan names {name!r} as a log file of file group {op['file_id']}, "
                                   "which is not a Hudi log file name")
        file_id, base_instant, version, token = parsed_log
        logs.append(LogFile(prefix + name, file_id, base_instant, version, token, -1))
    logs.sort(key=LogFile.sort_key)
    return FileSlice(partition, op["file_id"], op["base_instant"], base, logs)


def _log_counts(ctx: _CompactContext, slice_: FileSlice) -> dict:
    """What Hudi's log scanner reports: blocks read, corrupt and rollback blocks, records and distinct keys of the
    blocks that count."""
    from pyhudi.file_group.log_block import BlockType
    from pyhudi.file_group.log_file import read_log_bytes
    from pyhudi.reader.file_slice_reader import scan_log_blocks

    blocks = corrupt = rollbacks = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the merge already reported corrupt blocks
        for log in slice_.log_files:
            for block in read_log_bytes(ctx.storage.read_bytes(log.path), log.path, decode=False,
                                        include_corrupt=True):
                blocks += 1
                corrupt += block.block_type == BlockType.CORRUPT_BLOCK
                rollbacks += block.is_rollback
        scanned = scan_log_blocks(ctx.storage, slice_.log_files, ctx.visible_instants,
                                  committed_before=ctx.committed_before)
    records = 0
    keys: set[str] = set()
    for item in scanned:
        block = item.block
        if block.records is not None and block.records.num_rows:
            records += block.records.num_rows
            if "_hoodie_record_key" in block.records.column_names:
                keys.update(block.records["_hoodie_record_key"].to_pylist())
        for entry in block.delete_keys or []:
            records += 1
            keys.add(entry.record_key)
    return {"blocks": blocks, "corrupt": corrupt, "rollbacks": rollbacks, "records": records, "keys": keys}


def _count(mask: pa.Array) -> int:
    return int(pc.sum(mask.cast(pa.int64())).as_py() or 0) if len(mask) else 0


def compact_file_slice(ctx: _CompactContext, op: dict) -> pa.Table:
    """Merge one planned file slice into a new base file of the compaction instant; returns its stats row."""
    from pyhudi.reader.file_slice_reader import read_file_slice
    from pyhudi.writer.file_writer import task_token

    slice_ = _slice_of(op)
    started = time.monotonic()
    merged = read_file_slice(ctx.storage, slice_, ctx.schema, visible_instants=ctx.visible_instants,
                             ordering_field=ctx.ordering_field, payload_class=ctx.payload_class,
                             committed_before=ctx.committed_before)
    counts = _log_counts(ctx, slice_)
    scanned = time.monotonic()

    token, _ = task_token()
    name = base_file_name(slice_.file_id, token, ctx.instant_time)
    relative = f"{slice_.partition_path}/{name}" if slice_.partition_path else name
    merged = merged.sort_by("_hoodie_record_key")
    index = merged.column_names.index("_hoodie_file_name")
    merged = merged.set_column(index, merged.schema.field(index),
                               pa.array([name] * merged.num_rows, pa.string()))
    create_marker(ctx.storage, ctx.instant_time, relative, "MERGE" if slice_.base_file else "CREATE")
    out = write_base_file(ctx.storage, relative, merged, ctx.bloom, ctx.compression, ctx.avro_schema_json)
    written = time.monotonic()

    if slice_.base_file is not None:
        base_keys = read_base_file(ctx.storage, slice_.base_file.path,
                                   ["_hoodie_record_key"])["_hoodie_record_key"].combine_chunks()
        merged_keys = merged["_hoodie_record_key"].combine_chunks()
        in_base = pc.is_in(merged_keys, value_set=base_keys)
        from_logs = pc.is_in(merged_keys, value_set=pa.array(sorted(counts["keys"]), pa.string()))
        inserts = merged.num_rows - _count(in_base)
        updates = _count(pc.and_(in_base, from_logs))
        deletes = len(base_keys) - _count(pc.is_in(base_keys, value_set=merged_keys))
        prev = slice_.base_file.instant_time
    else:
        inserts, updates, deletes, prev = merged.num_rows, 0, 0, "null"
    row = {
        "partition_path": slice_.partition_path, "file_id": slice_.file_id, "path": out.path, "prev_commit": prev,
        "num_writes": out.num_rows, "num_inserts": inserts, "num_updates": updates, "num_deletes": deletes,
        "file_size": out.size, "min_key": out.min_key, "max_key": out.max_key,
        "total_log_records": counts["records"], "total_log_files": len(slice_.log_files),
        "total_log_size": int(op.get("total_log_size") or 0), "total_updated_records": len(counts["keys"]),
        "total_log_blocks": counts["blocks"], "total_corrupt_blocks": counts["corrupt"],
        "total_rollback_blocks": counts["rollbacks"], "scan_time_ms": int((scanned - started) * 1000),
        "write_time_ms": int((written - scanned) * 1000),
    }
    return pa.Table.from_pylist([{name: row.get(name) for name in COMPACTION_STATS_SCHEMA.names}],
                                schema=COMPACTION_STATS_SCHEMA)


__all__ = ["schedule_compaction", "execute_compaction", "compact", "should_compact", "run_inline_compaction_if_due",
           "read_compaction_plan", "generate_plan", "order_and_filter", "CompactionPlan", "CompactionOperation", "COMPACTION_PLAN_SCHEMA"]
