"""A read reuses the DataFrame an earlier read built for the same files (pyhudi/reader/dataframe_cache.py): only
while the plan is the same. Every change of what a read must return (a commit, a rollback, a compaction, a schema
change, another query type or instant) builds anew, and the rows always equal the per-slice Python merge."""

from __future__ import annotations

import pytest

import pyhudi
from pyhudi.reader import dataframe_cache, mor_scan
from pyhudi.table import HudiTable
from support import hudi_rs_read, rows

SCHEMA = "id long, region string, ts long, v string"
COLUMNS = ["id", "region", "ts", "v"]


def _options(table_type: str) -> dict:
    return {"hoodie.table.name": "reuse", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.clean.automatic": "false",
            "hoodie.compact.inline": "false"}


@pytest.fixture
def builds(monkeypatch):
    """How many DataFrames pyhudi.read built (a cached plan reused builds none)."""
    counts = {"merged": 0, "native": 0}
    real_merged = mor_scan.merged_snapshot
    import pyhudi.reader as reader
    real_native = reader.scan_dataframe

    def merged(*args, **kwargs):
        counts["merged"] += 1
        return real_merged(*args, **kwargs)

    def native(*args, **kwargs):
        counts["native"] += 1
        return real_native(*args, **kwargs)
    monkeypatch.setattr(mor_scan, "merged_snapshot", merged)
    monkeypatch.setattr(reader, "scan_dataframe", native)
    dataframe_cache.clear()
    yield counts
    dataframe_cache.clear()


def _python_merge(spark, path, options=None) -> list[tuple]:
    return rows(spark.read.format("hudi").options(**(options or {})).load(str(path)), COLUMNS)


def _read(spark, path, options=None) -> list[tuple]:
    return rows(pyhudi.read(spark, str(path), options), COLUMNS)


def test_merge_on_read_reuses_its_plan_until_the_table_changes(spark, tmp_path, builds):
    path = tmp_path / "t"
    opts = _options("MERGE_ON_READ")
    pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b"), (3, "us", 1, "c")], SCHEMA),
                 str(path), opts)
    pyhudi.write(spark.createDataFrame([(1, "us", 2, "a2")], SCHEMA), str(path), opts)   # a log file
    first = pyhudi.read(spark, str(path))
    second = pyhudi.read(spark, str(path))
    assert builds["merged"] == 1
    assert first is not second                     # each read gets its own DataFrame over the cached plan
    expected = [(1, "us", 2, "a2"), (2, "eu", 1, "b"), (3, "us", 1, "c")]
    assert rows(first, COLUMNS) == rows(second, COLUMNS) == expected == _python_merge(spark, path)
    assert rows(second.filter("region = 'us'"), COLUMNS) == [(1, "us", 2, "a2"), (3, "us", 1, "c")]

    # a commit appends to the same log file: its size and the visible instants change, so the plan is built anew
    pyhudi.write(spark.createDataFrame([(1, "us", 3, "a3"), (4, "eu", 3, "d")], SCHEMA), str(path), opts)
    expected = [(1, "us", 3, "a3"), (2, "eu", 1, "b"), (3, "us", 1, "c"), (4, "eu", 3, "d")]
    assert _read(spark, path) == expected == _python_merge(spark, path)
    assert builds["merged"] == 2
    assert rows(first, COLUMNS) == [(1, "us", 2, "a2"), (2, "eu", 1, "b"), (3, "us", 1, "c")]   # its snapshot

    # time travel to the first commit: another plan (base files only), the first snapshot's rows
    instants = [i.time for i in HudiTable.load(str(path)).timeline().completed_writes()]
    assert _read(spark, path, {"as.of.instant": instants[0]}) == [(1, "us", 1, "a"), (2, "eu", 1, "b"),
                                                                  (3, "us", 1, "c")]
    # read-optimized: the base files alone, not the merged plan (the insert of 4 rewrote eu's small base file)
    optimized = {"hoodie.datasource.query.type": "read_optimized"}
    assert _read(spark, path, optimized) == _python_merge(spark, path, optimized) == \
        [(1, "us", 1, "a"), (2, "eu", 1, "b"), (3, "us", 1, "c"), (4, "eu", 3, "d")]

    # a rollback of the last commit: the plan of the state before it
    assert pyhudi.rollback_to_instant(spark, str(path), instants[-1])
    expected = [(1, "us", 2, "a2"), (2, "eu", 1, "b"), (3, "us", 1, "c")]
    assert _read(spark, path) == expected == _python_merge(spark, path)

    # a compaction turns the slices with logs into base files: a plain scan of the new files
    pyhudi.compact(spark, str(path))
    assert _read(spark, path) == expected == rows(hudi_rs_read(path), COLUMNS)
    assert builds["native"] >= 1


def test_copy_on_write_reuses_its_plan_and_sees_a_new_column(spark, tmp_path, builds):
    path = tmp_path / "t"
    opts = _options("COPY_ON_WRITE")
    pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], SCHEMA), str(path), opts)
    assert _read(spark, path) == _read(spark, path) == [(1, "us", 1, "a"), (2, "eu", 1, "b")]
    built = builds["native"]
    assert built == 1
    # the schema evolves (a column is added): the cached plan has the old columns, so a new one is built
    pyhudi.write(spark.createDataFrame([(3, "us", 2, "c", 7)], SCHEMA + ", extra int"), str(path), opts)
    read = pyhudi.read(spark, str(path))
    assert "extra" in read.columns and builds["native"] == built + 1
    assert rows(read, COLUMNS + ["extra"]) == [(1, "us", 1, "a", None), (2, "eu", 1, "b", None),
                                                (3, "us", 2, "c", 7)]
    # the same files in another table folder are another table
    other = tmp_path / "other"
    pyhudi.write(spark.createDataFrame([(9, "us", 1, "z")], SCHEMA), str(other), opts)
    assert _read(spark, other) == [(9, "us", 1, "z")]
