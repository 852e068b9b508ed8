"""WriteClient: one Hudi write (commit) from a Spark DataFrame.

    start instant -> key records -> dedup -> tag (index) -> plan file groups -> Spark jobs -> commit

The driver holds metadata only: the timeline, file listings, per-partition insert counts and one stat row per
written file. Records move between executors (mapInArrow, a shuffle, applyInArrow). The completed instant is
published last; any failure before it removes the files this instant's markers name and its pending instant.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import warnings

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from pyhudi import config as C
from pyhudi import errors
from pyhudi.errors import ConfigError, RecordKeyError, SchemaError
from pyhudi.file_group.base_file import META_COLUMNS, BloomSettings
from pyhudi.file_group.naming import new_file_id
from pyhudi.index import check_table_index, index_spec
from pyhudi.index import table_properties as index_table_properties
from pyhudi.index.stats import EXTRA_METADATA_KEY, IndexStats
from pyhudi.keygen import auto_record_keys, build_key_generator
from pyhudi.merge import IS_DELETED_FIELD, SUPPORTED_PAYLOADS
from pyhudi.schema import (arrow_to_avro, avro_json, avro_to_arrow, check_compatible, create_table_avro,
                           storage_schema, with_meta_fields_avro)
from pyhudi.spark_session import file_task_partitions
from pyhudi.storage import Storage
from pyhudi.table import COPY_ON_WRITE, HudiTable, write_partition_metadata
from pyhudi.timeline import (COMMIT, DELTA_COMMIT, METAFOLDER, REPLACE_COMMIT, TEMP_FOLDER, Instant, State, Timeline,
                             commit_metadata_bytes, transition_to_inflight)
from pyhudi.testing import crash_point
from pyhudi.writer.file_writer import (ARRIVAL_COLUMN, DELETE_COLUMN, FILE_ID_COLUMN, INSERT_COLUMN, PARTITION_PATH,
                                      RECORD_KEY, STATS_DDL, GroupState, WriteContext, write_file_group,
                                      write_sorted_files)
from pyhudi.writer.replace import (PARTITIONS_TO_DELETE, REPLACE_OPERATIONS, partitions_to_delete,
                                   replaced_file_ids)
from pyhudi.writer.transaction import WriteTransaction

_OPERATION_TYPES = {"upsert": "UPSERT", "insert": "INSERT", "bulk_insert": "BULK_INSERT", "delete": "DELETE",
                    "insert_overwrite": "INSERT_OVERWRITE", "insert_overwrite_table": "INSERT_OVERWRITE_TABLE",
                    "delete_partition": "DELETE_PARTITION"}
_SUPPORTED_OPERATIONS = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table",
                         "delete_partition")
# Operations that need no record key (Hudi generates keys for tables created without one).
AUTO_KEY_OPERATIONS = ("insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table", "delete_partition")
_SEQ_COLUMN = "_pyhudi_seq"
_SLOT_COLUMN = "_pyhudi_slot"


class WriteResult(str):
    """A completed write: equal to its instant time (so it can be used wherever the instant string was), with
    the commit's write stats and what the index lookup did (also in the commit's extraMetadata)."""

    def __new__(cls, instant_time: str, operation: str, write_stats: list[dict], index_stats: dict | None = None):
        result = super().__new__(cls, instant_time)
        result.instant_time = instant_time
        result.operation = operation
        result.write_stats = write_stats
        result.index_stats = index_stats or {}
        return result

    def __getnewargs__(self):
        return (self.instant_time, self.operation, self.write_stats, self.index_stats)

    @property
    def num_writes(self) -> int:
        return sum(s["numWrites"] for s in self.write_stats)


def write(df: DataFrame, path: str, options: dict | None = None, mode: str = "append") -> WriteResult:
    """Write `df` to the Hudi table at `path` with Hudi datasource `options`; returns the WriteResult (a str equal
    to the completed instant time)."""
    return WriteClient(df.sparkSession, str(path), options or {}).write(df, mode)


def delete_partitions(spark: SparkSession, path: str, partitions: list[str], options: dict | None = None) -> str:
    """Hudi's delete_partition operation: a replacecommit that drops every file group of `partitions`."""
    if isinstance(partitions, str):
        partitions = [partitions]
    if not partitions:
        raise ConfigError(f"delete_partitions on {path} needs at least one partition path")
    opts = {**(options or {}), C.OPERATION.key: "delete_partition", PARTITIONS_TO_DELETE: ",".join(partitions)}
    return write(spark.createDataFrame([], "_pyhudi_empty int"), path, opts)


