"""Queries on Hudi tables: snapshot, read_optimized, incremental and time travel (`as.of.instant`)."""

from __future__ import annotations

import re

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.reader.plan import ScanPlan, plan_scan, table_schema  # noqa: F401  (public)


def read(spark: SparkSession, path: str, options: dict | None = None) -> DataFrame:
    """A DataFrame over the table at `path`, read with Spark's native parquet scan (column pruning and filter
    pushdown apply; merge-on-read slices with log files are merged in executors). Options are Hudi's read options: hoodie.datasource.query.type, as.of.instant, ..."""
    plan = plan_scan(str(path), options)
    if plan.needs_merge:   # merge-on-read slices with logs: merged per slice in executors by the data source
        return spark.read.format("hudi").options(**(options or {})).load(str(path))
    return scan_dataframe(spark, plan)


def escape_glob(path: str) -> str:
    """A file path Spark's reader takes literally: partition values may hold Hadoop glob characters
    ([, ], {, }, *, ?, \\), which Spark would otherwise expand (missing files, or other partitions' files)."""
    return re.sub(r"([\[\]{}*?\\])", r"\\\1", path)


def scan_dataframe(spark: SparkSession, plan: ScanPlan) -> DataFrame:
    from pyspark.sql.pandas.types import from_arrow_schema

    spark_schema = from_arrow_schema(plan.schema)
    uris = [plan.table.storage.uri(p) for p in plan.base_paths]
    if not uris:
        return spark.createDataFrame([], spark_schema)
    df = spark.read.schema(spark_schema).parquet(*[escape_glob(u) for u in uris])
    if plan.begin_exclusive is not None:
        commit = F.col("_hoodie_commit_time")
        df = df.filter((commit > F.lit(plan.begin_exclusive)) & (commit <= F.lit(plan.end_inclusive)))
    return df
