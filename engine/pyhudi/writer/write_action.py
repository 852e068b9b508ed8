"""The write action: one upsert, insert, bulk_insert, delete or replace operation from a Spark DataFrame.

    prepare (choose the strategy, key records) -> [instant begun by the client] -> the strategy writes files
    (staged.py | one_job.py | bulk_insert.py, markers first) -> commit metadata

The strategy is chosen once in prepare (writer/strategy.py: WriteStrategy) and handed its inputs whole at write time
(WriteJob). The driver holds metadata only: the timeline, file listings, per-partition insert counts and one stat
row per written file. Records move between executors (mapInArrow, a shuffle, applyInArrow). The instant itself
(begin, complete, abort) belongs to the transaction and the commit protocol (pyhudi.commit.run, instant_commit). The
batch's column transformations (types, keys, dedup, delete flags) are in writer/batch.py.
"""

from __future__ import annotations

import dataclasses
import functools

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from pyhudi import config as C
from pyhudi.cdc import cdc_logging_mode
from pyhudi.commit.metadata import SQL_WRITES_PREPPED_KEY, CommitMetadata, WriteStat, operation_type
from pyhudi.commit.spark_jobs import collect_or_raise
from pyhudi.file_group.base_file import BloomSettings
from pyhudi.errors import WriteConflictError
from pyhudi.index import index_spec
from pyhudi.index.stats import IndexStats
from pyhudi.schema import arrow_to_avro, avro_json, with_meta_fields_avro
from pyhudi.table import HudiTable, write_partition_metadata
from pyhudi.timeline import COMMIT, DELTA_COMMIT, REPLACE_COMMIT, Timeline
from pyhudi.writer.file_writer import PARTITION_PATH, RECORD_KEY, WriteContext
from pyhudi.writer.options import PREPPED_KEY_COLUMN
from pyhudi.writer.batch import keyed_batch, prepared_batch
from pyhudi.writer.planning import inserts_to_logs, with_auto_keys
from pyhudi.writer.replace import (REPLACE_OPERATIONS, check_not_replacing_written, partitions_to_delete,
                                   replaced_file_ids)
from pyhudi.writer import bulk_insert, one_job, staged, virtual_keys
from pyhudi.writer.strategy import WriteJob, WriteStrategy, choose_strategy
from pyhudi.writer.tagging import index_extra

# one entry function per strategy (writer/strategy.py), each taking the WriteJob
STRATEGIES = {"staged": staged.write, "one_job": one_job.write, "bulk_insert": bulk_insert.write}


