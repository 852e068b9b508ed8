"""A pyhudi process for test_object_storage.py: the engine on a table at an object-store URI (an S3 server started
by the test) or at a local path, for comparison. It runs in a process of its own because the endpoint and
credentials come from the environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID...), which Spark's Python workers take
from the process that starts Spark. Prints one JSON object: the rows read at each step, and the instants.

    python object_store_client.py <table uri or path> <table type> <table version>
"""

from __future__ import annotations

import json
import sys


def _rows(df) -> list:
    return sorted([list(r) for r in df.select("id", "name", "ts", "part").collect()], key=repr)


def main() -> None:
    import pyhudi

    spark = pyhudi.session(master="local[2]", hive=False)
    out = scenario(spark, sys.argv[1], sys.argv[2], sys.argv[3])
    spark.stop()
    print(json.dumps(out), flush=True)


def scenario(spark, path: str, table_type: str, version: str) -> dict:
    """Writes, a delete, the query types, the table services and a rollback on the table at `path`."""
    from pyhudi.index import footers

    threshold, footers.SPARK_READ_THRESHOLD = footers.SPARK_READ_THRESHOLD, 0   # footers read in a Spark job
    try:
        return _steps(spark, path, table_type, version)
    finally:
        footers.SPARK_READ_THRESHOLD = threshold


def _steps(spark, path: str, table_type: str, version: str) -> dict:
    import pyhudi

    out: dict = {}

    def df(records):
        return spark.createDataFrame(records, "id long, name string, ts long, part string")

    options = {"hoodie.table.name": "objects", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
               "hoodie.datasource.write.table.type": table_type, "hoodie.parquet.small.file.limit": "0",
               "hoodie.write.table.version": version}
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
    return out


if __name__ == "__main__":
    main()
