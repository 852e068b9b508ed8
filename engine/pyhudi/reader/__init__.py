"""Queries on Hudi tables: snapshot, read_optimized, incremental and time travel (`as.of.instant`)."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.spark.jvm import hadoop_serves, read_parquet
from pyhudi.storage.scan import escape_glob
from pyhudi.reader.plan import ScanPlan, plan_scan, table_schema  # noqa: F401  (public)


def read(spark: SparkSession, path: str, options: dict | None = None) -> DataFrame:
    """A DataFrame over the table at `path`, read with Spark's native parquet scan (column pruning and filter
    pushdown apply). A merge-on-read snapshot reads only the log files in Python and merges them with the base
    rows by a join (`mor_scan`). A read that plans the same files as an earlier read in this session reuses
    that read's built plan (`dataframe_cache`). Options are Hudi's read options: hoodie.datasource.query.type,
    as.of.instant..."""
    from pyhudi.cdc import is_cdc_query
    from pyhudi.reader.dataframe_cache import cached_dataframe
    from pyhudi.reader.mor_scan import can_merge_natively, merged_snapshot

    if is_cdc_query(options):   # Hudi's CDC rows, built in executors by the data source
        from pyhudi.cdc.plan import plan_changes
        plan_changes(str(path), options)   # refusals as PyHudiError here (Spark would wrap them); metadata only
        return spark.read.format("hudi").options(**(options or {})).load(str(path))
    plan = plan_scan(str(path), options)
    # files may hold numbers where the schema says string (cast per file in executors), or Spark has no
    # filesystem for the table's URI (an object store without its connector jar): the data source reads in tasks
    if plan.numbers_as_text or not hadoop_serves(spark, plan.table.storage.base_uri):
        return spark.read.format("hudi").options(**(options or {})).load(str(path))
    if plan.needs_merge:
        if can_merge_natively(plan):   # base files natively, log files in executors, merged by a join
            return cached_dataframe(spark, plan, "merged", lambda: merged_snapshot(
                spark, plan, lambda uris: native_scan(spark, plan, uris)))
        # incremental reads of slices with logs (and tables the native merge cannot key): merged per slice
        return spark.read.format("hudi").options(**(options or {})).load(str(path))
    return cached_dataframe(spark, plan, "native", lambda: scan_dataframe(spark, plan))


def native_scan(spark: SparkSession, plan: ScanPlan, uris: list[str]) -> DataFrame:
    """Spark's parquet scan of the files at ``uris`` in the table schema."""
    from pyspark.sql.pandas.types import from_arrow_schema

    spark_schema = from_arrow_schema(plan.schema)
    if not uris:
        return spark.createDataFrame([], spark_schema)
    return read_parquet(spark, spark_schema, [escape_glob(u) for u in uris])


def scan_dataframe(spark: SparkSession, plan: ScanPlan) -> DataFrame:
    df = native_scan(spark, plan, [plan.table.storage.uri(p) for p in plan.base_paths])
    if plan.begin_exclusive is not None:
        commit = F.col("_hoodie_commit_time")
        df = df.filter(commit.isin(sorted(plan.commit_times)) if plan.commit_times is not None
                       else (commit > F.lit(plan.begin_exclusive)) & (commit <= F.lit(plan.end_inclusive)))
    return df


def read_file_groups(spark: SparkSession, view, groups: set[tuple[str, str]]) -> DataFrame:
    """The latest rows of the file groups ``groups`` ({(partition, file id)}) as ``view`` sees them, logs merged:
    a write that must see the stored version of records it changes (a global index moving keys to another
    partition merges each with its stored record first, as Hudi's HoodieMergedReadHandle lookup)."""
    from pyhudi.reader.mor_scan import can_merge_natively, merged_snapshot

    partitions = sorted({partition for partition, _ in groups})
    slices = [s for s in view.merged_latest_slices(partitions) if (s.partition_path, s.file_id) in groups]
    plan = ScanPlan(view.table, table_schema(view.table, view.timeline), slices, None, None, False,
                    frozenset(view.visible_instants), view.timeline_start, view.check_committed_sizes(slices))
    native = hadoop_serves(spark, view.table.storage.base_uri)
    if native and not plan.needs_merge:
        return scan_dataframe(spark, plan)
    if native and can_merge_natively(plan):
        return merged_snapshot(spark, plan, lambda uris: native_scan(spark, plan, uris))
    # tables the native merge cannot key, or Spark without a filesystem for the URI: the data source's snapshot
    # at the view's instant, narrowed to the groups
    group = F.concat_ws("/", F.col("_hoodie_partition_path"), F.substring_index(F.col("_hoodie_file_name"), "_", 1))
    as_of = {"as.of.instant": view.as_of} if view.as_of else {}
    return (spark.read.format("hudi").options(**as_of).load(view.table.storage.base_uri)
            .filter(group.isin([f"{p}/{f}" for p, f in sorted(groups)])))
