"""Replace operations (insert_overwrite, insert_overwrite_table, delete_partition): replacecommits that readers
(pyhudi and hudi-rs) honour at once, while time travel before them still sees the old rows."""

from __future__ import annotations

import json

import pytest

import pyhudi
from pyhudi.errors import NotAHudiTableError, PartitionPathError
from pyhudi.table import HudiTable
from support import assert_same_rows_as_hudi_rs, hudi_rs_read, rows


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, region string")


def _options(name, table_type="COPY_ON_WRITE", **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.table.type": table_type, **extra}


def _ids(spark, path, **read_options):
    return sorted(r["id"] for r in pyhudi.read(spark, path, read_options or None).select("id").collect())


def _replace_meta(path, instant):
    return json.loads((path / ".hoodie" / f"{instant}.replacecommit").read_text())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_overwrite_replaces_only_batch_partitions(spark, tmp_path, table_type):
    path = tmp_path / "t"
    options = _options("ovw", table_type)
    first = pyhudi.write(_df(spark, [(i, f"n{i}", 1, "eu" if i % 2 else "us") for i in range(10)]), path, options).instant_time
    if table_type == "MERGE_ON_READ":   # a log file in 'us' as well
        pyhudi.write(_df(spark, [(0, "upd", 2, "us")]), path, options)
    old_eu_groups = {fg for (p, fg) in HudiTable.load(str(path)).view().file_groups if p == "eu"}

    overwrite = pyhudi.write(_df(spark, [(100, "a", 3, "eu"), (101, "b", 3, "eu")]), path,
                             {**options, "hoodie.datasource.write.operation": "insert_overwrite"}).instant_time
    hoodie = path / ".hoodie"
    assert (hoodie / f"{overwrite}.replacecommit.requested").read_bytes() == b""
    assert (hoodie / f"{overwrite}.replacecommit.inflight").exists()
    meta = _replace_meta(path, overwrite)
    assert meta["operationType"] == "INSERT_OVERWRITE"
    assert set(meta["partitionToReplaceFileIds"]) == {"eu"}
    assert set(meta["partitionToReplaceFileIds"]["eu"]) == old_eu_groups
    assert not set(s["fileId"] for s in meta["partitionToWriteStats"]["eu"]) & old_eu_groups

    assert _ids(spark, path) == [0, 2, 4, 6, 8, 100, 101]
    assert_same_rows_as_hudi_rs(spark, path, min_columns=6)
    # time travel before the overwrite still sees the replaced rows
    assert _ids(spark, path, **{"as.of.instant": first}) == list(range(10))
    view = HudiTable.load(str(path)).view()
    assert not {fg for (p, fg) in view.file_groups if p == "eu"} & old_eu_groups
    # replaced files stay on disk for the cleaner
    assert any(fg in f.name for f in (path / "eu").iterdir() for fg in old_eu_groups)


def test_insert_overwrite_table_and_delete_partition(spark, tmp_path):
    path = tmp_path / "t"
    options = _options("ovt")
    pyhudi.write(_df(spark, [(i, f"n{i}", 1, ["eu", "us", "asia"][i % 3]) for i in range(9)]), path, options)
    table_ovw = pyhudi.write(_df(spark, [(50, "x", 2, "eu"), (51, "y", 2, "us")]), path,
                             {**options, "hoodie.datasource.write.operation": "insert_overwrite_table"}).instant_time
    meta = _replace_meta(path, table_ovw)
    assert meta["operationType"] == "INSERT_OVERWRITE_TABLE"
    assert set(meta["partitionToReplaceFileIds"]) == {"eu", "us", "asia"}
    assert _ids(spark, path) == [50, 51]
    assert rows(hudi_rs_read(path), ["id"]) == [(50,), (51,)]

    dropped = pyhudi.delete_partitions(spark, path, ["us"]).instant_time
    meta = _replace_meta(path, dropped)
    assert meta["operationType"] == "DELETE_PARTITION" and meta["partitionToWriteStats"] == {}
    assert list(meta["partitionToReplaceFileIds"]) == ["us"] and len(meta["partitionToReplaceFileIds"]["us"]) == 1
    assert _ids(spark, path) == [50]
    assert_same_rows_as_hudi_rs(spark, path, min_columns=6)
    assert _ids(spark, path, **{"as.of.instant": table_ovw}) == [50, 51]

    # the datasource form: operation delete_partition with partitions.to.delete and an empty batch
    again = pyhudi.write(_df(spark, [(60, "z", 3, "asia")]), path, options).instant_time
    pyhudi.write(spark.createDataFrame([], "id long"), path,
                 {**options, "hoodie.datasource.write.operation": "delete_partition",
                  "hoodie.datasource.write.partitions.to.delete": "asia"})
    assert _ids(spark, path) == [50] and _ids(spark, path, **{"as.of.instant": again}) == [50, 60]


def test_delete_partition_bad_input_leaves_table_untouched(spark, tmp_path):
    path = tmp_path / "t"
    options = _options("bad")
    pyhudi.write(_df(spark, [(1, "a", 1, "eu")]), path, options)
    before = sorted(p.name for p in (path / ".hoodie").iterdir())
    with pytest.raises(PartitionPathError, match="'nope'.*does not exist.*eu"):
        pyhudi.delete_partitions(spark, path, ["nope"])
    assert sorted(p.name for p in (path / ".hoodie").iterdir()) == before
    with pytest.raises(NotAHudiTableError):
        pyhudi.delete_partitions(spark, tmp_path / "missing", ["eu"])
    assert _ids(spark, path) == [1]
