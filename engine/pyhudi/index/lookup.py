"""Key locations from base files and how they tag incoming records (SIMPLE index, and the last step of BLOOM).

A location is (record key, partition path, file id) of a record stored in a latest base file. Non-global
indexes match on (key, partition); global ones on the key alone, and then decide what a key arriving with a
different partition does (Hudi's tagGlobalLocationBackToRecords):
  update.partition.path=true   delete it from the old file group and insert it in the new partition
                               (a delete is sent to the old location)
  update.partition.path=false  update it in place: the record keeps its old partition path
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyhudi.schema.meta_fields import PARTITION_PATH, RECORD_KEY
from pyhudi.storage import Storage

KEY_SCHEMA = f"{RECORD_KEY} string, {PARTITION_PATH} string"
_LOC_PARTITION = "_pyhudi_loc_partition"
_LOC_FILE = "_pyhudi_loc_file"
_COPY = "_pyhudi_copy"


def partition_of(relative_path: str) -> str:
    return relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""


def stored_keys(spark, storage: Storage, paths: list[str], file_id_col: str) -> DataFrame:
    """(key, partition, file id) of every record in the given base files; reads only the two key columns (the
    schema is given, so Spark runs no schema-inference job)."""
    uris = [storage.uri(p) for p in paths]
    return (spark.read.schema(KEY_SCHEMA).parquet(*uris)
            .select(F.col(RECORD_KEY), F.col(PARTITION_PATH),
                    F.substring_index(F.col("_metadata.file_name"), "_", 1).alias(file_id_col)))


def apply_locations(records: DataFrame, locations: DataFrame, file_id_col: str, delete_col: str,
                    is_global: bool, update_partition_path: bool) -> DataFrame:
    """Set `file_id_col` (null = insert) from `locations` (key, partition, file id: at most one per key)."""
    if not is_global:
        return records.join(locations.select(RECORD_KEY, PARTITION_PATH, file_id_col),
                            on=[RECORD_KEY, PARTITION_PATH], how="left")
    loc = locations.select(F.col(RECORD_KEY), F.col(PARTITION_PATH).alias(_LOC_PARTITION),
                           F.col(file_id_col).alias(_LOC_FILE))
    joined = records.join(loc, on=[RECORD_KEY], how="left")
    found = F.col(_LOC_FILE).isNotNull()
    moved = found & (F.col(_LOC_PARTITION) != F.col(PARTITION_PATH))
    is_delete = F.col(delete_col)
    if not update_partition_path:
        out = (joined.withColumn(PARTITION_PATH, F.when(found, F.col(_LOC_PARTITION)).otherwise(F.col(PARTITION_PATH)))
               .withColumn(file_id_col, F.col(_LOC_FILE)))
        return out.drop(_LOC_PARTITION, _LOC_FILE)
    # A moving upsert becomes two rows (copy 1: the delete at the old location, copy 0: an insert), made in one
    # pass with explode so the join runs once.
    copies = F.when(moved & ~is_delete, F.array(F.lit(0), F.lit(1))).otherwise(F.array(F.lit(0)))
    exploded = joined.withColumn(_COPY, F.explode(copies))
    old_location = (F.col(_COPY) == 1) | (moved & is_delete)
    out = (exploded
           .withColumn(PARTITION_PATH, F.when(old_location, F.col(_LOC_PARTITION)).otherwise(F.col(PARTITION_PATH)))
           .withColumn(file_id_col, F.when(old_location | ~moved, F.col(_LOC_FILE)))
           .withColumn(delete_col, F.when(F.col(_COPY) == 1, F.lit(True)).otherwise(is_delete)))
    return out.drop(_LOC_PARTITION, _LOC_FILE, _COPY)
