"""Partition values with Hadoop glob characters are read literally by Spark's native scan (pyhudi.read), with
the rows hudi-rs returns: `a[1]` must not match `a1`, `c*` not every partition, `e\\f` must be found."""

from __future__ import annotations

import pyhudi

from support import hudi_rs_read, rows

VALUES = ["a[1]", "a1", "b{2,x}", "c*", "d?", "e\\f", "plain"]


def test_glob_characters_in_partition_values(spark, tmp_path):
    path = tmp_path / "glob"
    df = spark.createDataFrame([(i, v) for i, v in enumerate(VALUES)], "id long, region string")
    pyhudi.write(df, path, {"hoodie.table.name": "glob", "hoodie.datasource.write.recordkey.field": "id",
                            "hoodie.datasource.write.partitionpath.field": "region"})
    ours = pyhudi.read(spark, path)
    assert sorted((r.id, r.region) for r in ours.collect()) == list(enumerate(VALUES))
    assert rows(ours, ["id", "region", "_hoodie_partition_path"]) == \
        rows(hudi_rs_read(path), ["id", "region", "_hoodie_partition_path"])
