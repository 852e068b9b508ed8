"""Damage a table may carry from writers with known defects (pyhudi before issue 34), found without changing it.

- A replacecommit that lists as replaced a file group it wrote itself: every reader drops the rows it wrote
  (INSERT OVERWRITE on a BUCKET table). Their base files are still on storage until a clean deletes them.
- A simple BUCKET table with file groups that are not buckets (a clustering rewrote them): every write refuses it.
- Keys stored in more than one partition of a table written with a global index (a partition move that left the
  old copy). Needs the record keys, so only with a Spark session: a Spark job counts them, the driver gets the
  count and a few sample keys.
Each comes with how to recover; nothing here deletes or writes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyhudi import config as C
from pyhudi.index import GLOBAL_TYPES, is_simple_bucket_table
from pyhudi.index.bucket import bucket_of_file_id
from pyhudi.table import HudiTable
from pyhudi.timeline import REPLACE_COMMIT
from pyhudi.writer.replace import self_replaced

SAMPLE_KEYS = 5


@dataclass(frozen=True)
class HiddenWrite:
    """A base file its own replacecommit hides."""
    instant: str
    partition: str
    file_id: str
    path: str
    records: int
    on_storage: bool           # False once a clean deleted it: then its rows are gone for good


@dataclass(frozen=True)
class Damage:
    hidden_writes: tuple[HiddenWrite, ...] = ()
    non_bucket_groups: tuple[tuple[str, str], ...] = ()    # (partition, file id) of a simple bucket table
    keys_in_several_partitions: int | None = None          # None: not checked (no Spark session, or no global index)
    sample_keys: tuple[str, ...] = ()


def hidden_writes(table: HudiTable, timeline, listed: set[str]) -> list[HiddenWrite]:
    """Files written by a completed replacecommit that the same commit lists as replaced (`listed`: the
    relative paths of the table's files now)."""
    out = []
    for instant in timeline.completed([REPLACE_COMMIT]):
        meta = timeline.read_commit(instant)
        stats = [replace(stat, partition_path=partition)
                 for partition, group in meta.stats_by_partition().items() for stat in group]
        for stat in self_replaced(meta.replaced_file_ids, stats):
            if stat.path:
                out.append(HiddenWrite(instant.time, stat.partition_path, stat.file_id, stat.path,
                                       int(stat.num_writes or 0), stat.path in listed))
    return out


def non_bucket_groups(table: HudiTable, view, options: dict | None = None) -> list[tuple[str, str]]:
    """The latest file groups of a simple BUCKET table whose file id names no bucket."""
    if not is_simple_bucket_table(table, options):
        return []
    return sorted((s.partition_path, s.file_id) for s in view.latest_slices() if bucket_of_file_id(s.file_id) is None)


def uses_global_index(table: HudiTable, options: dict | None = None) -> bool:
    kind = (dict(options or {}).get(C.INDEX_TYPE.key) or table.properties.get(C.INDEX_TYPE.key) or "")
    return str(kind).strip().upper() in GLOBAL_TYPES


def keys_in_several_partitions(spark, path: str) -> tuple[int, list[str]]:
    """(how many record keys the snapshot holds in more than one partition, a few of them): a Spark job."""
    from pyspark.sql import functions as F

    from pyhudi.reader import read
    counted = (read(spark, path).groupBy("_hoodie_record_key")
               .agg(F.countDistinct("_hoodie_partition_path").alias("partitions"))
               .filter(F.col("partitions") > 1))
    total = counted.count()
    sample = [row[0] for row in counted.select("_hoodie_record_key").orderBy("_hoodie_record_key")
              .limit(SAMPLE_KEYS).collect()] if total else []
    return total, sample


def table_damage(table: HudiTable, timeline, view, listed: set[str], options: dict | None = None,
                 spark=None) -> Damage:
    duplicates, sample = None, []
    if spark is not None and uses_global_index(table, options):
        duplicates, sample = keys_in_several_partitions(spark, table.storage.base_uri)
    return Damage(tuple(hidden_writes(table, timeline, listed)), tuple(non_bucket_groups(table, view, options)),
                  duplicates, tuple(sample))
