"""Clustering in Spark tasks (Hudi's SparkSortAndSizeExecutionStrategy): executors read the planned file slices
(a merge-on-read slice merged with its log files, as a snapshot query reads it), Spark range-partitions them by
clustering group and sorts by (group, sort columns, record key), and each writer task cuts its sorted run into
new base files of the clustering instant: a new file at every group change and every `records_per_file` records.
Records keep `_hoodie_commit_time`, `_hoodie_commit_seqno`, key and partition (Hudi's clustering preserves commit
metadata); `_hoodie_file_name` names the new file. A table without meta fields (virtual keys, copy-on-write only)
keeps them null and gets no bloom filter, as its writes do. The driver sees one stats row per written file only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa

from pyhudi.commit.markers import create_marker
from pyhudi.commit.metadata import STATS_DDL, STATS_SCHEMA, WriteStat, write_stat
from pyhudi.commit.spark_jobs import task_token
from pyhudi.file_group.base_file import BloomSettings, blank_meta, with_file_name, write_base_file
from pyhudi.file_group.naming import base_file_name, new_file_id, partition_file
from pyhudi.services.clustering.plan import ClusteringPlan
from pyhudi.spark.jvm import one_row_per_task
from pyhudi.services.compaction.tasks import plan_file_slice
from pyhudi.schema import meta_fields as MF
from pyhudi.sorted_runs import run_bounds
from pyhudi.storage import Storage
from pyhudi.testing import crash_point, task_failure_point

GROUP_COLUMN = "_pyhudi_cluster_group"
_SLICES_DDL = "grp int, partition_path string, file_id string, data_file string, delta_files array<string>"


@dataclass(frozen=True)
class ClusterContext:
    """What executors need (metadata only, pickled into the tasks)."""

    storage: Storage
    instant_time: str
    schema: pa.Schema                 # meta + data columns, storage types (what the new files hold)
    visible_instants: frozenset
    committed_before: str | None
    ordering_field: str | None
    payload_class: str
    bloom: BloomSettings
    compression: str
    avro_schema_json: str | None
    records_per_file: int
    group_partitions: tuple[str, ...]  # each clustering group's partition (a group never spans two)
    virtual_keys: bool = False        # hoodie.populate.meta.fields=false: meta columns stay null, no footer filter


def records_frame(spark, plan: ClusteringPlan, ctx: ClusterContext):
    """The planned slices' records (table schema + GROUP_COLUMN), read in executors: one task per slice."""
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    from pyspark.sql.types import IntegerType, StructField, StructType

    rows = [(index, s.partition_path, s.file_id, s.data_file, list(s.delta_files))
            for index, group in enumerate(plan.groups) for s in group.slices]
    table_type = from_arrow_schema(ctx.schema)
    out_type = StructType([StructField(f.name, f.dataType, True) for f in table_type.fields]
                          + [StructField(GROUP_COLUMN, IntegerType(), False)])
    slices = one_row_per_task(spark, rows, _SLICES_DDL)

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyhudi.reader.file_slice_reader import read_file_slice

        target = to_arrow_schema(out_type, timezone="UTC", prefers_large_types=False)
        schema = pa.schema([f.with_nullable(True) for f in target][:-1])
        for batch in batches:
            for row in batch.to_pylist():
                records = read_file_slice(ctx.storage, plan_file_slice(row, "clustering"), schema,
                                          visible_instants=ctx.visible_instants, ordering_field=ctx.ordering_field,
                                          payload_class=ctx.payload_class, committed_before=ctx.committed_before)
                columns = [records[f.name] for f in schema]
                columns.append(pa.chunked_array([pa.array([row["grp"]] * records.num_rows, pa.int32())]))
                yield from pa.Table.from_arrays(columns, schema=target).to_batches()

    return slices.mapInArrow(read, out_type)


def write_clustered(ctx: ClusterContext, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Records arrive sorted by (group, sort columns, key): cut a new base file at each group change and every
    `records_per_file` records; yield one stats row per file."""
    token, _ = task_token()
    stats: list[dict] = []
    pending: list[pa.Table] = []
    state: dict = {"group": None, "rows": 0}

    def flush() -> None:
        if not pending:
            return
        table = pa.concat_tables(pending)
        pending.clear()
        state["rows"] = 0
        stats.append(_write_file(ctx, table, token, ctx.group_partitions[state["group"]]))

    for batch in batches:
        table = pa.Table.from_batches([batch])
        if table.num_rows == 0:
            continue
        groups = table[GROUP_COLUMN].combine_chunks()
        for start, end in zip(*run_bounds(groups)):
            run = table.slice(start, end - start)
            group = groups[int(start)].as_py()
            if pending and group != state["group"]:
                flush()
            state["group"] = group
            while run.num_rows:
                piece = run.slice(0, ctx.records_per_file - state["rows"])
                run = run.slice(piece.num_rows)
                pending.append(piece)
                state["rows"] += piece.num_rows
                if state["rows"] >= ctx.records_per_file:
                    flush()
    flush()
    if stats:
        yield from pa.Table.from_pylist(stats, schema=STATS_SCHEMA).to_batches()


def _write_file(ctx: ClusterContext, records: pa.Table, token: str, partition: str) -> dict:
    """One new file group: the records in storage types, meta columns kept but the file name."""
    file_id = new_file_id()
    name = base_file_name(file_id, token, ctx.instant_time)
    relative = partition_file(partition, name)
    columns = []
    for fld in ctx.schema:
        if fld.name == MF.FILE_NAME:   # named below
            columns.append(pa.nulls(records.num_rows, pa.string()))
            continue
        column = records[fld.name]
        columns.append(column if column.type == fld.type else column.cast(fld.type))
    table = pa.Table.from_arrays(columns, schema=ctx.schema)
    table = blank_meta(table, name) if ctx.virtual_keys else with_file_name(table, name)
    create_marker(ctx.storage, ctx.instant_time, relative, "CREATE")
    out = write_base_file(ctx.storage, relative, table, None if ctx.virtual_keys else ctx.bloom, ctx.compression,
                          ctx.avro_schema_json)
    crash_point("clustering.executor.after_file")
    task_failure_point("clustering.executor.after_file")
    return {"partition_path": partition, "file_id": file_id, "path": out.path, "prev_commit": "null",
            "num_writes": out.num_rows, "num_inserts": out.num_rows, "num_updates": 0, "num_deletes": 0,
            "file_size": out.size, "min_key": out.min_key, "max_key": out.max_key, "log_version": None,
            "base_file": None}


def write_frame(records, plan: ClusteringPlan, ctx: ClusterContext, sort_columns: list[str]):
    """Range-partition the records by clustering group (a group value never spans two partitions, so each group
    is written by one task), sort each partition by (group, sort columns, record key) and write it; returns the
    stats frame. Hudi spreads a group over numOutputFileGroups tasks; here one task writes them all, in
    sequence, cutting files at `records_per_file`, so a group's files hold disjoint sort ranges."""
    from pyspark.sql import functions as F

    order = [F.col(GROUP_COLUMN)] + [F.col(f"`{c}`") for c in sort_columns] + [F.col(MF.RECORD_KEY)]
    ordered = records.repartitionByRange(max(1, len(plan.groups)), F.col(GROUP_COLUMN)).sortWithinPartitions(*order)
    return ordered.mapInArrow(lambda batches: write_clustered(ctx, batches), STATS_DDL)


def clustering_stats(rows) -> list[WriteStat]:
    return [write_stat(row) for row in rows]
