"""pyhudi.write and delete_partitions: one write = one transaction running the write action, then the post-commit
hooks.

    validate options -> [overwrite: new table first] -> transaction.begin -> inflight -> action writes files ->
    transaction.complete (reconcile, publish) | abort -> heartbeat stopped -> post-commit hooks

The steps from begin to the logged commit are the instant skeleton every data-writing action shares
(pyhudi.commit.run.run_instant); the write brings its transaction's begin, complete and end.

Once the completed instant exists the write has happened: nothing after it (lock release, heartbeat, hooks) can
undo it or turn it into an error.
"""

from __future__ import annotations

import time
from typing import cast
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from pyhudi import config as C
from pyhudi import errors
from pyhudi.spark import progress
from pyhudi.client import overwrite
from pyhudi.client.hooks import run_post_commit_hooks
from pyhudi.client.ignored_options import warn_ignored
from pyhudi.commit.instant_commit import InstantCommit
from pyhudi.commit.metadata import CommitMetadata
from pyhudi.commit.run import run_instant
from pyhudi.errors import ConfigError
from pyhudi.keygen import build_key_generator
from pyhudi.keygen.generator import KeyGenerator
from pyhudi.schema import avro_to_arrow
from pyhudi.services.clean import trigger as clean_trigger
from pyhudi.services.clean.run import start_async_clean
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.testing import crash_point
from pyhudi.transaction import WriteTransaction
from pyhudi.client.upgrade import upgrade_if_asked
from pyhudi.writer.options import (SUPPORTED_OPERATIONS, check_fields, check_identity, data_columns,
                                   drop_meta_columns, resolve_write_options, table_properties, target_schema)
from pyhudi.writer.write_action import WriteAction


@dataclass(frozen=True)
class WriteResult:
    """A completed write: its instant time (also `str(result)`, so a result can stand for its instant in read
    options), operation, the commit's write stats, what the index lookup did (also in the commit's extraMetadata)
    and the post-commit services that failed (each reported by a warning; the write itself is committed)."""

    instant_time: str
    operation: str
    write_stats: list[dict] = field(default_factory=list)
    index_stats: dict = field(default_factory=dict)
    failed_services: list[str] = field(default_factory=list)

    def __post_init__(self):
        object.__setattr__(self, "instant_time", str(self.instant_time))
        object.__setattr__(self, "index_stats", self.index_stats or {})
        object.__setattr__(self, "failed_services", list(self.failed_services or []))

    def __str__(self) -> str:
        return self.instant_time

    def __format__(self, spec: str) -> str:
        return format(self.instant_time, spec)

    def __hash__(self) -> int:
        return hash(self.instant_time)   # equal results share their instant; the stats lists are not hashable

    @property
    def num_writes(self) -> int:
        """Records written (Hudi's numWrites summed over the files of the commit)."""
        return sum(s.get("numWrites", 0) for s in self.write_stats)

    @property
    def bytes_written(self) -> int:
        """Bytes of the files the commit wrote (totalWriteBytes)."""
        return sum(s.get("totalWriteBytes", 0) for s in self.write_stats)

    @property
    def write_amplification(self) -> float | None:
        """Bytes written / bytes of the records that changed (inserted, updated or deleted; each file's records
        valued at its bytes per record): 1 for log files and new files, about records per file / changed
        records for a copy-on-write rewrite. None when nothing changed."""
        changed = 0.0
        for s in self.write_stats:
            records = s.get("numInserts", 0) + s.get("numUpdateWrites", 0) + s.get("numDeletes", 0)
            per_record = s.get("totalWriteBytes", 0) / max(1, s.get("numWrites", 0) or records)
            changed += records * per_record
        return round(self.bytes_written / changed, 2) if changed else None


def write(df: DataFrame, path: str, options: dict | None = None, mode: str = "append") -> WriteResult:
    """Write `df` to the Hudi table at `path` with Hudi datasource `options`; returns the WriteResult (its
    `.instant_time` is the completed instant)."""
    return WriteClient(df.sparkSession, str(path), options or {}).write(df, mode)


def delete_partitions(spark: SparkSession, path: str, partitions: list[str] | str,
                      options: dict | None = None) -> WriteResult:
    """Hudi's delete_partition operation: a replacecommit that drops every file group of `partitions`."""
    if isinstance(partitions, str):
        partitions = [partitions]
    if not partitions:
        raise ConfigError(f"delete_partitions on {path} needs at least one partition path")
    opts = {**(options or {}), C.OPERATION.key: "delete_partition", C.PARTITIONS_TO_DELETE.key: ",".join(partitions)}
    return write(spark.createDataFrame([], "_pyhudi_empty int"), path, opts)


