"""Key locations from base files and how they tag incoming records (SIMPLE index, and the last step of BLOOM).

A location is (record key, partition path, file id) of a record stored in a latest base file. Non-global
indexes match on (key, partition); global ones on the key alone, and then decide what a key arriving with a
different partition does (pyhudi.writer.partition_moves, which needs the stored records and so the reader).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.schema.meta_fields import PARTITION_PATH, RECORD_KEY
from pyhudi.storage import Storage
from pyhudi.storage.scan import scan_parquet

KEY_SCHEMA = f"{RECORD_KEY} string, {PARTITION_PATH} string"


def partition_of(relative_path: str) -> str:
    return relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""


def stored_keys(spark, storage: Storage, paths: list[str], file_id_col: str) -> DataFrame:
    """(key, partition, file id) of every record in the given base files; reads only the two key columns (the
    schema is given, so Spark runs no schema-inference job)."""
    uris = [storage.uri(p) for p in paths]
    return (scan_parquet(spark, T.StructType.fromDDL(KEY_SCHEMA), uris)
            .select(F.col(RECORD_KEY), F.col(PARTITION_PATH),
                    F.substring_index(F.col("_metadata.file_name"), "_", 1).alias(file_id_col)))


def apply_locations(records: DataFrame, locations: DataFrame, file_id_col: str) -> DataFrame:
    """Set `file_id_col` (null = insert) from `locations` (key, partition, file id) of a partition-scoped index:
    a record matches on (key, partition). Global indexes: pyhudi.writer.partition_moves."""
    return records.join(locations.select(RECORD_KEY, PARTITION_PATH, file_id_col),
                        on=[RECORD_KEY, PARTITION_PATH], how="left")
