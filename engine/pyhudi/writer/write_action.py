"""The write action: one upsert, insert, bulk_insert, delete or replace operation from a Spark DataFrame.

    prepare (key records) -> [instant begun by the client] -> dedup -> tag (index) -> plan file groups ->
    Spark jobs write files (markers first) -> commit metadata

The driver holds metadata only: the timeline, file listings, per-partition insert counts and one stat row per
written file. Records move between executors (mapInArrow, a shuffle, applyInArrow). The instant itself (begin,
complete, abort) belongs to the transaction and the commit protocol (pyhudi.commit.instant_commit). The batch's column
transformations (types, keys, dedup, delete flags) are in writer/batch.py.
"""

from __future__ import annotations

import dataclasses
import functools

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi import config as C
from pyhudi.cdc import cdc_logging_mode
from pyhudi.commit.metadata import (SQL_WRITES_PREPPED_KEY, STATS_DDL, CommitMetadata, operation_type,
                                      write_stat)
from pyhudi.commit.spark_jobs import collect_or_raise
from pyhudi.file_group.base_file import BloomSettings
from pyhudi.errors import WriteConflictError
from pyhudi.index import index_spec
from pyhudi.index.stats import EXTRA_METADATA_KEY, IndexStats
from pyhudi.schema import arrow_to_avro, avro_json, with_meta_fields_avro
from pyhudi.spark.parallelism import file_task_partitions
from pyhudi.table import HudiTable, write_partition_metadata
from pyhudi.timeline import COMMIT, DELTA_COMMIT, REPLACE_COMMIT, Timeline
from pyhudi.writer.file_writer import (ARRIVAL_COLUMN, DELETE_COLUMN, FILE_ID_COLUMN, INSERT_COLUMN, PARTITION_PATH,
                                      RECORD_KEY, WriteContext, write_file_group)
from pyhudi.writer.bulk_insert import lay_out, write_bulk_files
from pyhudi.writer.options import PREPPED_KEY_COLUMN
from pyhudi.writer.batch import dedup_batch, flag_deletes, keyed_batch, prepared_batch
from pyhudi.writer.planning import (average_record_size, group_states, inserts_to_logs, plan_insert_buckets,
                                    with_auto_keys)
from pyhudi.writer.replace import (REPLACE_OPERATIONS, check_not_replacing_written, partitions_to_delete,
                                   replaced_file_ids)
from pyhudi.writer import one_job, partition_moves, virtual_keys
from pyhudi.merge.payloads import payload_of
from pyhudi.writer.live_keys import drop_dead_locations, live_key_check

_SLOT_COLUMN = "_pyhudi_slot"