class WriteClient:
    def __init__(self, spark: SparkSession, path: str, options: dict):
        self.spark = spark
        self.path = path
        self.storage = Storage(path)
        options = C.normalize_options(options)
        # the clean trigger's keys (services/clean/trigger.py) travel beside the write's config to the clean
        self.service_options = {k: v for k, v in options.items() if k in clean_trigger.CLEAN_TRIGGER_KEYS}
        self.options = {k: v for k, v in options.items() if k not in self.service_options}

    def write(self, df: DataFrame, mode: str = "append") -> WriteResult:
        mode = mode.lower()
        if mode not in ("append", "overwrite", "ignore", "error", "errorifexists"):
            raise ConfigError(f"write mode {mode!r} is not one of append, overwrite, ignore, errorifexists")
        config = C.HoodieConfig(self.options)
        C.CleanTriggerConfig.from_options(self.service_options)   # a bad value raises before anything is written
        warn_ignored(self.options, f"table at {self.path}")
        operation = C.WriteConfig.from_options(config).operation
        if operation not in SUPPORTED_OPERATIONS:
            raise ConfigError(f"{C.OPERATION.key}={operation} is not supported by pyhudi yet; "
                              f"use one of {', '.join(SUPPORTED_OPERATIONS)}")
        exists = HudiTable.exists(self.path)
        if exists and mode in ("error", "errorifexists"):
            raise errors.TimelineError(f"Hudi table at {self.path} already exists and mode is {mode}; "
                                       "use mode='append' to write to it or 'overwrite' to recreate it")
        if exists and mode == "ignore":
            return WriteResult(HudiTable.load(self.path).timeline().latest_time() or "", operation, [])

        table = HudiTable.load(self.path) if exists and mode != "overwrite" else None
        if table is not None:
            table = upgrade_if_asked(self.spark, table, self.options)   # hoodie.write.auto.upgrade
            table.check_writable()
        # a table without a record key: an upsert or delete of stored rows is keyed by their own meta columns
        prepped = table is not None and not table.properties.record_key_fields and operation in ("upsert", "delete")
        incoming = drop_meta_columns(df, keep_keys=prepped)
        if table is not None:
            config = C.HoodieConfig({**table.properties.write_options(),
                                     **check_identity(table, self.path, self.options)})
        if operation == "delete_partition" and table is None:
            raise errors.NotAHudiTableError(f"cannot delete partitions of {self.path}: there is no Hudi table there "
                                            "(or mode='overwrite' would recreate it); check the path")
        wc = resolve_write_options(config, incoming, table).with_options(self.service_options)
        if wc.insert_drop_duplicates and operation == "upsert":   # as Hudi: dropping stored keys leaves inserts
            operation = "insert"
            wc = wc.with_values(operation=operation, combine_before_insert=True)
        name = cast(str, wc.table_name)   # resolve_write_options refuses a write without one
        keygen = build_key_generator(dict(wc.options), name)
        data = data_columns(incoming, operation, name)   # without an upsert's delete flag
        if operation == "delete_partition":   # the batch may be empty and carry no columns at all
            incoming = incoming.limit(0) if wc.partitions_to_delete else incoming
            avro = cast(HudiTable, table).latest_avro_schema()   # the table exists (checked above)
            if avro is None:
                raise errors.SchemaError(f"cannot delete partitions of table {name} at {self.path}: it has no schema "
                                         "yet (no commit and no create schema); write to it first")
            schema = avro_to_arrow(avro)
        else:
            check_fields(data, keygen, wc)
            schema = target_schema(data, table, name, operation)

        def write_to(path: str) -> WriteResult:
            new = table or HudiTable.create(path, self._new_table_properties(wc, keygen, schema))
            action = WriteAction(self.spark, new, wc, keygen, incoming, schema)
            return run_write(self.spark, new, action, wc.config)

        if mode == "overwrite" and exists:
            if self.storage.is_local:
                return overwrite.overwrite_local(self.spark, self.storage, write_to)
            incoming = overwrite.materialise(incoming)
            overwrite.delete_table(self.storage)
        return write_to(self.path)

    @staticmethod
    def _new_table_properties(wc: C.WriteConfig, keygen: KeyGenerator, schema: pa.Schema) -> dict:
        """hoodie.properties of a new table (from the options text, as Hudi stores it);
        hoodie.table.timeline.timezone is stored when given (as Hudi: without it the table's timeline is in LOCAL
        time)."""
        props = table_properties(dict(wc.options), keygen, schema)
        if wc.given("timeline_timezone"):
            props[C.TIMELINE_TIMEZONE.key] = wc.timeline_timezone
        return props


def run_write(spark: SparkSession, table: HudiTable, action: WriteAction, config: C.HoodieConfig) -> WriteResult:
    """One write action inside one transaction (the instant skeleton, commit/run.py), then the post-commit hooks;
    `config` is the write's options, parsed once (WriteConfig.config), which the services after it read too."""
    transaction = WriteTransaction(table, config.string_options())
    started = time.monotonic()
    if clean_trigger.clean_async(config):     # hoodie.clean.async: the clean runs beside the write (preWrite)
        start_async_clean(spark, table.storage.base_uri, config)
    planned: dict = {}

    def begin() -> InstantCommit:
        action.prepare()
        commit, planned["timeline"] = transaction.begin(action.timeline_action)
        return commit

    def work(commit: InstantCommit) -> CommitMetadata:
        crash_point("write.after_inflight")
        with progress.tracked(spark, f"{action.operation} {table.name}"):
            return action.write(commit.instant_time, planned["timeline"])

    def end(commit: InstantCommit | None) -> None:
        try:
            transaction.end(commit)
        finally:
            action.release()

    commit, metadata = run_instant(begin, work, label=action.operation, started=started,
                                   inflight=action.inflight_metadata(), complete=transaction.complete, end=end,
                                   after_complete=lambda: crash_point("write.after_complete"))
    failed = run_post_commit_hooks(spark, table, config, commit.instant_time)
    return WriteResult(commit.instant_time, action.operation, [s.to_json() for s in metadata.write_stats],
                       action.index_stats_dict(),
                       failed)
