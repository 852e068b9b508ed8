"""What keeping the metadata table costs an upsert (issue 35): the same 1% upsert into a version 8 table with and
without its `files` partition, in one process, alternating, medians of --runs.

    .venv/bin/python integration/bench/metadata_cost.py [--rows 1000000] [--runs 5] [--types cow,mor]

Each run restores the table's pristine copy first (untimed) and times only `pyhudi.write` of the batch. The
metadata table costs a delta commit per write (a log file, three instant files) and, every tenth, a compaction of
the files partition; runs start from a table with one delta commit, so no timed run compacts. The last column is
the median time spent inside the commit's metadata-table sync itself: on two shared cores the whole write's
medians move by more than that between runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def _options(table_type: str, metadata: bool) -> dict:
    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": "8",
               "hoodie.index.type": "BUCKET" if table_type == "MERGE_ON_READ" else "BLOOM",
               "hoodie.bucket.index.num.buckets": "4", "hoodie.parquet.small.file.limit": "0"}
    options["hoodie.metadata.enable"] = "true" if metadata else "false"
    return options


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--types", default="cow,mor")
    args = parser.parse_args()
    import pyhudi
    from pyhudi.commit import instant_commit
    from pyspark.sql import functions as F

    synced: list[float] = []        # the metadata-table sync of each timed write with the metadata table
    timing = [False]
    sync = instant_commit.sync_metadata_table

    def timed_sync(*args, **kwargs):
        started = time.perf_counter()
        try:
            return sync(*args, **kwargs)
        finally:
            if timing[0]:
                synced.append(time.perf_counter() - started)

    instant_commit.sync_metadata_table = timed_sync

    work = tempfile.mkdtemp(prefix="mdt-cost-")
    spark = pyhudi.session(master="local[2]", warehouse_dir=os.path.join(work, "wh"), hive=False)
    spark.sparkContext.setLogLevel("ERROR")
    base = spark.range(args.rows).select(F.col("id"), (F.col("id") % 8).cast("string").alias("part"),
                                         F.lit(1).cast("long").alias("ts"), F.sha2(F.col("id").cast("string"), 256)
                                         .alias("payload")).cache()
    batch = base.where(F.col("id") % 100 == 7).withColumn("ts", F.lit(2).cast("long")).cache()
    batch.count()
    results = {}
    for kind in args.types.split(","):
        table_type = "COPY_ON_WRITE" if kind == "cow" else "MERGE_ON_READ"
        pristine = {}
        for metadata in (False, True):
            path = os.path.join(work, f"{kind}-{metadata}")
            pyhudi.write(base, path, {**_options(table_type, metadata),
                                      "hoodie.datasource.write.operation": "bulk_insert"})
            pristine[metadata] = path + ".pristine"
            shutil.copytree(path, pristine[metadata])
        times: dict[bool, list[float]] = {False: [], True: []}
        synced.clear()
        for _ in range(args.runs):
            for metadata in (False, True):
                path = os.path.join(work, f"{kind}-{metadata}")
                shutil.rmtree(path)
                shutil.copytree(pristine[metadata], path)
                timing[0] = metadata
                started = time.perf_counter()
                pyhudi.write(batch, path, _options(table_type, metadata))
                times[metadata].append(time.perf_counter() - started)
                timing[0] = False
            assert os.path.isdir(os.path.join(path, ".hoodie", "metadata", "files"))
        results[kind] = {m: statistics.median(t) for m, t in times.items()}
        without, with_mdt = results[kind][False], results[kind][True]
        print(f"| {kind} v8, {args.rows:,} rows, {batch.count():,}-row upsert | {without * 1000:.0f} ms | "
              f"{with_mdt * 1000:.0f} ms | {(with_mdt - without) * 1000:+.0f} ms ({(with_mdt / without - 1):+.1%}) | "
              f"{statistics.median(synced) * 1000:.1f} ms |", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