class WriteClient:
    def __init__(self, spark: SparkSession, path: str, options: dict):
        self.spark = spark
        self.path = path
        self.storage = Storage(path)
        self.options = C.normalize_options(options)

    # --- entry point ----------------------------------------------------------------------------------------
    def write(self, df: DataFrame, mode: str = "append") -> WriteResult:
        mode = mode.lower()
        if mode not in ("append", "overwrite", "ignore", "error", "errorifexists"):
            raise ConfigError(f"write mode {mode!r} is not one of append, overwrite, ignore, errorifexists")
        config = C.HoodieConfig(self.options)
        operation = config.get(C.OPERATION)
        if operation not in _SUPPORTED_OPERATIONS:
            raise ConfigError(f"{C.OPERATION.key}={operation} is not supported by pyhudi yet; "
                              f"use one of {', '.join(_SUPPORTED_OPERATIONS)}")
        exists = HudiTable.exists(self.path)
        if exists and mode in ("error", "errorifexists"):
            raise errors.TimelineError(f"Hudi table at {self.path} already exists and mode is {mode}; "
                                       "use mode='append' to write to it or 'overwrite' to recreate it")
        if exists and mode == "ignore":
            return WriteResult(HudiTable.load(self.path).timeline().latest_time() or "", operation, [])

        incoming = _drop_meta_columns(df)
        table = HudiTable.load(self.path) if exists and mode != "overwrite" else None
        if table is not None:
            config = C.HoodieConfig({**table.properties.write_options(), **self._check_identity(table)})
        if operation == "delete_partition" and table is None:
            raise errors.NotAHudiTableError(f"cannot delete partitions of {self.path}: there is no Hudi table there "
                                            "(or mode='overwrite' would recreate it); check the path")
        resolved = _resolve_write_options(config, incoming, table)
        keygen = build_key_generator(resolved, resolved[C.TABLE_NAME.key])
        if operation == "delete_partition":   # the batch may be empty and carry no columns at all
            incoming = incoming.limit(0) if resolved.get(PARTITIONS_TO_DELETE) else incoming
            target_schema = avro_to_arrow(table.latest_avro_schema())
        else:
            _check_fields(incoming, keygen, resolved, config)
            target_schema = self._target_schema(incoming, table, resolved[C.TABLE_NAME.key], operation)

        if mode == "overwrite" and exists:
            _delete_table(self.storage)
        if table is None:
            table = HudiTable.create(self.path, _table_properties(resolved, keygen, target_schema))
        return _Write(self, table, config, resolved, keygen, operation, incoming, target_schema).run()

    def _check_identity(self, table: HudiTable) -> dict:
        """Options may not contradict the table's identity (key fields, partition fields, table type)."""
        props = table.properties
        check_table_index(table, self.options)   # a BUCKET table's layout is part of its identity
        checks = {
            C.RECORD_KEY.key: ",".join(props.record_key_fields),
            C.PARTITION_PATH.key: ",".join(props.partition_fields),
            C.TABLE_TYPE.key: props.table_type,
        }
        for key, table_value in checks.items():
            given = self.options.get(key)
            if given is not None and _norm_list(given) != _norm_list(table_value):
                raise ConfigError(f"table {props.name} at {self.path} has {key}={table_value!r} but the write "
                                  f"passes {given!r}; drop the option or write with mode='overwrite' to recreate "
                                  "the table")
        return self.options

    def _target_schema(self, incoming: DataFrame, table: HudiTable | None, table_name: str,
                       operation: str) -> pa.Schema:
        batch_schema = storage_schema(_arrow_schema(incoming.schema), table_name=table_name)
        avro = table.latest_avro_schema() if table is not None else None
        if avro is None:
            return batch_schema
        if operation == "delete":   # a delete batch may carry only the key fields
            return avro_to_arrow(avro)
        return check_compatible(avro_to_arrow(avro), batch_schema, table_name)


