"""A Spark Connect server for the tests, in a process of its own (a Python process holds either a classic Spark
session or an in-process Connect server, not both): a classic local session with Spark's Connect plugin on a free
port. Prints the port, then serves until its stdin closes.

    python connect_server.py <warehouse folder> <master>
"""

from __future__ import annotations

import os
import socket
import sys


def main() -> None:
    warehouse, master = sys.argv[1], sys.argv[2]
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master)
             .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
             .config("spark.connect.grpc.binding.port", str(port))
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.default.parallelism", "2").config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.warehouse.dir", warehouse)
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.executor.memory", "768m")
             .config("spark.connect.progress.reportInterval", "300ms")   # the client's progress line (2 s default)   # local-cluster's workers have 1024 MB each
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print(port, flush=True)
    sys.stdin.read()
    spark.stop()


if __name__ == "__main__":
    main()
