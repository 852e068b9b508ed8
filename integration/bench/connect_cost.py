"""What Spark Connect costs an upsert (issue 38): the same 1% upsert through a Spark Connect session and through a
classic session, alternating run by run, medians of --runs.

    .venv/bin/python integration/bench/connect_cost.py [--rows 1000000] [--runs 9] [--types mor,cow]

A process holds either a classic session or a Connect client, so each side runs in a child process of its own
(the Connect server in a third, with the classic side's settings: local[2]). The parent tells the children in
turn to run once; each restores its table's pristine copy (untimed) and times only `pyhudi.write` of the batch.
Merge-on-read with the BUCKET index and copy-on-write with BLOOM, `hoodie.parquet.small.file.limit=0`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

SETTINGS = {"spark.default.parallelism": "2", "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false", "spark.sql.execution.arrow.pyspark.enabled": "true"}


def _options(table_type: str) -> dict:
    return {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "part", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type,
            "hoodie.index.type": "BUCKET" if table_type == "MERGE_ON_READ" else "BLOOM",
            "hoodie.bucket.index.num.buckets": "4", "hoodie.parquet.small.file.limit": "0"}


def serve(work: str) -> None:
    """The Connect server: a classic local[2] session with Spark's Connect plugin on a free port."""
    from pyspark.sql import SparkSession

    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    builder = (SparkSession.builder.master("local[2]")
               .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
               .config("spark.connect.grpc.binding.port", str(port))
               .config("spark.sql.warehouse.dir", os.path.join(work, "server-wh")))
    for key, value in SETTINGS.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    print(port, flush=True)
    sys.stdin.read()
    spark.stop()


def client(target: str, work: str, rows: int, table_type: str) -> None:
    """One side: build the table, then one timed upsert per 'run' line on stdin (prints seconds)."""
    import pyhudi
    from pyspark.sql import functions as F

    if target == "classic":
        spark = pyhudi.session(master="local[2]", warehouse_dir=os.path.join(work, "wh"), hive=False)
        for key, value in SETTINGS.items():
            if not key.startswith("spark.ui"):
                spark.conf.set(key, value)
        spark.sparkContext.setLogLevel("ERROR")
    else:
        spark = pyhudi.session(remote=f"sc://localhost:{target}")
    base = spark.range(rows).select(F.col("id"), (F.col("id") % 8).cast("string").alias("part"),
                                    F.lit(1).cast("long").alias("ts"),
                                    F.sha2(F.col("id").cast("string"), 256).alias("payload"))
    batch = base.where(F.col("id") % 100 == 7).withColumn("ts", F.lit(2).cast("long")).cache()
    batch.count()
    path = os.path.join(work, f"{'classic' if target == 'classic' else 'connect'}-{table_type}")
    pyhudi.write(base, path, {**_options(table_type), "hoodie.datasource.write.operation": "bulk_insert"})
    shutil.copytree(path, path + ".pristine")
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "run":
            break
        shutil.rmtree(path)
        shutil.copytree(path + ".pristine", path)
        started = time.perf_counter()
        pyhudi.write(batch, path, _options(table_type))
        print(f"{time.perf_counter() - started:.4f}", flush=True)
    spark.stop()


def _child(*args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "PYSPARK_SUBMIT_ARGS")}
    return subprocess.Popen([sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)


def _expect(process: subprocess.Popen, what: str) -> str:
    line = process.stdout.readline().strip()
    if not line:
        raise SystemExit(f"the {what} process ended early (run it alone to see its error)")
    return line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--types", default="mor,cow")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--client", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve)
    if args.client:
        return client(args.client[0], args.client[1], args.rows, args.client[2])
    work = tempfile.mkdtemp(prefix="connect-cost-")
    server = _child("--serve", work)
    port = _expect(server, "Connect server")
    print("| table | classic | Spark Connect | ratio |\n| --- | --- | --- | --- |", flush=True)
    try:
        for kind in args.types.split(","):
            table_type = "COPY_ON_WRITE" if kind == "cow" else "MERGE_ON_READ"
            sides = {name: _child("--rows", str(args.rows), "--client", target, work, table_type)
                     for name, target in (("classic", "classic"), ("connect", port))}
            for name, process in sides.items():
                _expect(process, name)
            times: dict[str, list[float]] = {name: [] for name in sides}
            for _ in range(args.runs):
                for name, process in sides.items():
                    process.stdin.write("run\n")
                    process.stdin.flush()
                    times[name].append(float(_expect(process, name)))
            for process in sides.values():
                process.stdin.close()
                process.wait(300)
            classic, connect = (statistics.median(times[n]) for n in ("classic", "connect"))
            print(f"| {kind}, {args.rows:,} rows, 1% upsert | {classic * 1000:.0f} ms | {connect * 1000:.0f} ms | "
                  f"{connect / classic:.2f}x |", flush=True)
    finally:
        server.stdin.close()
        server.wait(300)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
