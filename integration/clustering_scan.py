"""What clustering does to a scan with a filter on the sort column (issue 15 item 1), measured once:

    .venv/bin/python integration/clustering_scan.py [--rows 1000000] [--files 20] [--runs 3]

Builds a copy-on-write table whose `--files` base files each hold random `fare` values (a bulk_insert cut by
size), times `SELECT count(*) WHERE fare BETWEEN 100 AND 110` (1% of the range) through pyhudi.read (Spark's
native parquet scan, filter pushed down), clusters it sorted by fare into about as many files, and times the same
query again. Prints the files whose fare range (parquet footer statistics) overlaps the filter, which are the
files a scan must read, and the median seconds."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import pyarrow.parquet as pq


def _overlapping(path: str, low: float, high: float) -> tuple[int, int]:
    from pyhudi.table import HudiTable
    files = HudiTable.load(path).view().latest_base_files()
    hits = 0
    for f in files:
        meta = pq.ParquetFile(f"{path}/{f.path}").metadata
        index = meta.schema.to_arrow_schema().get_field_index("fare")
        stats = [meta.row_group(i).column(index).statistics for i in range(meta.num_row_groups)]
        if any(s.min <= high and s.max >= low for s in stats):
            hits += 1
    return hits, len(files)


def _time(spark, path: str, runs: int) -> float:
    import pyhudi
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        pyhudi.read(spark, path).filter("fare BETWEEN 100 AND 110").count()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    import pyhudi
    from pyhudi.client.clustering import cluster
    from pyspark.sql import functions as F

    work = tempfile.mkdtemp(prefix="pyhudi-clustering-")
    spark = pyhudi.session(master="local[2]", warehouse_dir=f"{work}/wh", **{"spark.driver.memory": "3g"})
    spark.sparkContext.setLogLevel("ERROR")
    path = f"{work}/trips"
    df = (spark.range(args.rows).withColumn("fare", (F.rand(7) * 10000).cast("double"))
          .withColumn("rider", F.concat(F.lit("rider-"), (F.col("id") % 997).cast("string")))
          .withColumn("ts", F.lit(1).cast("long")))
    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.operation": "bulk_insert",
               "hoodie.bulkinsert.shuffle.parallelism": str(args.files)}
    pyhudi.write(df, path, options)
    before = _overlapping(path, 100, 110)
    before_s = _time(spark, path, args.runs)

    from pyhudi.table import HudiTable
    total = sum(f.size for f in HudiTable.load(path).view().latest_base_files())
    start = time.perf_counter()
    cluster(spark, path, options={"hoodie.clustering.plan.strategy.sort.columns": "fare",
                                  "hoodie.clustering.plan.strategy.target.file.max.bytes": str(total // args.files)})
    cluster_s = time.perf_counter() - start
    after = _overlapping(path, 100, 110)
    after_s = _time(spark, path, args.runs)
    print(f"rows {args.rows}; filter fare BETWEEN 100 AND 110 (1% of the range)")
    print(f"before clustering: files overlapping the filter {before[0]} of {before[1]}, median {before_s:.2f} s")
    print(f"after clustering:  files overlapping the filter {after[0]} of {after[1]}, median {after_s:.2f} s")
    print(f"clustering itself: {cluster_s:.1f} s")
    spark.stop()


if __name__ == "__main__":
    main()
