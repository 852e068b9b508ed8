"""bulk_insert under each of Hudi's `hoodie.bulkinsert.sort.mode` values: the rows are the batch's (plain Spark
and hudi-rs agree), and the files have the layout the mode promises (files per partition path, key order inside a
file, disjoint key ranges)."""

from __future__ import annotations

from collections import defaultdict

import pyarrow.parquet as pq
import pytest

import pyhudi
from pyhudi.errors import PyHudiError
from pyhudi.table import HudiTable
from support import hudi_rs_read, rows

REGIONS = ["eu", "us", "ap"]
INPUT_PARTITIONS = 4


def _batch(spark, n=240):
    # every input partition holds every region, keys shuffled so input order is not key order
    records = [((i * 37) % n, f"n{i}", float(i), 1, REGIONS[i % 3]) for i in range(n)]
    return spark.createDataFrame(records, "id long, name string, price double, ts long, region string") \
        .repartition(INPUT_PARTITIONS)


def _options(mode, **extra):
    return {"hoodie.table.name": "sorted", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.operation": "bulk_insert", "hoodie.bulkinsert.sort.mode": mode, **extra}


def _files(path):
    """partition path -> list of (record keys, strings, in file order) for every base file."""
    out = defaultdict(list)
    for base in HudiTable.load(str(path)).view().latest_base_files():
        keys = pq.read_table(f"{path}/{base.path}", columns=["_hoodie_record_key"])
        out[base.path.rsplit("/", 1)[0]].append(keys["_hoodie_record_key"].to_pylist())
    return out


@pytest.mark.parametrize("mode", ["NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
                                  "PARTITION_PATH_REPARTITION_AND_SORT"])
def test_each_sort_mode_writes_the_batch_with_its_layout(spark, tmp_path, mode):
    path = tmp_path / mode
    batch = _batch(spark)
    pyhudi.write(batch, str(path), _options(mode))
    cols = ["id", "name", "price", "region"]
    assert rows(pyhudi.read(spark, str(path)), cols, key="id") == rows(batch, cols, key="id")
    assert rows(hudi_rs_read(path), cols, key="id") == rows(batch, cols, key="id")

    files = _files(path)
    assert set(files) == set(REGIONS)
    for region, keys_per_file in files.items():
        in_order = all(keys == sorted(keys) for keys in keys_per_file)
        if mode == "NONE":
            # one file per write task that saw the path, keys in arrival order
            assert len(keys_per_file) == INPUT_PARTITIONS, (region, keys_per_file)
            assert not in_order
        elif mode == "PARTITION_SORT":
            assert len(keys_per_file) == INPUT_PARTITIONS and in_order
        elif mode == "GLOBAL_SORT":
            assert in_order
            ranges = sorted((k[0], k[-1]) for k in keys_per_file)
            assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:])), ranges
        else:   # hashed by partition path: one task, so one file, per path
            assert len(keys_per_file) == 1, (region, keys_per_file)


def test_parallelism_coalesces_the_unsorted_layout(spark, tmp_path):
    path = tmp_path / "coalesced"
    pyhudi.write(_batch(spark), str(path), _options("NONE", **{"hoodie.bulkinsert.shuffle.parallelism": "2"}))
    assert {region: len(f) for region, f in _files(path).items()} == {r: 2 for r in REGIONS}


def test_files_are_cut_at_the_max_file_size_in_every_mode(spark, tmp_path):
    """Unsorted input keeps a pending file per partition path; each is still cut at the max file size (by the
    records' encoded size: ~20 bytes each here, so 1 KB holds a few dozen of a path's 80 records)."""
    for mode in ("NONE", "PARTITION_PATH_REPARTITION"):
        path = tmp_path / f"cut_{mode}"
        pyhudi.write(_batch(spark), str(path), _options(mode, **{"hoodie.parquet.max.file.size": "1024"}))
        files = _files(path)
        assert all(len(f) >= 2 for f in files.values()), {p: [len(k) for k in f] for p, f in files.items()}
        assert all(len(keys) < 80 for f in files.values() for keys in f)
        assert sum(len(keys) for f in files.values() for keys in f) == 240


def test_unknown_sort_mode_is_refused_and_the_table_untouched(spark, tmp_path):
    path = tmp_path / "bad"
    pyhudi.write(_batch(spark), str(path), _options("GLOBAL_SORT"))
    before = sorted(p.name for p in (path / ".hoodie").iterdir())
    with pytest.raises(PyHudiError, match="hoodie.bulkinsert.sort.mode"):
        pyhudi.write(_batch(spark), str(path), _options("ZORDER_SORT"))
    assert sorted(p.name for p in (path / ".hoodie").iterdir()) == before
