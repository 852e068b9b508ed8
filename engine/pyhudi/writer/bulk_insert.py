"""bulk_insert as Hudi lays it out: `hoodie.bulkinsert.sort.mode` (Hudi's BulkInsertSortMode) decides how the batch
is spread over write tasks and ordered inside them, and each task cuts files per partition path and near
`hoodie.parquet.max.file.size`.

| mode | spread over tasks | order in a task | files per partition path |
| --- | --- | --- | --- |
| NONE (Hudi's default) | as the input is (coalesced to the parallelism when it is set) | none | one set per task that saw the path |
| GLOBAL_SORT | range-partitioned by (partition path, key) | (partition path, key) | few, with disjoint key ranges |
| PARTITION_SORT | as the input is (coalesced) | (partition path, key) | one set per task that saw the path |
| PARTITION_PATH_REPARTITION | hashed by partition path | none | one set per path |
| PARTITION_PATH_REPARTITION_AND_SORT | hashed by partition path | partition path | one set per path |

A non-partitioned table is only coalesced by the two PARTITION_PATH modes, as in Hudi. The parallelism is
`hoodie.bulkinsert.shuffle.parallelism`, or the input's number of Spark partitions when it is 0 (Hudi's rule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from pyhudi.commit.markers import create_marker
from pyhudi.commit.metadata import STATS_DDL, WriteStat, write_stat
from pyhudi.commit.spark_jobs import collect_or_raise, reserve_sequence, task_token
from pyhudi.file_group.base_file import blank_meta, encoded_record_size, write_base_file
from pyhudi.file_group.naming import base_file_name, new_file_id, partition_file
from pyhudi.sorted_runs import run_bounds
from pyhudi.testing import crash_point, task_failure_point
from pyhudi.writer.file_writer import PARTITION_PATH, RECORD_KEY, WriteContext, footer_bloom, stats_table, stamp_meta

if TYPE_CHECKING:
    from pyhudi.writer.strategy import WriteJob

SORT_MODES = ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
              "PARTITION_PATH_REPARTITION_AND_SORT")


def write(job: WriteJob) -> tuple[list[WriteStat], None]:
    """The bulk_insert strategy: the batch deduplicated when hoodie.combine.before.insert is on (as Hudi), laid
    out by the sort mode, cut into new base files by each task; no index is consulted (no index stats)."""
    partitioned = bool(job.wc.partition_path_field)
    ordered, grouped = lay_out(job.deduped(job.keyed), job.wc.bulk_insert_sort_mode, job.wc.bulk_insert_parallelism,
                               partitioned)
    ctx = job.ctx
    stats_df = ordered.mapInArrow(lambda batches: write_bulk_files(ctx, batches, grouped), STATS_DDL)
    return [write_stat(row) for row in collect_or_raise(stats_df)], None


def lay_out(keyed: DataFrame, mode: str, parallelism: int, partitioned: bool) -> tuple[DataFrame, bool]:
    """The batch spread and ordered for `mode`; the flag says whether each task's rows arrive grouped by
    partition path (so a task holds one partition's pending file at a time)."""
    if mode == "GLOBAL_SORT":
        if parallelism:
            ranged = keyed.repartitionByRange(parallelism, PARTITION_PATH, RECORD_KEY)
            return ranged.sortWithinPartitions(PARTITION_PATH, RECORD_KEY), True
        return keyed.orderBy(PARTITION_PATH, RECORD_KEY), True
    coalesced = keyed.coalesce(parallelism) if parallelism else keyed
    if mode == "PARTITION_SORT":
        return coalesced.sortWithinPartitions(PARTITION_PATH, RECORD_KEY), True
    if mode in ("PARTITION_PATH_REPARTITION", "PARTITION_PATH_REPARTITION_AND_SORT") and partitioned:
        spread = keyed.repartition(parallelism or keyed.rdd.getNumPartitions(), PARTITION_PATH)
        if mode == "PARTITION_PATH_REPARTITION_AND_SORT":
            return spread.sortWithinPartitions(PARTITION_PATH), True
        return spread, False
    return coalesced, False


SIZE_SAMPLE_ROWS = 20_000   # rows a task encodes in memory to learn its records' encoded size (FileSizer)


class FileSizer:
    """How many records fill a base file of hoodie.parquet.max.file.size, as Hudi's bulk_insert cuts files: by
    the written size (Hudi's parquet writer checks its data size as it writes), not by the record size estimate
    an upsert plans inserts with (hoodie.copyonwrite.record.size.estimate, 1 KB: ~5 MB files of small records).
    pyhudi writes a file whole, so a task learns its records' encoded size first from a sample of its first batch
    (encoded in memory as the file will be, meta columns included) and then from each file it has written."""

    def __init__(self, ctx: WriteContext):
        self.ctx = ctx
        self.bytes_per_record: float | None = None

    def records_per_file(self, table: pa.Table) -> int:
        if self.bytes_per_record is None:
            sample = table.slice(0, SIZE_SAMPLE_ROWS)
            stamped = stamp_meta(sample, self.ctx, new_file_id() + ".parquet", 0)
            self.bytes_per_record = encoded_record_size(stamped, self.ctx.compression, self.ctx.unique_columns)
        return max(1, int(self.ctx.max_file_size / max(self.bytes_per_record, 1e-3)))

    def written(self, size: int, records: int) -> None:
        """Learn from a written file that is at least half full (in a smaller one the footer, with its bloom
        filter of up to ~1 MB, would weigh on the figure)."""
        if records and size >= self.ctx.max_file_size // 2:
            self.bytes_per_record = size / records


class _PendingFile:
    """Rows of one partition path waiting to become a base file."""

    def __init__(self):
        self.pieces: list[pa.Table] = []
        self.rows = 0
        self.nbytes = 0

    def add(self, piece: pa.Table) -> None:
        self.pieces.append(piece)
        self.rows += piece.num_rows
        self.nbytes += piece.nbytes


def write_bulk_files(ctx: WriteContext, batches: Iterator[pa.RecordBatch], grouped: bool) -> Iterator[pa.RecordBatch]:
    """Executor side: cut this task's rows into new base files, one pending file per partition path, closed when
    it holds hoodie.parquet.max.file.size of encoded records (FileSizer). With `grouped` input a partition's file
    is closed when the next partition begins; otherwise (unsorted modes) every partition's file stays open, and
    when they hold more than a few files' worth of memory the largest is closed early, as Hudi's writer closes
    handles it cannot keep open."""
    token, partition_id = task_token()
    stats = []
    pending: dict = {}
    budget = ctx.max_file_size * 3 * 4   # arrow bytes overstate parquet's roughly 3x; keep about 4 files' worth
    sizer = FileSizer(ctx)

    def close(partition) -> None:
        file = pending.pop(partition)
        table = pa.concat_tables(file.pieces)
        file_id = new_file_id()
        name = base_file_name(file_id, token, ctx.instant_time)
        relative = partition_file(partition, name)
        stamped = stamp_meta(table, ctx, name, partition_id, reserve_sequence(token, table.num_rows))
        if ctx.virtual_keys is not None:
            stamped = blank_meta(stamped, name)
        create_marker(ctx.storage, ctx.instant_time, relative, "CREATE")
        out = write_base_file(ctx.storage, relative, stamped, footer_bloom(ctx), ctx.compression, ctx.avro_schema_json,
                              ctx.unique_columns)
        crash_point("write.executor.after_file")
        task_failure_point("write.executor.after_file")
        stats.append((partition, file_id, out, "null", table.num_rows, 0, 0))
        sizer.written(out.size, table.num_rows)

    for batch in batches:
        if batch.num_rows == 0:
            continue
        table = pa.Table.from_batches([batch])
        per_file = sizer.records_per_file(table)
        if not grouped:
            table = table.take(pc.sort_indices(table[PARTITION_PATH]))
        for partition, run in _partition_runs(table):
            if grouped:
                for other in [p for p in pending if p != partition]:
                    close(other)
            while run.num_rows:
                file = pending.setdefault(partition, _PendingFile())
                piece = run.slice(0, max(1, per_file - file.rows))
                run = run.slice(piece.num_rows)
                file.add(piece)
                if file.rows >= per_file:
                    close(partition)
        while len(pending) > 1 and sum(f.nbytes for f in pending.values()) > budget:
            close(max(pending, key=lambda p: pending[p].nbytes))
    for partition in list(pending):
        close(partition)
    if stats:
        yield from stats_table(stats).to_batches()


def _partition_runs(table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    """(partition path, rows) for each run of equal partition paths in `table`."""
    values = table[PARTITION_PATH]
    for start, end in zip(*run_bounds(values)):
        yield values[int(start)].as_py(), table.slice(start, end - start)
