"""The engine scenario the out-of-process tests run on both sides of a comparison (over Spark Connect and on a
classic session, on an object store and on a local disk): writes, a delete, the query types, the table services and
a rollback; one JSON-ready dict of what each step read."""

from __future__ import annotations


def _rows(df) -> list:
    return sorted([list(r) for r in df.select("id", "name", "ts", "part").collect()], key=repr)


def scenario(spark, path: str, table_type: str, version: str | None = None) -> dict:
    """Writes, a delete, the query types, the table services and a rollback on the table at `path`."""
    from pyhudi.index import footers

    threshold, footers.SPARK_READ_THRESHOLD = footers.SPARK_READ_THRESHOLD, 0   # footers read in a Spark job
    try:
        return _steps(spark, path, table_type, version)
    finally:
        footers.SPARK_READ_THRESHOLD = threshold


def _steps(spark, path: str, table_type: str, version: str | None) -> dict:
    import pyhudi

    out: dict = {}

    def df(records):
        return spark.createDataFrame(records, "id long, name string, ts long, part string")

    options = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
               "hoodie.datasource.write.table.type": table_type, "hoodie.parquet.small.file.limit": "0",
               "hoodie.index.type": "BLOOM",
               **({"hoodie.write.table.version": version} if version else {})}
    first = pyhudi.write(df([(k, f"a{k}", 1, f"p{k % 2}") for k in range(6)]), path, options).instant_time
    second_write = pyhudi.write(df([(1, "b1", 2, "p1"), (2, "b2", 2, "p0"), (9, "b9", 2, "p1")]), path, options)
    second = second_write.instant_time
    # the bloom lookup's counters (accumulators on classic; on Connect, kept in the table's storage)
    out["index stats"] = {k: v for k, v in second_write.index_stats.items() if k != "footers_read"}
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

