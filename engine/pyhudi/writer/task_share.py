"""A small batch shared out over one Python task per core instead of one task (writer/one_job.py): into a table
with many file groups over several partitions, one task's threads spend a few milliseconds of Python per touched
file group under one interpreter lock."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.schema.meta_fields import PARTITION_PATH
from pyhudi.spark.jvm import default_parallelism

SPLIT_MIN_FILE_GROUPS = 64      # a table with this many file groups gets one task per core (over >= 2 partitions)
COPY_COLUMN = "__pyhudi_copy"   # which copy of a shared-out batch a row is (TaskShare)


@dataclass(frozen=True)
class TaskShare:
    """A small batch written by `tasks` Python tasks instead of one, without a shuffle: the batch is crossed with
    0..tasks-1 (COPY_COLUMN; a cartesian product with one partition per copy, so each task computes the batch once)
    and copy i keeps the records of the partitions task i owns. Every record is kept in exactly one copy, however
    Spark lays the copies out; a partition's file groups, small files and new file ids stay with one task, as in
    one task."""

    tasks: int
    owners: dict          # partition path -> task, the table's partitions balanced by their file groups

    def owner(self, partition: str) -> int:
        """The task of a partition (one the table does not have yet: by a stable hash of its path)."""
        known = self.owners.get(partition)
        return known if known is not None else zlib.crc32(partition.encode("utf-8")) % self.tasks

    def own(self, batches):
        """Executor: of each keyed batch, the records its copy owns, without COPY_COLUMN."""
        for batch in batches:
            names = batch.schema.names
            paths = batch.column(names.index(PARTITION_PATH))
            present = pc.unique(paths)
            owners = pa.array([self.owner(p) for p in present.to_pylist()], pa.int64())
            owner = pc.take(owners, pc.index_in(paths, value_set=present))
            keep = pc.equal(owner, batch.column(names.index(COPY_COLUMN)).cast(pa.int64()))
            kept = batch.filter(keep).drop_columns([COPY_COLUMN])
            if kept.num_rows:
                yield kept


def one_task_split(spark, existing: dict, rereadable: bool) -> TaskShare | None:
    """How a small batch's write (in_one_task) is shared out: None (one task), or one task per core when the
    table has many file groups over several partitions and the batch is `rereadable`: computing it again is cheap
    (no join or aggregation: a dbt model's query is not run twice) and gives the same rows (deterministic). Each
    task computes the batch (see TaskShare). A small batch can touch
    every file group of a big table (a few late updates in each), each costing a few milliseconds of Python (its
    bloom filter, a log block or a merge), and one task's threads share one interpreter lock. The partitions go
    to the tasks by their number of file groups, biggest first to the least loaded task."""
    per_partition: dict[str, int] = {}
    for partition, _ in existing:
        per_partition[partition] = per_partition.get(partition, 0) + 1
    tasks = min(len(per_partition), default_parallelism(spark))
    if not rereadable or len(existing) < SPLIT_MIN_FILE_GROUPS or tasks < 2:
        return None
    load, owners = [0] * tasks, {}
    for partition, groups in sorted(per_partition.items(), key=lambda item: (-item[1], item[0])):
        task = load.index(min(load))
        owners[partition] = task
        load[task] += groups
    return TaskShare(tasks, owners)