class WriteAction:
    """One upsert/insert/bulk_insert/delete or replace operation: prepare the batch, then write one instant's
    files and describe them (the commit itself belongs to the transaction and the commit protocol)."""

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
        self.index_stats: IndexStats | None = None
        self.incoming_partitions: list[str] | None = None
        self._new_file_groups = 0   # file groups _assign_inserts plans for inserts
        self._bloom_lookup = None   # a BLOOM lookup whose counters arrive with the insert-count action
        self._release: list = []   # cached DataFrames / broadcasts of the index lookup, freed after the write
        self.keyed: DataFrame | None = None
        self._prepared: DataFrame | None = None   # the batch in table types, before keying
        self._keys_in_task = False    # the one task keys the prepared batch itself (self.keyed stays None)
        self.partitions: list[str] | None = None
        self._cached = False
        self.one_job = False   # the write runs as one Spark job (writer/one_job.py)
        self._batch_shuffles = True   # computing the batch shuffles (then the write keeps adaptive execution)
        self._one_task = False        # the one job runs in one Python task (a small batch, see one_job.in_one_task)
        self._batch_deterministic = False   # the batch gives the same rows when computed twice (one_job.batch_plan)

    # --- the action's steps (the client runs them inside a transaction) -----------------------------------
    @property
    def is_replace(self) -> bool:
        return self.operation in REPLACE_OPERATIONS

    @property
    def timeline_action(self) -> str:
        return REPLACE_COMMIT if self.is_replace else DELTA_COMMIT if self.is_mor else COMMIT

    def prepare(self) -> None:
        """Key the batch and, where the plan needs them, find its partitions (a Spark action of its own, which
        also surfaces key errors before any instant exists)."""
        self._prepared = prepared_batch(self.incoming, self.target_schema)
        if self.is_replace:   # overwritten file groups take no inserts (Hudi's insert-overwrite partitioner)
            self.wc = dataclasses.replace(self.wc, small_file_limit=0)
        self.one_job = self._fits_one_job()
        # one task keys the records itself (a Python worker less); auto keys need with_auto_keys' columns
        self._keys_in_task = self.one_job and self._one_task and bool(self.keygen.record_key_fields)
        partitions_first = not self.one_job and self._needs_partitions_first()
        if not self._keys_in_task:
            keyed = keyed_batch(self._prepared, self.keygen)
            if self._drops_stored_keys:
                keyed = self._without_stored_keys(keyed)
            self._cached = not self.one_job and not (self.index.is_bucket and not partitions_first)
            if self._cached:   # several Spark actions read the batch: compute it once
                keyed = keyed.persist()
            self.keyed = keyed
        if partitions_first:
            self.partitions = [row[0] for row in collect_or_raise(self.keyed.select(PARTITION_PATH).distinct())]
            self.incoming_partitions = self.partitions
        if self.operation == "delete_partition":
            self.partitions = partitions_to_delete(self.table, self.wc.partitions_to_delete, self.partitions)

    def inflight_metadata(self) -> CommitMetadata:
        """What the inflight instant holds: the operation, no stats yet (as Hudi writes it)."""
        return CommitMetadata(self.operation_type, replaced_file_ids={} if self.is_replace else None)

    def write(self, instant_time: str, timeline: Timeline) -> CommitMetadata:
        """Write this instant's data files (Spark jobs, markers first) and return its commit metadata."""
        stats = [] if self.operation == "delete_partition" else self._write_files(self.keyed, timeline, instant_time)
        self._check_pending_clustering(stats, timeline)
        # Written partitions become visible to readers only with the commit, so their metadata files can
        # follow the data files (Hudi's write handles write them first; either order is safe to roll back).
        for partition in sorted({s["partitionPath"] for s in stats}):
            write_partition_metadata(self.storage, partition, instant_time)
        replaced = replaced_file_ids(self.table.view(timeline=timeline), self.operation, self._replaced_partitions()) \
            if self.is_replace else None
        check_not_replacing_written(replaced, stats, self.table_name, instant_time)
        return CommitMetadata(self.operation_type, stats,
                              {**self.user_metadata, "schema": avro_json(self.avro_schema), **self._index_extra()},
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

    def _check_pending_clustering(self, stats: list[dict], timeline: Timeline) -> None:
        """hoodie.clustering.updates.strategy (Hudi's SparkRejectUpdateStrategy by default): a write that
        changed a file group a pending clustering plans to rewrite fails before it commits (the transaction
        removes its files, the table is unchanged); SparkAllowUpdateStrategy lets it commit and the clustering
        then aborts at its own commit check."""
        pending = self.table.view(timeline=timeline).pending_clustering_groups if stats else {}
        strategy = self.wc.clustering_updates_strategy
        if not pending or strategy.endswith("SparkAllowUpdateStrategy"):
            return
        for stat in stats:
            key = (stat["partitionPath"], stat["fileId"])
            if key in pending and stat["prevCommit"] != "null":
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
        if self._cached and self.keyed is not None:
            self.keyed.unpersist()

    def _fits_one_job(self) -> bool:
        """Whether the write runs as one Spark job (writer/one_job.py): an upsert, insert or delete with a
        partition-scoped index whose batch Spark estimates at most ONE_JOB_MAX_BYTES or cannot size (bigger ones
        keep the counted plan, which spreads a partition's new file groups over tasks)."""
        if self.operation not in ("upsert", "insert", "delete") or self.index.is_global or self._drops_stored_keys:
            return False
        if not (self.wc.combine_before(self.operation) or self.operation == "insert"):
            return False
        size, self._batch_shuffles, self._batch_deterministic = one_job.batch_plan(self.incoming)
        self._one_task = one_job.in_one_task(size)
        return size is None or size <= one_job.ONE_JOB_MAX_BYTES

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

    # --- record preparation -------------------------------------------------------------------------------
    @property
    def avro_schema(self) -> dict:
        return arrow_to_avro(self.target_schema, self.table_name)

    def _deduped(self, keyed: DataFrame) -> DataFrame:
        """One record per key when hoodie.combine.before.<operation> is on (writer/batch.py)."""
        return dedup_batch(keyed, self.wc.combine_before(self.operation), self.precombine, self.operation,
                           self.index.is_global, self.wc.payload_class)

    def _flagged(self, records: DataFrame) -> DataFrame:
        """DELETE_COLUMN on every record (writer/batch.py)."""
        return flag_deletes(records, self.operation, self.wc.payload_class, self.precombine)

    # --- the Spark jobs -----------------------------------------------------------------------------------
    def _write_files(self, keyed: DataFrame, timeline: Timeline, instant_time: str) -> list[dict]:
        view = self.table.view(timeline=timeline)
        wc = self.wc
        ctx = WriteContext(
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
            concat_inserts=self.operation == "insert" and wc.allow_duplicate_on_inserts)
        if not self.keygen.record_key_fields:
            keyed = with_auto_keys(keyed, instant_time)
        if self.operation == "bulk_insert" and not self.index.is_bucket:   # a bucket table routes by key
            return self._bulk_insert(self._deduped(keyed), ctx)      # hoodie.combine.before.insert, as Hudi
        if self.one_job:
            return self._write_one_job(keyed, view, ctx, timeline, instant_time)

        # With a partition-scoped index every version of a key reaches the same writer task (same stored
        # location, or the same insert slot, which hashes the key): it keeps the latest there (ordering field,
        # then arrival order), which spares a shuffle of the batch. A global index deduplicates across
        # partitions first.
        writer_combines = self.wc.combine_before(self.operation) and not self.index.is_global
        if writer_combines:
            deduped = keyed.withColumn(ARRIVAL_COLUMN, F.monotonically_increasing_id())
            ctx = dataclasses.replace(ctx, combine_in_writer=True)
        else:
            deduped = self._deduped(keyed)
        deduped = self._flagged(deduped)
        existing = group_states(view)
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
            stats = [write_stat(row) for row in collect_or_raise(stats_df)]
            self._finish_index_stats(stats)
            return stats
        finally:   # what the index lookup and _assign_inserts cached
            for item in self._release:
                item.unpersist()
            self._release.clear()

    def _write_one_job(self, keyed: DataFrame, view, ctx: WriteContext, timeline: Timeline,
                       instant_time: str) -> list[dict]:
        """Key, tag, place and write in one Spark job; the plan comes from metadata (see writer/one_job.py)."""
        from pyhudi.index import bloom, bucket

        spec = self.index
        source = self._prepared if self._keys_in_task else keyed
        records = self._flagged(source.withColumn(ARRIVAL_COLUMN, F.monotonically_increasing_id()))
        ctx = dataclasses.replace(ctx, combine_in_writer=self.wc.combine_before(self.operation),
                                  existing=group_states(view))
        stats = self.index_stats = IndexStats(spec.type)
        pack = one_job.pack_plan(view, self.wc, average_record_size(timeline, self.wc), view.busy_groups)
        lookup = bucket_args = None
        if spec.is_bucket:
            existing = bucket.existing_buckets(view, None, self.table_name, spec.num_buckets)
            bucket_args = (list(spec.hash_fields), spec.num_buckets, existing, instant_time)
        elif self.operation in ("upsert", "delete") and self._has_keys:
            base_files = view.latest_base_files(None)
            if base_files:
                lookup, stats.footers_read = bloom.build_plan(
                    self.spark, self.storage, base_files, False, spec.prune_by_ranges and spec.is_bloom,
                    use_bloom=spec.is_bloom, keygen=self.virtual_keys)
        live = live_key_check(self.table, view) if self.is_mor and lookup is not None else None
        n_groups = len(ctx.existing) + len({partition for partition, _ in ctx.existing}) + 1
        write_stats = one_job.write(self.spark, self.storage, records, ctx, pack, lookup, bucket_args, stats,
                                    n_groups, self._batch_shuffles, self._one_task,
                                    self.keygen if self._keys_in_task else None, live,
                                    self._batch_deterministic and not self._batch_shuffles)
        self._finish_index_stats(write_stats)
        if lookup is None and not spec.is_bucket:   # nothing looked up: every record went by the insert path
            stats.keys_looked_up = stats.updates + stats.inserts
        return write_stats

    def _write_parallelism(self, existing: dict) -> int:
        """Spark partitions for the file groups this write touches: the existing ones in the incoming partitions
        (all of them when those are not known) plus the new ones planned for inserts."""
        partitions = set(self.incoming_partitions) if self.incoming_partitions is not None else None
        groups = sum(1 for partition, _ in existing if partitions is None or partition in partitions)
        groups += self._new_file_groups
        if self.index.is_bucket:
            groups = max(groups, self.index.num_buckets * (len(partitions) if partitions is not None else 1))
        return file_task_partitions(self.spark, groups)

    def _tag(self, records: DataFrame, view, instant_time: str) -> DataFrame:
        """hoodie.index.type: set FILE_ID_COLUMN to the file group holding each record's key (null: a new key);
        see pyhudi.index for the index types. Fills self.index_stats."""
        from pyhudi.index import bloom, bucket, lookup, virtual

        spec = self.index
        stats = self.index_stats = IndexStats(spec.type)
        if spec.is_bucket:
            # A replace writes every bucket into a new file group (Hudi: "Insert overwrite always generates new
            # bucket file id"): the groups it replaces keep their ids, and a reader drops them.
            existing = {} if self.is_replace else \
                bucket.existing_buckets(view, self.incoming_partitions, self.table_name, spec.num_buckets)
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
            paths = [b.path for b in base_files]
            locations = lookup.stored_keys(self.spark, self.storage, paths, FILE_ID_COLUMN) \
                if self.virtual_keys is None else virtual.stored_keys(self.spark, self.storage, paths, self.keygen,
                                                                      self.target_schema, FILE_ID_COLUMN)
        if self.is_mor:   # keys deleted in a file group's logs are not located there (writer/live_keys.py)
            locations = drop_dead_locations(locations, live_key_check(self.table, view, partitions), FILE_ID_COLUMN)
        if not spec.is_global:
            return lookup.apply_locations(records, locations, FILE_ID_COLUMN)
        return partition_moves.tag_global(
            records, locations, FILE_ID_COLUMN, DELETE_COLUMN, spec.update_partition_path,
            tuple(f for f in (self.wc.payload_ordering_field, self.precombine) if f), payload_of(self.wc.payload_class),
            lambda groups: self._stored_rows(view, groups), self._release)

    def _stored_rows(self, view, groups: set) -> DataFrame:
        """The latest stored rows of file groups ({(partition, file id)}), logs merged, keys computed for a
        virtual-key table: what a global index merges a moving record with."""
        from pyhudi.index.virtual import with_keys
        from pyhudi.reader import read_file_groups

        rows = read_file_groups(self.spark, view, groups)
        if self.virtual_keys is None:
            return rows
        keygen = self.virtual_keys
        return rows.mapInArrow(lambda batches: (b for batch in batches for b in with_keys(
            pa.Table.from_batches([batch]), keygen).select(rows.columns).to_batches()), rows.schema)

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
        rows = collect_or_raise(tagged.groupBy(PARTITION_PATH, INSERT_COLUMN).count())
        counts = {row[0]: row[2] for row in rows if row[1]}
        if self.incoming_partitions is None:
            self.incoming_partitions = sorted({row[0] for row in rows})
        if self._bloom_lookup is not None:
            self._bloom_lookup.fill_stats(self.index_stats)
        elif self.index_stats is not None:
            self.index_stats.keys_looked_up = sum(row[2] for row in rows)
        if not counts:
            return tagged
        buckets = plan_insert_buckets(counts, view, average_record_size(timeline, self.wc), self.wc)
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
        # Files are cut near hoodie.parquet.max.file.size by their encoded size (bulk_insert.FileSizer)
        partitioned = bool(self.wc.partition_path_field)
        ordered, grouped = lay_out(keyed, self.wc.bulk_insert_sort_mode, self.wc.bulk_insert_parallelism, partitioned)
        stats_df = ordered.mapInArrow(lambda batches: write_bulk_files(ctx, batches, grouped), STATS_DDL)
        return [write_stat(row) for row in collect_or_raise(stats_df)]


