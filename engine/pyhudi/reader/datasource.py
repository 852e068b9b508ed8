"""The Spark Python data source `hudi`: `spark.read.format("hudi").options(...).load(path)`.

Planning happens on the driver (one input partition per file slice); executors read their files with pyarrow
and stream Arrow record batches back to Spark.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from pyhudi.cdc import CDC_SPARK_DDL, is_cdc_query
from pyhudi.errors import ConfigError


@dataclass
class SlicePartition(InputPartition):
    """One file slice to read (metadata only; pickled to an executor)."""

    base_uri: str
    file_slice: object | None          # pyhudi.file_group.model.FileSlice
    begin_exclusive: str | None = None
    end_inclusive: str | None = None
    visible_instants: frozenset = frozenset()
    ordering_field: str | None = None
    payload_class: str | None = None
    base_only: bool = True
    committed_before: str | None = None
    committed_extents: dict | None = None   # this slice's files: byte ranges visible commits wrote
    commit_times: frozenset | None = None   # incremental on Hudi 1.x: only these commits' rows


class HudiDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "hudi"

    def _path(self) -> str:
        path = self.options.get("path")
        if not path:
            raise ConfigError("spark.read.format('hudi').load(path): the table path is missing")
        return path

    def _options(self) -> dict:
        return {k: v for k, v in self.options.items() if k != "path"}

    def schema(self):
        from pyspark.sql.pandas.types import from_arrow_schema
        if is_cdc_query(self._options()):
            return CDC_SPARK_DDL
        from pyhudi.reader.plan import table_schema
        from pyhudi.table import HudiTable
        return from_arrow_schema(table_schema(HudiTable.load(self._path())))

    def reader(self, schema):
        # A catalog table (CREATE TABLE ... USING hudi) reaches us without options: Spark passes only its schema,
        # where the SQL layer stores the base path (pyhudi.sqlext.catalog.BASE_PATH_KEY) in a field's metadata.
        path = self.options.get("path") or next(
            (f.metadata["hudi.base.path"] for f in schema.fields if "hudi.base.path" in (f.metadata or {})), None)
        if is_cdc_query(self._options()):
            return CdcReader(path or self._path(), self._options())
        return HudiReader(path or self._path(), self._options(), schema)


class HudiReader(DataSourceReader):
    def __init__(self, path: str, options: dict, schema):
        self.path = path
        self.options = options
        self.schema = schema

    def partitions(self):
        from pyhudi.reader.plan import plan_scan
        plan = plan_scan(self.path, self.options)
        base_uri = plan.table.storage.base_uri
        parts = [SlicePartition(base_uri, s, plan.begin_exclusive, plan.end_inclusive, plan.visible_instants,
                                plan.ordering_field, plan.payload_class, plan.base_only or not s.log_files,
                                plan.committed_before,
                                {log.path: plan.committed_extents[log.path] for log in s.log_files
                                 if log.path in plan.committed_extents}, plan.commit_times)
                 for s in plan.slices]
        return parts or [SlicePartition(base_uri, None)]

    def read(self, partition: SlicePartition):
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyhudi.file_group.base_file import read_base_file
        from pyhudi.storage import Storage

        target = to_arrow_schema(self.schema, timezone="UTC", prefers_large_types=False)
        file_slice = partition.file_slice
        if file_slice is None:
            return
        storage = Storage(partition.base_uri)
        if partition.base_only:
            if file_slice.base_file is None:
                return
            table = read_base_file(storage, file_slice.base_file.path)
        else:
            from pyhudi.reader.file_slice_reader import read_file_slice
            table = read_file_slice(storage, file_slice, target, visible_instants=set(partition.visible_instants),
                                    ordering_field=partition.ordering_field, payload_class=partition.payload_class,
                                    committed_before=partition.committed_before,
                                    committed_extents=partition.committed_extents)
        if partition.begin_exclusive is not None:
            from pyhudi.reader.plan import keeps_commit_arrow
            table = table.filter(keeps_commit_arrow(table["_hoodie_commit_time"], partition.begin_exclusive,
                                                    partition.end_inclusive, partition.commit_times))
        columns = []
        for fld in target:
            if fld.name in table.column_names:
                column = table[fld.name]
                columns.append(column if column.type == fld.type else column.cast(fld.type))
            else:
                columns.append(pa.chunked_array([pa.nulls(table.num_rows, fld.type)], fld.type))
        yield from pa.Table.from_arrays(columns, schema=target).to_batches()


@dataclass
class CdcPartition(InputPartition):
    """One file group's change in one commit (pyhudi.cdc.plan.CdcTask), with what its slices need to read."""

    base_uri: str
    task: object | None
    schema: object = None               # pa.Schema of the table (meta + data columns, storage types)
    ordering_field: str | None = None
    payload_class: str | None = None
    committed_before: str | None = None
    mode: str = "DATA_BEFORE_AFTER"


class CdcReader(DataSourceReader):
    """Hudi's CDC query: the driver plans (instant, file group) tasks; executors diff the slices (pyhudi.cdc)."""

    def __init__(self, path: str, options: dict):
        self.path = path
        self.options = options

    def partitions(self):
        from pyhudi.cdc.plan import plan_changes
        from pyhudi.reader.plan import table_schema
        plan = plan_changes(self.path, self.options)
        base_uri = plan.table.storage.base_uri
        if not plan.tasks:
            return [CdcPartition(base_uri, None)]
        schema = table_schema(plan.table)
        props = plan.table.properties
        start = plan.table.view().timeline_start
        return [CdcPartition(base_uri, t, schema, props.precombine_field, props.payload_class, start, plan.mode)
                for t in plan.tasks]

    def read(self, partition: CdcPartition):
        if partition.task is None:
            return
        from pyhudi.cdc.extract import task_changes
        from pyhudi.reader.file_slice_reader import read_file_slice
        from pyhudi.storage import Storage
        storage = Storage(partition.base_uri)

        def read_slice(file_slice, visible):
            return read_file_slice(storage, file_slice, partition.schema, visible_instants=set(visible),
                                   ordering_field=partition.ordering_field, payload_class=partition.payload_class,
                                   committed_before=partition.committed_before)

        yield from task_changes(partition.task, read_slice, storage, partition.mode).to_batches()