class WriteAction:
    """One upsert/insert/bulk_insert/delete or replace operation: prepare the batch and choose its strategy, then
    write one instant's files with it and describe them (the commit itself belongs to the transaction and the
    commit protocol)."""

    def __init__(self, spark: SparkSession, table: HudiTable, wc: C.WriteConfig, keygen, incoming: DataFrame,
                 target_schema: pa.Schema):
        self.spark = spark
        self.storage = table.storage
        self.table = table
        self.wc = wc   # the write's options, parsed and resolved against the table (config.write_config)
        self.keygen = keygen
        self.operation = wc.operation
        self.incoming = incoming
        self.target_schema = target_schema
        self.table_name = wc.table_name
        self.precombine = wc.precombine_field
        self.is_mor = table.properties.is_mor
        self.index = index_spec(wc.options, keygen.record_key_fields, self.table_name)
        # hoodie.populate.meta.fields=false: stored keys come from the data (see writer/virtual_keys.py)
        self.virtual_keys = None if table.properties.populate_meta_fields else keygen
        if self.virtual_keys is not None:
            virtual_keys.check(self.table_name, keygen, table.properties.table_type, self.index.type)
        self.strategy: WriteStrategy | None = None   # chosen by prepare
        self.index_stats: IndexStats | None = None
        self.incoming_partitions: list[str] | None = None   # collected by prepare when the strategy needs them
        self.partitions: list[str] | None = None   # ... and for delete_partition, the partitions it drops
        self.keyed: DataFrame | None = None
        self._prepared: DataFrame | None = None   # the batch in table types, before keying

    # --- the action's steps (the client runs them inside a transaction) -----------------------------------
    @property
    def is_replace(self) -> bool:
        return self.operation in REPLACE_OPERATIONS

    @property
    def timeline_action(self) -> str:
        return REPLACE_COMMIT if self.is_replace else DELTA_COMMIT if self.is_mor else COMMIT

    def prepare(self) -> None:
        """Choose the strategy, key the batch and, where the strategy needs them, find its partitions (a Spark
        action of its own, which also surfaces key errors before any instant exists)."""
        self._prepared = prepared_batch(self.incoming, self.target_schema)
        if self.is_replace:   # overwritten file groups take no inserts (Hudi's insert-overwrite partitioner)
            self.wc = dataclasses.replace(self.wc, small_file_limit=0)
        strategy = self.strategy = choose_strategy(self.operation, self.index, self._one_job_fit,
                                                   self._needs_partitions_first, bool(self.keygen.record_key_fields))
        if not strategy.keys_in_task:
            keyed = keyed_batch(self._prepared, self.keygen)
            if self._drops_stored_keys:
                keyed = self._without_stored_keys(keyed)
            if strategy.cached:   # several Spark actions read the batch: compute it once
                keyed = keyed.persist()
            self.keyed = keyed
        if strategy.partitions_first:
            self.partitions = [row[0] for row in collect_or_raise(self.keyed.select(PARTITION_PATH).distinct())]
            self.incoming_partitions = self.partitions
        if self.operation == "delete_partition":
            self.partitions = partitions_to_delete(self.table, self.wc.partitions_to_delete, self.partitions)

    def inflight_metadata(self) -> CommitMetadata:
        """What the inflight instant holds: the operation, no stats yet (as Hudi writes it)."""
        return CommitMetadata(self.operation_type, replaced_file_ids={} if self.is_replace else None)

    def write(self, instant_time: str, timeline: Timeline) -> CommitMetadata:
        """Write this instant's data files with the chosen strategy (Spark jobs, markers first) and return its
        commit metadata."""
        stats = [] if self.operation == "delete_partition" else self._write_files(timeline, instant_time)
        self._check_pending_clustering(stats, timeline)
        # Written partitions become visible to readers only with the commit, so their metadata files can
        # follow the data files (Hudi's write handles write them first; either order is safe to roll back).
        for partition in sorted({s.partition_path for s in stats}):
            write_partition_metadata(self.storage, partition, instant_time)
        replaced = replaced_file_ids(self.table.view(timeline=timeline), self.operation, self._replaced_partitions()) \
            if self.is_replace else None
        check_not_replacing_written(replaced, stats, self.table_name, instant_time)
        return CommitMetadata(self.operation_type, tuple(stats),
                              {**self.user_metadata, "schema": avro_json(self.avro_schema),
                               **index_extra(self.index_stats)},
                              replaced)

    @property
    def operation_type(self) -> str:
        return operation_type(self.operation, self.wc.options.get(SQL_WRITES_PREPPED_KEY, "").lower() == "true")

    @property
    def user_metadata(self) -> dict[str, str]:
        """The write options the commit keeps in its extraMetadata: those whose key starts with
        hoodie.datasource.write.commitmeta.key.prefix ("_": e.g. a checkpoint a streaming job stores with its
        data, read back with the commit), as Hudi's DataSourceUtils.getExtraMetadata."""
        prefix = self.wc.commit_metadata_key_prefix
        return {key: value for key, value in self.wc.options.items() if key.startswith(prefix)}

    def _replaced_partitions(self) -> list[str]:
        """The partitions a replace operation supersedes: the batch's, plus for insert_overwrite the static
        partitions a static INSERT OVERWRITE names (hoodie.static.overwrite.partition.paths)."""
        partitions = list(self.partitions or [])
        extra = self.wc.static_overwrite_partitions if self.operation == "insert_overwrite" else None
        for path in (str(extra).split(",") if extra else []):
            if path.strip() and path.strip() not in partitions:
                partitions.append(path.strip())
        return partitions

    def _check_pending_clustering(self, stats: list[WriteStat], timeline: Timeline) -> None:
        """hoodie.clustering.updates.strategy (Hudi's SparkRejectUpdateStrategy by default): a write that
        changed a file group a pending clustering plans to rewrite fails before it commits (the transaction
        removes its files, the table is unchanged); SparkAllowUpdateStrategy lets it commit and the clustering
        then aborts at its own commit check."""
        pending = self.table.view(timeline=timeline).pending_clustering_groups if stats else {}
        strategy = self.wc.clustering_updates_strategy
        if not pending or strategy.endswith("SparkAllowUpdateStrategy"):
            return
        for stat in stats:
            key = (stat.partition_path, stat.file_id)
            if key in pending and stat.prev_commit != "null":
                raise WriteConflictError(
                    f"Not allowed to update the clustering file group {key[0] or '(non-partitioned)'}/{key[1]} of "
                    f"table {self.table_name}: clustering {pending[key]} is pending on it. Run it first (CALL "
                    "run_clustering(op => 'execute', ...) or pyhudi.cluster(spark, path, op='execute')), or set "
                    f"{C.CLUSTERING_UPDATES_STRATEGY.key}=org.apache.hudi.client.clustering.update.strategy."
                    "SparkAllowUpdateStrategy; the write was not committed")

    def index_stats_dict(self) -> dict:
        return self.index_stats.as_dict() if self.index_stats else {}

    def release(self) -> None:
        """Free the cached batch."""
        if self.strategy is not None and self.strategy.cached and self.keyed is not None:
            self.keyed.unpersist()

    def _one_job_fit(self) -> tuple[bool, bool, bool] | None:
        """Whether the write runs as one Spark job (writer/one_job.py): an upsert, insert or delete with a
        partition-scoped index that combines (inserts always may), of a batch small enough (one_job.fit)."""
        if self.operation not in ("upsert", "insert", "delete") or self.index.is_global or self._drops_stored_keys:
            return None
        if not (self.wc.combine_before(self.operation) or self.operation == "insert"):
            return None
        return one_job.fit(self.incoming)

    @functools.cached_property
    def _drops_stored_keys(self) -> bool:
        """hoodie.datasource.write.insert.drop.duplicates on an insert-style write of keyed records."""
        return (self.wc.insert_drop_duplicates and self.operation in ("insert", "bulk_insert")
                and bool(self.keygen.record_key_fields) and self.virtual_keys is None
                and self.table.timeline().latest_time() is not None)

    def _without_stored_keys(self, keyed: DataFrame) -> DataFrame:
        """The batch without the records whose key the table already holds (Hudi's DataSourceUtils.dropDuplicates:
        the key and, for a partition-scoped index, its partition), judged on the latest snapshot."""
        from pyhudi.reader import read
        on = [RECORD_KEY] if self.index.is_global else [RECORD_KEY, PARTITION_PATH]
        stored = read(self.spark, self.storage.base_uri).select(*on).distinct()
        return keyed.join(stored, on=on, how="left_anti")

    def _needs_partitions_first(self) -> bool:
        """Whether the incoming partitions must be known before the lookup: a partition-scoped index reading
        base files (BLOOM, SIMPLE) for upserts and deletes, and the replace operations."""
        if self.operation in REPLACE_OPERATIONS:
            return True
        lookup = self.operation in ("upsert", "delete") and self._has_keys
        return bool(lookup) and not self.index.is_bucket and not self.index.is_global

    @functools.cached_property
    def _has_keys(self) -> bool:
        """Whether the batch's records carry keys to look up: a record key field, or a key-less table's prepped
        write (its stored rows keep their _hoodie_record_key, see writer/options.PREPPED_KEY_COLUMN)."""
        return bool(self.keygen.record_key_fields) or PREPPED_KEY_COLUMN in self.incoming.columns

    # --- the strategy's inputs ----------------------------------------------------------------------------
    @property
    def avro_schema(self) -> dict:
        return arrow_to_avro(self.target_schema, self.table_name)

    def _write_files(self, timeline: Timeline, instant_time: str) -> list[WriteStat]:
        """Run the chosen strategy over the prepared batch; keeps its index stats for the commit."""
        keyed = self.keyed
        if not self.keygen.record_key_fields:
            keyed = with_auto_keys(keyed, instant_time)
        job = WriteJob(
            spark=self.spark, table=self.table, wc=self.wc, keygen=self.keygen, index=self.index,
            strategy=self.strategy, target_schema=self.target_schema, virtual_keys=self.virtual_keys,
            has_keys=self._has_keys, prepared=self._prepared, keyed=keyed, partitions=self.incoming_partitions,
            ctx=self._write_context(instant_time), view=self.table.view(timeline=timeline), timeline=timeline,
            instant_time=instant_time)
        stats, self.index_stats = STRATEGIES[self.strategy.name](job)
        return stats

    def _write_context(self, instant_time: str) -> WriteContext:
        """What every executor of this write gets (metadata only)."""
        wc = self.wc
        return WriteContext(
            storage=self.storage, instant_time=instant_time, data_schema=self.target_schema,
            bloom=BloomSettings(wc.bloom_filter_type, wc.bloom_num_entries, wc.bloom_fpp,
                                wc.bloom_dynamic_max_entries),
            compression=wc.parquet_compression, avro_schema_json=avro_json(with_meta_fields_avro(self.avro_schema)),
            payload_class=wc.payload_class, ordering_field=self.precombine,
            max_file_size=wc.max_file_size, is_mor=self.is_mor,
            log_block_format=wc.log_block_format, ordering_avro_type=self._ordering_avro_type(),
            table_avro_schema_json=avro_json(self.avro_schema),
            unique_columns=tuple(self.keygen.record_key_fields) if len(self.keygen.record_key_fields) == 1 else (),
            virtual_keys=self.virtual_keys, payload_ordering_field=wc.payload_ordering_field,
            event_time_field=wc.event_time_field,
            cdc_mode=None if self.is_mor else cdc_logging_mode(self.table),
            log_max_size=wc.log_max_size, log_block_max_size=wc.log_block_max_size,
            inserts_to_logs=inserts_to_logs(self.is_mor, self.index.is_bucket, self.operation),
            concat_inserts=self.operation == "insert" and wc.allow_duplicate_on_inserts,
            log_per_commit=self.table.writes_log_per_commit)

    def _ordering_avro_type(self):
        """The precombine field's Avro type: it picks the orderingVal branch of delete-block records."""
        for fld in self.avro_schema["fields"]:
            if self.precombine and fld["name"].lower() == self.precombine.lower():
                return fld["type"]
        return None