class _Write:
    """One commit in progress (kept separate so every step can reach the same state)."""

    def __init__(self, client: WriteClient, table: HudiTable, config: C.HoodieConfig, resolved: dict,
                 keygen, operation: str, incoming: DataFrame, target_schema: pa.Schema):
        self.spark = client.spark
        self.storage = table.storage
        self.table = table
        self.config = config
        self.resolved = resolved
        self.keygen = keygen
        self.operation = operation
        self.incoming = incoming
        self.target_schema = target_schema
        self.table_name = resolved[C.TABLE_NAME.key]
        self.precombine = resolved.get(C.PRECOMBINE.key)
        self.is_mor = table.properties.is_mor
        self.index = index_spec(config, keygen.record_key_fields, self.table_name)
        self.index_stats: IndexStats | None = None
        self.incoming_partitions: list[str] | None = None
        self._new_file_groups = 0   # file groups _assign_inserts plans for inserts
        self._bloom_lookup = None   # a BLOOM lookup whose counters arrive with the insert-count action
        self._release: list = []   # cached DataFrames / broadcasts of the index lookup, freed after the write

    def run(self) -> WriteResult:
        keyed = self._keyed(self._prepared())
        replace = self.operation in REPLACE_OPERATIONS
        if replace:   # overwritten file groups take no inserts (Hudi's insert-overwrite partitioner)
            self.config = C.HoodieConfig({**self.config.raw, C.SMALL_FILE_LIMIT.key: "0"}, warn_unknown=False)
        partitions_first = self._needs_partitions_first()
        single_action = self.index.is_bucket and not partitions_first
        if not single_action:   # several Spark actions read the batch: compute it once
            keyed = keyed.persist()
        transaction = WriteTransaction(self.table, self.resolved)
        try:
            partitions = None
            if partitions_first:   # a Spark action of its own; it also surfaces key errors early
                partitions = [row[0] for row in _collect_or_raise(keyed.select(PARTITION_PATH).distinct())]
                self.incoming_partitions = partitions
            if self.operation == "delete_partition":
                partitions = partitions_to_delete(self.table, self.resolved, partitions)
            action = REPLACE_COMMIT if replace else DELTA_COMMIT if self.is_mor else COMMIT
            requested, timeline = transaction.begin(action)
            instant_time = requested.time
            try:
                inflight = transition_to_inflight(self.storage, requested, commit_metadata_bytes(
                    _commit_metadata([], {}, _OPERATION_TYPES[self.operation], {} if replace else None)))
                crash_point("write.after_inflight")
                stats = [] if self.operation == "delete_partition" else \
                    self._write_files(keyed, timeline, instant_time)
                # Written partitions become visible to readers only with the commit, so their metadata files can
                # follow the data files (Hudi's write handles write them first; either order is safe to roll back).
                for partition in sorted({s["partitionPath"] for s in stats}):
                    write_partition_metadata(self.storage, partition, instant_time)
                replaced = replaced_file_ids(self.table.view(timeline=timeline), self.operation, partitions) \
                    if replace else None
                metadata = _commit_metadata(stats, {"schema": avro_json(self.avro_schema), **self._index_extra()},
                                            _OPERATION_TYPES[self.operation], replaced)
                transaction.complete(inflight, metadata)
            except BaseException:
                _abort(self.storage, requested)
                raise
            finally:
                transaction.end()
            crash_point("write.after_complete")
            self.storage.delete_dir(f"{TEMP_FOLDER}/{instant_time}")
            if self.is_mor and self.config.get(C.COMPACT_INLINE):
                from pyhudi.services.compaction import run_inline_compaction_if_due
                run_inline_compaction_if_due(self.spark, self.table.storage.base_uri, self.resolved)
            from pyhudi.services.clean import run_table_services_after_commit   # clean, then archive, if due
            run_table_services_after_commit(self.spark, self.table.storage.base_uri, self.resolved)
            return WriteResult(instant_time, self.operation, stats, self.index_stats.as_dict() if self.index_stats else {})
        finally:
            if not single_action:
                keyed.unpersist()

    def _needs_partitions_first(self) -> bool:
        """Whether the incoming partitions must be known before the lookup: a partition-scoped index reading
        base files (BLOOM, SIMPLE) for upserts and deletes, and the replace operations."""
        if self.operation in REPLACE_OPERATIONS:
            return True
        lookup = self.operation in ("upsert", "delete") and self.keygen.record_key_fields
        return bool(lookup) and not self.index.is_bucket and not self.index.is_global

    # --- record preparation -------------------------------------------------------------------------------
    @property
    def avro_schema(self) -> dict:
        return arrow_to_avro(self.target_schema, self.table_name)

    def _prepared(self) -> DataFrame:
        """Cast to the table's storage types, in table column order; missing nullable columns become null."""
        spark_schema = _spark_schema(self.target_schema)
        present = {c.lower(): c for c in self.incoming.columns}
        columns = []
        for fld in spark_schema.fields:
            source = present.get(fld.name.lower())
            column = F.col(f"`{source}`") if source else F.lit(None)
            columns.append(column.cast(fld.dataType).alias(fld.name))
        return self.incoming.select(*columns)

    def _keyed(self, prepared: DataFrame) -> DataFrame:
        keygen = self.keygen
        out_schema = T.StructType(prepared.schema.fields + [
            T.StructField(RECORD_KEY, T.StringType(), False), T.StructField(PARTITION_PATH, T.StringType(), False)])

        def add_keys(batches):
            for batch in batches:
                # Auto-generated keys need the instant time: _with_auto_keys fills them in once it exists.
                keys = keygen.record_keys(batch) if keygen.record_key_fields else pa.repeat(pa.scalar(""), batch.num_rows)
                paths = keygen.partition_paths(batch)
                yield pa.RecordBatch.from_arrays(batch.columns + [keys, paths],
                                                 names=batch.schema.names + [RECORD_KEY, PARTITION_PATH])

        return prepared.mapInArrow(add_keys, out_schema)

    # --- the Spark jobs -----------------------------------------------------------------------------------
    def _write_files(self, keyed: DataFrame, timeline: Timeline, instant_time: str) -> list[dict]:
        view = self.table.view(timeline=timeline)
        ctx = WriteContext(
            storage=self.storage, instant_time=instant_time, data_schema=self.target_schema,
            bloom=BloomSettings(self.config.get(C.BLOOM_FILTER_TYPE), self.config.get(C.BLOOM_NUM_ENTRIES),
                                self.config.get(C.BLOOM_FPP), self.config.get(C.BLOOM_DYNAMIC_MAX_ENTRIES)),
            compression=self.config.get(C.PARQUET_COMPRESSION),
            avro_schema_json=avro_json(with_meta_fields_avro(self.avro_schema)),
            payload_class=self.resolved[C.PAYLOAD_CLASS.key], ordering_field=self.precombine,
            max_file_size=self.config.get(C.MAX_FILE_SIZE), is_mor=self.is_mor,
            log_block_format=self.config.get(C.LOG_BLOCK_FORMAT), ordering_avro_type=self._ordering_avro_type(),
            table_avro_schema_json=avro_json(self.avro_schema))
        if not self.keygen.record_key_fields:
            keyed = _with_auto_keys(keyed, instant_time)
        if self.operation == "bulk_insert" and not self.index.is_bucket:   # a bucket table routes by key
            return self._bulk_insert(keyed, ctx)

        # With a partition-scoped index every version of a key reaches the same writer task (same stored
        # location, or the same insert slot, which hashes the key): it keeps the latest there (ordering field,
        # then arrival order), which spares a shuffle of the batch. A global index deduplicates across
        # partitions first.
        writer_combines = self._combines() and not self.index.is_global
        if writer_combines:
            deduped = keyed.withColumn(ARRIVAL_COLUMN, F.monotonically_increasing_id())
            ctx = dataclasses.replace(ctx, combine_in_writer=True)
        else:
            deduped = self._dedup(keyed)
        if self.operation == "delete":   # Hudi's delete carries no ordering value (natural order): it always wins
            deduped = deduped.withColumn(DELETE_COLUMN, F.lit(True))
            if self.precombine in deduped.columns:
                deduped = deduped.withColumn(self.precombine, F.lit(None).cast(deduped.schema[self.precombine].dataType))
        else:
            deleted = (F.coalesce(F.col(IS_DELETED_FIELD), F.lit(False))
                       if IS_DELETED_FIELD in deduped.columns else F.lit(False))
            deduped = deduped.withColumn(DELETE_COLUMN, deleted)

        existing = _group_states(view)
        tagged = self._tag(deduped, view, instant_time)
        if self.operation == "delete" or not writer_combines:
            # Deletes of keys that do not exist change nothing. (Before the writer's dedup they must stay: a
            # delete may still beat an insert of the same new key, so it travels to that key's insert slot.)
            tagged = tagged.filter(~(F.col(DELETE_COLUMN) & F.col(FILE_ID_COLUMN).isNull()))
        tagged = self._assign_inserts(tagged, view, timeline)
        try:
            ctx = dataclasses.replace(ctx, existing=existing)
            # One Spark partition per file group or so, as Hudi's UpsertPartitioner: the work of a task is the
            # file group it rewrites, not the few incoming rows that adaptive execution would pack into one task.
            spread = tagged.repartition(self._write_parallelism(existing), PARTITION_PATH, FILE_ID_COLUMN)
            stats_df = spread.groupBy(PARTITION_PATH, FILE_ID_COLUMN).applyInArrow(
                lambda table: write_file_group(ctx, table), STATS_DDL)
            stats = [_write_stat(row) for row in _collect_or_raise(stats_df)]
            self._finish_index_stats(stats)
            return stats
        finally:   # what the index lookup and _assign_inserts cached
            for item in self._release:
                item.unpersist()
            self._release.clear()

    def _write_parallelism(self, existing: dict) -> int:
        """Spark partitions for the file groups this write touches: the existing ones in the incoming partitions
        (all of them when those are not known) plus the new ones planned for inserts."""
        partitions = set(self.incoming_partitions) if self.incoming_partitions is not None else None
        groups = sum(1 for partition, _ in existing if partitions is None or partition in partitions)
        groups += self._new_file_groups
        if self.index.is_bucket:
            groups = max(groups, self.index.num_buckets * (len(partitions) if partitions is not None else 1))
        return file_task_partitions(self.spark, groups)

    def _combines(self) -> bool:
        """hoodie.combine.before.{insert,upsert,delete}: keep one record per key of the batch."""
        combine = {"upsert": C.COMBINE_BEFORE_UPSERT, "insert": C.COMBINE_BEFORE_INSERT,
                   "delete": C.COMBINE_BEFORE_DELETE, "insert_overwrite": C.COMBINE_BEFORE_INSERT,
                   "insert_overwrite_table": C.COMBINE_BEFORE_INSERT,
                   "bulk_insert": C.COMBINE_BEFORE_INSERT}[self.operation]
        return self.config.get(combine)

    def _dedup(self, keyed: DataFrame) -> DataFrame:
        if not self._combines():
            return keyed
        order = [F.col(_SEQ_COLUMN).desc()]
        if self.precombine and self.operation != "delete":
            order.insert(0, F.col(f"`{self.precombine}`").desc_nulls_last())
        # A global index keeps one record per key across partitions (Hudi's deduplicateRecords).
        keys = [RECORD_KEY] if self.index.is_global else [RECORD_KEY, PARTITION_PATH]
        window = Window.partitionBy(*keys).orderBy(*order)
        return (keyed.withColumn(_SEQ_COLUMN, F.monotonically_increasing_id())
                .withColumn("_pyhudi_rank", F.row_number().over(window))
                .filter(F.col("_pyhudi_rank") == 1).drop("_pyhudi_rank", _SEQ_COLUMN))

    def _tag(self, records: DataFrame, view, instant_time: str) -> DataFrame:
        """hoodie.index.type: set FILE_ID_COLUMN to the file group holding each record's key (null: a new key);
        see pyhudi.index for the index types. Fills self.index_stats."""
        from pyhudi.index import bloom, bucket, lookup

        spec = self.index
        stats = self.index_stats = IndexStats(spec.type)
        if spec.is_bucket:
            existing = bucket.existing_buckets(view, self.incoming_partitions, self.table_name, spec.num_buckets)
            stats.files_considered = len(existing)
            return bucket.tag(records, RECORD_KEY, PARTITION_PATH, FILE_ID_COLUMN,
                              list(spec.hash_fields), spec.num_buckets, existing, instant_time)
        no_location = records.withColumn(FILE_ID_COLUMN, F.lit(None).cast("string"))
        if self.operation in ("insert", "insert_overwrite", "insert_overwrite_table"):
            return no_location   # inserts are not looked up (Hudi: the index only tags upserts and deletes)
        partitions = None if spec.is_global else self.incoming_partitions
        base_files = view.latest_base_files(partitions)
        if not base_files:
            return no_location
        if spec.is_bloom:
            self._bloom_lookup = bloom.locations(self.spark, self.storage, records, base_files, spec.is_global,
                                                 spec.prune_by_ranges, FILE_ID_COLUMN, stats)
            self._release.extend(self._bloom_lookup.release)
            locations = self._bloom_lookup.locations
        else:
            stats.files_considered = stats.candidate_files = len(base_files)
            locations = lookup.stored_keys(self.spark, self.storage, [b.path for b in base_files], FILE_ID_COLUMN)
        return lookup.apply_locations(records, locations, FILE_ID_COLUMN, DELETE_COLUMN, spec.is_global,
                                      spec.update_partition_path)

    def _finish_index_stats(self, write_stats: list[dict]) -> None:
        """Outcome counters from the write stats: which file groups really held incoming keys."""
        stats = self.index_stats
        if stats is None:
            return
        touched = [s for s in write_stats if s["prevCommit"] != "null" and s["numUpdateWrites"] + s["numDeletes"]]
        stats.confirmed_files = len({(s["partitionPath"], s["fileId"]) for s in touched})
        stats.false_positive_files = max(0, stats.candidate_files - stats.confirmed_files)
        stats.updates = sum(s["numUpdateWrites"] + s["numDeletes"] for s in write_stats)
        stats.inserts = sum(s["numInserts"] for s in write_stats)
        if self.index.is_bucket:
            stats.keys_looked_up = stats.updates + stats.inserts

    def _index_extra(self) -> dict:
        """The commit's extraMetadata entry for the index stats (a JSON string, as Hudi's values are strings)."""
        return {EXTRA_METADATA_KEY: self.index_stats.to_json()} if self.index_stats else {}

    def _assign_inserts(self, tagged: DataFrame, view, timeline: Timeline) -> DataFrame:
        """Send inserts to small files first, then to new file groups sized near hoodie.parquet.max.file.size.
        The tagged records are cached so the index lookup runs once for this count and the write."""
        tagged = tagged.withColumn(INSERT_COLUMN, F.col(FILE_ID_COLUMN).isNull())
        if self.index.is_bucket:   # the bucket index gave every record its file group
            return tagged
        tagged = tagged.persist()
        self._release.append(tagged)
        is_insert = F.col(INSERT_COLUMN)
        rows = _collect_or_raise(tagged.groupBy(PARTITION_PATH, INSERT_COLUMN).count())
        counts = {row[0]: row[2] for row in rows if row[1]}
        if self.incoming_partitions is None:
            self.incoming_partitions = sorted({row[0] for row in rows})
        if self._bloom_lookup is not None:
            self._bloom_lookup.fill_stats(self.index_stats)
        elif self.index_stats is not None:
            self.index_stats.keys_looked_up = sum(row[2] for row in rows)
        if not counts:
            return tagged
        buckets = plan_insert_buckets(counts, view, _average_record_size(timeline, self.config), self.config)
        self._new_file_groups = len({row[3] for row in buckets})
        slots = self.spark.createDataFrame(buckets, "bucket_partition string, lo double, hi double, bucket_file string")
        slot = (F.abs(F.xxhash64(F.col(RECORD_KEY))) % 1_000_000) / 1_000_000.0
        inserts = (tagged.filter(is_insert).withColumn(_SLOT_COLUMN, slot)
                   .join(F.broadcast(slots), (F.col(PARTITION_PATH) == F.col("bucket_partition"))
                         & (F.col(_SLOT_COLUMN) >= F.col("lo")) & (F.col(_SLOT_COLUMN) < F.col("hi")))
                   .withColumn(FILE_ID_COLUMN, F.col("bucket_file"))
                   .drop(_SLOT_COLUMN, "bucket_partition", "lo", "hi", "bucket_file"))
        return tagged.filter(~is_insert).unionByName(inserts)

    def _ordering_avro_type(self):
        """The precombine field's Avro type: it picks the orderingVal branch of delete-block records."""
        for fld in self.avro_schema["fields"]:
            if self.precombine and fld["name"].lower() == self.precombine.lower():
                return fld["type"]
        return None

    def _bulk_insert(self, keyed: DataFrame, ctx: WriteContext) -> list[dict]:
        # Files are cut near hoodie.parquet.max.file.size by the average record size of earlier commits (or
        # hoodie.copyonwrite.record.size.estimate), as inserts are planned.
        record_size = _average_record_size(self.table.timeline(), self.config)
        ctx = dataclasses.replace(ctx, records_per_file=max(1, self.config.get(C.MAX_FILE_SIZE) // record_size))
        parallelism = self.config.get(C.BULK_INSERT_PARALLELISM) or None
        ordered = keyed.repartitionByRange(parallelism, PARTITION_PATH, RECORD_KEY) if parallelism \
            else keyed.orderBy(PARTITION_PATH, RECORD_KEY)
        ordered = ordered.sortWithinPartitions(PARTITION_PATH, RECORD_KEY)
        stats_df = ordered.mapInArrow(lambda batches: write_sorted_files(ctx, batches), STATS_DDL)
        return [_write_stat(row) for row in _collect_or_raise(stats_df)]


# --- planning (driver, metadata only) -------------------------------------------------------------------------
def _with_auto_keys(keyed: DataFrame, instant_time: str) -> DataFrame:
    """Hudi's auto-generated record keys `<instant>_<sparkPartitionId>_<rowId>` for a table without a record key."""
    schema = keyed.schema

    def assign(batches):
        from pyspark import TaskContext
        partition_id, first_row = TaskContext.get().partitionId(), 0
        for batch in batches:
            keys = auto_record_keys(instant_time, partition_id, first_row, batch.num_rows)
            first_row += batch.num_rows
            yield batch.set_column(batch.schema.get_field_index(RECORD_KEY), RECORD_KEY, keys)

    return keyed.mapInArrow(assign, schema)


def _average_record_size(timeline: Timeline, config: C.HoodieConfig) -> int:
    """Bytes per record from the latest commits that wrote enough data, else hoodie.copyonwrite.record.size.estimate."""
    threshold = config.get(C.SMALL_FILE_LIMIT) * 1.0  # Hudi: hoodie.record.size.estimation.threshold = 1.0 x limit
    for instant in reversed(timeline.completed_writes()[-20:]):
        meta = timeline.read_metadata(instant)
        # base files only (log files hold other encodings), as Hudi reads only the commit timeline
        stats = [s for group in (meta.get("partitionToWriteStats") or {}).values() for s in group
                 if "logVersion" not in s]
        total_bytes = sum(s.get("totalWriteBytes", 0) for s in stats)
        total_records = sum(s.get("numWrites", 0) for s in stats)
        if total_records and total_bytes > threshold:
            return max(1, total_bytes // total_records)
    return config.get(C.RECORD_SIZE_ESTIMATE)


def _group_states(view) -> dict[tuple[str, str], GroupState]:
    """Per existing file group: its latest base file and where new log files go (metadata for executors)."""
    pending = view.pending_compaction_groups
    states = {}
    for key, group in view.file_groups.items():
        latest = group.latest_slice
        base = next((s.base_file for s in reversed(group.slices) if s.base_file is not None), None)
        log_base = pending.get(key, latest.base_instant)
        versions = [log.version for s in group.slices if s.base_instant == log_base for log in s.log_files]
        states[key] = GroupState(base.path if base else None, base.instant_time if base else "null", log_base,
                                 max(versions, default=0) + 1)
    return states


def plan_insert_buckets(counts: dict, view, record_size: int, config: C.HoodieConfig) -> list[tuple]:
    """Per partition, weighted slots [lo, hi) -> file id: small files by free capacity, then new file groups."""
    max_size = config.get(C.MAX_FILE_SIZE)
    small_limit = config.get(C.SMALL_FILE_LIMIT)
    per_file = max(1, max_size // record_size)
    if not config.get(C.AUTO_SPLIT_INSERTS):
        per_file = config.get(C.INSERT_SPLIT_SIZE)
    slices_by_partition: dict[str, list] = {}
    if small_limit > 0:
        # Merge-on-read: only slices without log files (and not being compacted) take inserts, as in Hudi for
        # an index that cannot index log files.
        for slice_ in view.latest_slices(counts.keys()):
            if slice_.base_file is None or slice_.log_files:
                continue
            if (slice_.partition_path, slice_.file_id) in view.pending_compaction_groups:
                continue
            slices_by_partition.setdefault(slice_.partition_path, []).append(slice_.base_file)
    rows = []
    for partition, total in sorted(counts.items()):
        assignments: list[tuple[str, int]] = []
        remaining = total
        for base in sorted(slices_by_partition.get(partition, []), key=lambda b: b.size):
            if remaining <= 0 or base.size >= small_limit:
                continue
            capacity = max(0, (max_size - base.size) // record_size)
            take = min(capacity, remaining)
            if take > 0:
                assignments.append((base.file_id, take))
                remaining -= take
        while remaining > 0:
            take = min(per_file, remaining)
            assignments.append((new_file_id(), take))
            remaining -= take
        lo = 0.0
        for index, (file_id, take) in enumerate(assignments):
            hi = 1.01 if index == len(assignments) - 1 else lo + take / total
            rows.append((partition, lo, hi, file_id))
            lo = hi
    return rows


def _write_stat(row) -> dict:
    stat = {
        "fileId": row["file_id"], "path": row["path"], "cdcStats": None, "prevCommit": row["prev_commit"],
        "numWrites": row["num_writes"], "numDeletes": row["num_deletes"], "numUpdateWrites": row["num_updates"],
        "numInserts": row["num_inserts"], "totalWriteBytes": row["file_size"], "totalWriteErrors": 0,
        "tempPath": None, "partitionPath": row["partition_path"], "totalLogRecords": 0,
        "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0,
        "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
        "fileSizeInBytes": row["file_size"], "minEventTime": None, "maxEventTime": None,
        "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
    }
    if row["log_version"] is not None:   # HoodieDeltaWriteStat
        stat.update({"logVersion": row["log_version"], "logOffset": 0, "baseFile": row["base_file"],
                     "logFiles": [row["path"].rsplit("/", 1)[-1]]})
    return stat


def _commit_metadata(stats: list[dict], extra: dict, operation_type: str, replaced: dict | None = None) -> dict:
    """HoodieCommitMetadata JSON; with `replaced` ({partition: [file ids]}) HoodieReplaceCommitMetadata."""
    by_partition: dict[str, list] = {}
    for stat in stats:
        by_partition.setdefault(stat["partitionPath"], []).append(stat)
    metadata = {"partitionToWriteStats": by_partition, "compacted": False, "extraMetadata": extra,
                "operationType": operation_type}
    if replaced is not None:
        metadata["partitionToReplaceFileIds"] = replaced
    return metadata


def _abort(storage: Storage, requested: Instant) -> None:
    """Undo a failed write: delete the data files its markers name, the markers and its pending instant."""
    marker_root = f"{TEMP_FOLDER}/{requested.time}"
    prefix = storage.full(marker_root) + "/"
    for info in storage.list_files(marker_root, recursive=True):
        data_file = re.sub(r"\.marker\.[A-Z]+$", "", info.path[len(prefix):])
        storage.delete_file(data_file)
    storage.delete_dir(marker_root)
    for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
        storage.delete_file(f"{METAFOLDER}/{requested.with_state(state).file_name}")


def _delete_table(storage: Storage) -> None:
    if storage.is_local:
        shutil.rmtree(storage.base_path, ignore_errors=True)
    else:
        storage.delete_dir("")


# --- options and validation -------------------------------------------------------------------------------------
def _norm_list(text: str) -> str:
    """Comparable form of a field list: trimmed, and without CustomKeyGenerator's ':type' suffixes."""
    return ",".join(part.split(":")[0].strip() for part in str(text).split(",") if part.strip())


def _resolve_write_options(config: C.HoodieConfig, incoming: DataFrame, table: HudiTable | None) -> dict:
    resolved = config.string_options()
    name = resolved.get(C.TABLE_NAME.key) or (table.name if table else None)
    if not name:
        raise ConfigError(f"option {C.TABLE_NAME.key} is required to create a table; pass e.g. "
                          f"{{'{C.TABLE_NAME.key}': 'trips'}}")
    resolved[C.TABLE_NAME.key] = name
    if not resolved.get(C.RECORD_KEY.key):
        operation = config.get(C.OPERATION)
        if operation not in AUTO_KEY_OPERATIONS:
            raise ConfigError(f"table {name} has no record key, so {C.OPERATION.key}={operation} cannot find the "
                              f"records to change; set {C.RECORD_KEY.key} (SQL: primaryKey) to the column(s) that "
                              f"identify a record, or use one of {', '.join(AUTO_KEY_OPERATIONS)}")
    if not resolved.get(C.PRECOMBINE.key) and table is None and "ts" in incoming.columns:
        resolved[C.PRECOMBINE.key] = "ts"   # Hudi's default ordering field
    payload = resolved.get(C.PAYLOAD_CLASS.key) or (table.properties.get("hoodie.compaction.payload.class")
                                                    if table else None) or C.PAYLOAD_CLASS.default
    if payload not in SUPPORTED_PAYLOADS:
        raise ConfigError(f"{C.PAYLOAD_CLASS.key}={payload} is not supported; use one of "
                          f"{', '.join(SUPPORTED_PAYLOADS)}")
    resolved[C.PAYLOAD_CLASS.key] = payload
    if config.get(C.METADATA_ENABLE):
        warnings.warn("hoodie.metadata.enable=true is ignored: pyhudi does not write the metadata table",
                      stacklevel=4)
    if table is not None and not table.properties.populate_meta_fields:
        raise ConfigError(f"table {name} was created with hoodie.populate.meta.fields=false; pyhudi reads such "
                          "tables but cannot write to them yet (it needs _hoodie_record_key to index records)")
    return resolved


def _check_fields(incoming: DataFrame, keygen, resolved: dict, config: C.HoodieConfig) -> None:
    columns = {c.lower() for c in incoming.columns}
    name = resolved[C.TABLE_NAME.key]
    available = ", ".join(incoming.columns)
    for field in keygen.record_key_fields:
        if field.split(".")[0].lower() not in columns:
            raise RecordKeyError(f"record key field {field!r} of table {name} is not in the batch "
                                 f"(columns: {available}); add it or fix {C.RECORD_KEY.key}")
    for field in keygen.partition_path_fields:
        if field.split(".")[0].lower() not in columns:
            raise errors.PartitionPathError(f"partition path field {field!r} of table {name} is not in the batch "
                                            f"(columns: {available}); add it or fix {C.PARTITION_PATH.key}")
    precombine = resolved.get(C.PRECOMBINE.key)
    if precombine and config.get(C.OPERATION) != "delete" and precombine.lower() not in columns:
        raise SchemaError(f"precombine field {precombine!r} of table {name} is not in the batch "
                          f"(columns: {available}); add it or set {C.PRECOMBINE.key}")


def _table_properties(resolved: dict, keygen, schema: pa.Schema) -> dict:
    props = {
        "hoodie.table.name": resolved[C.TABLE_NAME.key],
        "hoodie.table.type": resolved.get(C.TABLE_TYPE.key, COPY_ON_WRITE),
        "hoodie.table.keygenerator.class": keygen.java_class,
        "hoodie.datasource.write.hive_style_partitioning": resolved.get(C.HIVE_STYLE.key, "false").lower(),
        "hoodie.datasource.write.partitionpath.urlencode": resolved.get(C.URL_ENCODE.key, "false").lower(),
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.populate.meta.fields": "true",
        "hoodie.table.create.schema": avro_json(create_table_avro(schema, resolved[C.TABLE_NAME.key])),
    }
    if keygen.record_key_fields:   # Hudi omits the key of a table with auto-generated record keys
        props["hoodie.table.recordkey.fields"] = ",".join(keygen.record_key_fields)
    if keygen.partition_path_fields:   # plain names, also for CustomKeyGenerator's "field:type" form
        props["hoodie.table.partition.fields"] = ",".join(keygen.partition_path_fields)
    if resolved.get(C.PRECOMBINE.key):
        props["hoodie.table.precombine.field"] = resolved[C.PRECOMBINE.key]
    if props["hoodie.table.type"] == "MERGE_ON_READ":
        props["hoodie.compaction.payload.class"] = resolved[C.PAYLOAD_CLASS.key]
    props.update({k: v for k, v in resolved.items() if k.startswith("hoodie.keygen.")})
    props.update(index_table_properties(index_spec(C.HoodieConfig(resolved, warn_unknown=False),
                                                   keygen.record_key_fields, props["hoodie.table.name"])))
    return props


def _drop_meta_columns(df: DataFrame) -> DataFrame:
    present = [c for c in df.columns if c in META_COLUMNS]
    return df.drop(*present) if present else df


def _arrow_schema(spark_schema: T.StructType) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema
    return to_arrow_schema(spark_schema, timezone="UTC", prefers_large_types=False)


def _spark_schema(arrow_schema: pa.Schema) -> T.StructType:
    from pyspark.sql.pandas.types import from_arrow_schema
    return from_arrow_schema(arrow_schema)


_ERROR_PATTERN = re.compile(r"pyhudi\.errors\.(\w+): (.*?)(?:\n|$)")


def _collect_or_raise(df: DataFrame) -> list:
    """collect(), turning a PyHudiError raised inside an executor back into the same error on the driver."""
    try:
        return df.collect()
    except Exception as exc:  # noqa: BLE001 - rethrown below unless it carries one of our errors
        match = _ERROR_PATTERN.search(str(exc))
        if match and isinstance(getattr(errors, match.group(1), None), type):
            raise getattr(errors, match.group(1))(match.group(2)) from None
        raise
