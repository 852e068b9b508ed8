"""Parquet scans of base files by Spark where its Hadoop filesystems reach the table, else by pyarrow in the tasks.

Spark's parquet source reads s3a://, gs:// or abfs:// only with the cloud's connector jar on the cluster's
classpath. Where it is missing (a plain pyspark install), the same scan runs in Python tasks through the table's
own filesystem (storage/object_store.py): the same rows and columns, without Spark's filter pushdown.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from pyhudi.spark.jvm import default_parallelism, hadoop_serves, read_parquet

if TYPE_CHECKING:
    import pyarrow as pa

# Spark's hidden per-file column, which the fallback carries as an ordinary one (only file_name is filled)
FILE_METADATA = "_metadata"


def scan_parquet(spark: SparkSession, schema: T.StructType, uris: list[str]) -> DataFrame:
    """The rows of the parquet files at ``uris`` in ``schema`` (a column a file lacks reads as null), with
    ``_metadata.file_name`` available to select, as on Spark's own scan. The URIs are taken literally (no glob)."""
    if not uris or hadoop_serves(spark, uris[0]):
        return read_parquet(spark, schema, [escape_glob(u) for u in uris])
    return _scan_in_tasks(spark, schema, uris)


def escape_glob(path: str) -> str:
    """A file path Spark's reader takes literally: partition values may hold Hadoop glob characters
    ([, ], {, }, *, ?, \\), which Spark would otherwise expand (missing files, or other partitions' files)."""
    return re.sub(r"([\[\]{}*?\\])", r"\\\1", path)


def _scan_in_tasks(spark: SparkSession, schema: T.StructType, uris: list[str]) -> DataFrame:
    from pyspark.sql.pandas.types import to_arrow_schema

    out = T.StructType(schema.fields + [T.StructField(
        FILE_METADATA, T.StructType([T.StructField("file_name", T.StringType())]))])
    arrow_schema = to_arrow_schema(schema)
    tasks = max(1, min(len(uris), default_parallelism(spark)))
    files = spark.createDataFrame([(u,) for u in uris], "uri string").repartition(tasks)

    def read(batches):
        for batch in batches:
            for uri in batch.column(0).to_pylist():
                yield from _file_batches(uri, arrow_schema)

    return files.mapInArrow(read, out)


def _file_batches(uri: str, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Executor: one parquet file's record batches in ``schema`` plus its file name, as Spark's scan gives them."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from urllib.parse import quote

    from pyhudi.storage.object_store import filesystem

    fs, path = filesystem(uri)
    name = quote(uri.rsplit("/", 1)[-1], safe=",;:$&+=@!*'()")   # as Spark gives it: URI-escaped, as Hadoop's
    file_type = pa.struct([pa.field("file_name", pa.string())])
    out_schema = pa.schema(list(schema) + [pa.field(FILE_METADATA, file_type)])
    with fs.open_input_file(path) as source:
        parquet = pq.ParquetFile(source)
        present = set(parquet.schema_arrow.names)
        wanted = [f.name for f in schema if f.name in present]
        for batch in parquet.iter_batches(columns=wanted, use_threads=False):
            columns = [batch.column(f.name).cast(f.type) if f.name in present else pa.nulls(batch.num_rows, f.type)
                       for f in schema]
            names = pa.array([name] * batch.num_rows, pa.string())
            columns.append(pa.StructArray.from_arrays([names], fields=list(file_type)))
            yield pa.RecordBatch.from_arrays(columns, schema=out_schema)
