"""Write config: operation, key and partition fields, payload and ordering, file sizing, log files, concurrency
(Hudi's HoodieWriteConfig / DataSourceWriteOptions)."""

from __future__ import annotations

from pyhudi.config.core import NON_NEGATIVE, POSITIVE, bool_value, declare, lower, upper

OPERATION = declare("hoodie.datasource.write.operation", "upsert", lower,
                    ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table",
                     "delete_partition"))
RECORD_KEY = declare("hoodie.datasource.write.recordkey.field", None)
PARTITION_PATH = declare("hoodie.datasource.write.partitionpath.field", "")
PRECOMBINE = declare("hoodie.datasource.write.precombine.field", None)
HIVE_STYLE = declare("hoodie.datasource.write.hive_style_partitioning", False, bool_value)
URL_ENCODE = declare("hoodie.datasource.write.partitionpath.urlencode", False, bool_value)
DROP_PARTITION_COLUMNS = declare("hoodie.datasource.write.drop.partition.columns", False, bool_value)
PAYLOAD_CLASS = declare("hoodie.datasource.write.payload.class",
                        "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload")
PAYLOAD_ORDERING_FIELD = declare("hoodie.payload.ordering.field", None,
                                 doc="Field ordering an incoming record against the stored one (default: precombine).")
PAYLOAD_EVENT_TIME_FIELD = declare("hoodie.payload.event.time.field", "ts",
                                   doc="DefaultHoodieRecordPayload: field whose epoch seconds/millis give the write "
                                       "stats' minEventTime/maxEventTime.")
COMBINE_BEFORE_INSERT = declare("hoodie.combine.before.insert", False, bool_value)
INSERT_DROP_DUPLICATES = declare("hoodie.datasource.write.insert.drop.duplicates", False, bool_value,
                                 doc="Drop incoming records whose key is already stored (an upsert becomes an insert).")
MERGE_ALLOW_DUPLICATE_ON_INSERTS = declare("hoodie.merge.allow.duplicate.on.inserts", True, bool_value,
                                           doc="An insert routed into a small file keeps a stored record of the "
                                               "same key (both stay) instead of replacing it.")
COMBINE_BEFORE_UPSERT = declare("hoodie.combine.before.upsert", True, bool_value)
COMBINE_BEFORE_DELETE = declare("hoodie.combine.before.delete", True, bool_value)
COMMIT_METADATA_KEY_PREFIX = declare(
    "hoodie.datasource.write.commitmeta.key.prefix", "_",
    doc="Write options whose keys start with this prefix are kept in the commit's extraMetadata (e.g. a streaming "
        "checkpoint), as Hudi's DataSourceUtils.getExtraMetadata.")
SQL_OPTIMIZED_WRITES = declare(
    "hoodie.spark.sql.optimized.writes.enable", True, bool_value,
    doc="SQL UPDATE and DELETE are Hudi's prepped writes: their commits record UPSERT_PREPPED / DELETE_PREPPED.")
METADATA_ENABLE = declare("hoodie.metadata.enable", True, bool_value,
                          doc="true (Hudi's default): a version 8/9 table's metadata table files partition is built "
                              "if missing and kept (its other partitions dropped); false: the metadata table is "
                              "dropped (Java's writer with it disabled). Version 6 tables: always dropped.")
METADATA_COMPACT_MAX_DELTA_COMMITS = declare(
    "hoodie.metadata.compact.max.delta.commits", 10, POSITIVE,
    doc="The metadata table's files partition is compacted once it has this many delta commits since its last "
        "compaction (Java's metadata writer, HoodieMetadataConfig).")

# --- file sizing ----------------------------------------------------------------------------------------
MAX_FILE_SIZE = declare("hoodie.parquet.max.file.size", 125829120, POSITIVE)
SMALL_FILE_LIMIT = declare("hoodie.parquet.small.file.limit", 104857600, NON_NEGATIVE)
RECORD_SIZE_ESTIMATE = declare("hoodie.copyonwrite.record.size.estimate", 1024, POSITIVE)
INSERT_SPLIT_SIZE = declare("hoodie.copyonwrite.insert.split.size", 500000, POSITIVE)
AUTO_SPLIT_INSERTS = declare("hoodie.copyonwrite.insert.auto.split", True, bool_value)
PARQUET_COMPRESSION = declare("hoodie.parquet.compression.codec", "gzip", lower,
                              ("gzip", "snappy", "zstd", "uncompressed", "lz4", "brotli"))
BULK_INSERT_SORT_MODE = declare("hoodie.bulkinsert.sort.mode", "NONE", upper,
                                ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
                                 "PARTITION_PATH_REPARTITION_AND_SORT"),
                                doc="How bulk_insert spreads and orders the batch (pyhudi.writer.bulk_insert).")
BULK_INSERT_PARALLELISM = declare("hoodie.bulkinsert.shuffle.parallelism", 0, NON_NEGATIVE)
UPSERT_PARALLELISM = declare("hoodie.upsert.shuffle.parallelism", 0, NON_NEGATIVE)

# --- log files (merge-on-read) --------------------------------------------------------------------------
LOG_BLOCK_FORMAT = declare("hoodie.logfile.data.block.format", "parquet", lower, ("parquet", "avro"))
LOG_MAX_SIZE = declare("hoodie.logfile.max.size", 1073741824, POSITIVE)
LOG_BLOCK_MAX_SIZE = declare("hoodie.logfile.data.block.max.size", 268435456, POSITIVE)

# --- concurrency ----------------------------------------------------------------------------------------
CONCURRENCY_MODE = declare("hoodie.write.concurrency.mode", "single_writer", lower,
                           ("single_writer", "optimistic_concurrency_control"))

# --- replace operations ---------------------------------------------------------------------------------
STATIC_OVERWRITE_PARTITIONS = declare(
    "hoodie.static.overwrite.partition.paths", None,
    doc="Comma-separated partition paths an insert_overwrite also replaces when the batch writes none of their "
        "rows (Hudi's internal key for a static INSERT OVERWRITE ... PARTITION).")
PARTITIONS_TO_DELETE = declare("hoodie.datasource.write.partitions.to.delete", None,
                               doc="Comma-separated partition paths (wildcards allowed) for delete_partition.")
