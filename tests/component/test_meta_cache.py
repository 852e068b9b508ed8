"""The warm table-metadata cache of a process (pyhudi/table/listing.py, timeline.METADATA_CACHE): refreshed from the
timeline at every plan, it sees what other processes did (writes, rollbacks, cleans), never serves files a clean
deleted, lists again only the partitions new instants touched, and still finds files damaged after it was warmed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pyhudi
from pyhudi import errors
from pyhudi.table import HudiTable
from pyhudi.table.listing import table_listing
from pyhudi.timeline import METADATA_CACHE
from support import hudi_rs_read, rows

WORKER = Path(__file__).with_name("meta_cache_worker.py")
SCHEMA = "id long, region string, ts long, v string"


def _options(table_type: str) -> dict:
    return {"hoodie.table.name": "cache", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.clean.automatic": "false"}


def _other_process(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, str(WORKER), *args], env=env, capture_output=True, text=True,
                          timeout=1200)   # a loaded machine starts Spark slowly
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def _snapshot(spark, path) -> list[tuple]:
    return rows(pyhudi.read(spark, str(path)), ["id", "region", "ts", "v"])


def _all_view_files_exist(path: Path) -> None:
    table = HudiTable.load(str(path))
    view = table.view()
    for group in view.file_groups.values():
        for slice_ in group.slices:
            for file in ([slice_.base_file] if slice_.base_file else []) + slice_.log_files:
                assert (path / file.path).exists(), f"the view serves {file.path}, which is gone"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_other_process_commits_and_rollback_are_seen(spark, tmp_path, table_type):
    path = tmp_path / "t"
    opts = _options(table_type)
    pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], SCHEMA), str(path), opts)
    assert _snapshot(spark, path) == [(1, "us", 1, "a"), (2, "eu", 1, "b")]      # the cache is warm now

    # another process updates a row and inserts one in the same partition
    theirs = _other_process("write", str(path), table_type, json.dumps([[1, "us", 2, "them"], [3, "us", 2, "c"]]))
    expected = [(1, "us", 2, "them"), (2, "eu", 1, "b"), (3, "us", 2, "c")]
    assert _snapshot(spark, path) == expected

    # our next write plans against their commit: it updates their new row and keeps their update
    ours = pyhudi.write(spark.createDataFrame([(3, "us", 3, "ours"), (4, "eu", 3, "d")], SCHEMA), str(path), opts)
    expected = [(1, "us", 2, "them"), (2, "eu", 1, "b"), (3, "us", 3, "ours"), (4, "eu", 3, "d")]
    assert _snapshot(spark, path) == expected
    assert rows(hudi_rs_read(path), ["id", "region", "ts", "v"]) == expected
    assert theirs < ours.instant_time

    # another process rolls back our commit: this process reads the state before it, and writes on top of it
    assert _other_process("rollback", str(path), ours.instant_time) == "True"
    expected = [(1, "us", 2, "them"), (2, "eu", 1, "b"), (3, "us", 2, "c")]
    assert _snapshot(spark, path) == expected
    _all_view_files_exist(path)
    pyhudi.write(spark.createDataFrame([(2, "eu", 5, "b5")], SCHEMA), str(path), opts)
    expected = [(1, "us", 2, "them"), (2, "eu", 5, "b5"), (3, "us", 2, "c")]
    assert _snapshot(spark, path) == expected
    assert rows(hudi_rs_read(path), ["id", "region", "ts", "v"]) == expected


def test_cache_never_serves_files_a_clean_deleted(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("COPY_ON_WRITE")
    pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], SCHEMA), str(path), opts)
    first_files = {p.relative_to(path).as_posix() for p in path.rglob("*.parquet")}
    pyhudi.write(spark.createDataFrame([(1, "us", 2, "a2"), (2, "eu", 2, "b2")], SCHEMA), str(path), opts)
    view = HudiTable.load(str(path)).view()
    assert all(view.is_listed(f) for f in first_files)                          # warm, old versions listed

    # a clean in this process, then one in another process after a further update
    pyhudi.clean(spark, str(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                    "hoodie.cleaner.fileversions.retained": "1"})
    assert not any((path / f).exists() for f in first_files)
    view = HudiTable.load(str(path)).view()
    assert not any(view.is_listed(f) for f in first_files)
    _all_view_files_exist(path)
    second_files = {p.relative_to(path).as_posix() for p in path.rglob("*.parquet")}
    pyhudi.write(spark.createDataFrame([(1, "us", 3, "a3"), (2, "eu", 3, "b3")], SCHEMA), str(path), opts)
    assert HudiTable.load(str(path)).view().is_listed(sorted(second_files)[0])
    _other_process("clean", str(path))
    view = HudiTable.load(str(path)).view()
    assert not any(view.is_listed(f) for f in second_files)
    _all_view_files_exist(path)
    # an incremental query over the cleaned commits notices their files are gone (it asks the same view)
    begin = HudiTable.load(str(path)).timeline().completed_writes()[0].time
    with pytest.raises(errors.PyHudiError, match="cleaned|gone"):
        pyhudi.read(spark, str(path), {"hoodie.datasource.query.type": "incremental",
                                       "hoodie.datasource.read.begin.instanttime": begin}).collect()
    assert _snapshot(spark, path) == [(1, "us", 3, "a3"), (2, "eu", 3, "b3")]


def test_later_plans_list_only_touched_partitions(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("MERGE_ON_READ")
    regions = ["r0", "r1", "r2", "r3", "r4", "r5"]
    pyhudi.write(spark.createDataFrame([(i, r, 1, "x") for i, r in enumerate(regions)], SCHEMA), str(path), opts)
    table = HudiTable.load(str(path))
    listing = table_listing(table.storage)
    table.view().file_groups                                                    # warm
    full, partial = listing.full_listings, listing.partition_listings
    reads = METADATA_CACHE.reads
    pyhudi.write(spark.createDataFrame([(0, "r0", 2, "y")], SCHEMA), str(path), opts)
    view = HudiTable.load(str(path)).view()
    assert len(view.latest_slices(["r0"])[0].log_files) == 1                      # the new log file is seen
    assert listing.full_listings == full                                         # no full listing again
    assert listing.partition_listings - partial <= 2                            # r0 only (at most once per view)
    assert METADATA_CACHE.reads - reads <= 2                                    # the new commit's JSON only
    assert _snapshot(spark, path) == sorted([(0, "r0", 2, "y")] + [(i, r, 1, "x") for i, r in enumerate(regions)
                                                                   if i], key=repr)


def test_file_truncated_after_the_cache_was_warmed(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("COPY_ON_WRITE")
    pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], SCHEMA), str(path), opts)
    assert len(_snapshot(spark, path)) == 2                                      # warm
    base = next((path / "us").glob("*.parquet"))
    base.write_bytes(base.read_bytes()[:-100])
    with pytest.raises(errors.CorruptFileError, match=base.name):
        pyhudi.read(spark, str(path)).collect()
