"""A Spark Connect client for test_spark_connect.py, in a process of its own: pyspark refuses a remote session in a
process that holds a classic one (each pytest worker does). Runs one scenario of pyhudi calls over the Connect
server at the given port and prints one JSON object: the rows read at each step, and the instants.

    python connect_client.py <port | classic> <table path> <table type>
"""

from __future__ import annotations

import json
import sys


def _rows(df) -> list:
    return sorted([list(r) for r in df.select("id", "name", "ts", "part").collect()], key=repr)


def main() -> None:
    port, path, table_type = sys.argv[1], sys.argv[2], sys.argv[3]
    import pyhudi
    from pyhudi.index import footers
    from pyhudi.spark.jvm import is_connect

    footers.SPARK_READ_THRESHOLD = 0   # the bloom index reads base file footers in a Spark job
    if port == "classic":   # the same scenario on a classic session, for comparison
        spark = pyhudi.session(master="local[2]", hive=False, warehouse_dir=path + "-warehouse")
    else:
        spark = pyhudi.session(remote=f"sc://localhost:{port}")
        assert is_connect(spark), type(spark)
    out: dict = {}

    def df(records):
        return spark.createDataFrame(records, "id long, name string, ts long, part string")

    options = {"hoodie.table.name": "connect", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
               "hoodie.datasource.write.table.type": table_type, "hoodie.parquet.small.file.limit": "0"}
    first = pyhudi.write(df([(k, f"a{k}", 1, f"p{k % 2}") for k in range(6)]), path, options).instant_time
    second = pyhudi.write(df([(1, "b1", 2, "p1"), (2, "b2", 2, "p0"), (9, "b9", 2, "p1")]), path,
                          options).instant_time
    pyhudi.write(df([(3, "", 3, "p1")]), path, {**options, "hoodie.datasource.write.operation": "delete"})
    out["instants"] = [first, second]
    out["snapshot"] = _rows(pyhudi.read(spark, path))
    out["data source"] = _rows(spark.read.format("hudi").load(path))
    out["as of first"] = _rows(pyhudi.read(spark, path, {"as.of.instant": first}))
    out["incremental"] = _rows(pyhudi.read(spark, path, {"hoodie.datasource.query.type": "incremental",
                                                         "hoodie.datasource.read.begin.instanttime": first,
                                                         "hoodie.datasource.read.end.instanttime": second}))
    out["services"] = [len(pyhudi.compact(spark, path)) if table_type == "MERGE_ON_READ" else 0,
                       len(pyhudi.cluster(spark, path)),
                       pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "1"}) is not None]
    out["after services"] = _rows(pyhudi.read(spark, path))
    latest = pyhudi.write(df([(0, "z", 9, "p0")]), path, options).instant_time
    pyhudi.rollback_to_instant(spark, path, latest)
    out["after rollback"] = _rows(pyhudi.read(spark, path))
    spark.stop()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
