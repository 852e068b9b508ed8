"""A write checks, before its instant begins, that the base files it may read are as long as their commits wrote
them: a truncated base file stops it with CorruptFileError naming the file and the fix, the table untouched
(instead of Spark's FAILED_READ_FILE deep inside a job, after the instant began)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import pyhudi
from pyhudi import errors

SCHEMA = "id long, region string, ts long, v string"


def _options(table_type: str) -> dict:
    return {"hoodie.table.name": "checks", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type}


def _snapshot(path: Path) -> dict:
    return {str(p.relative_to(path)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_truncated_base_file_stops_the_write_before_it_begins(spark, tmp_path, table_type):
    path = tmp_path / "t"
    opts = _options(table_type)
    pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], SCHEMA), str(path), opts)
    pyhudi.write(spark.createDataFrame([(1, "us", 2, "a2")], SCHEMA), str(path), opts)
    base = max((path / "us").glob("*.parquet"), key=lambda p: p.name.rsplit("_", 1)[-1])
    base.write_bytes(base.read_bytes()[:-100])
    before = _snapshot(path)
    with pytest.raises(errors.CorruptFileError, match=rf"{base.name}.*truncated.*Restore the file"):
        pyhudi.write(spark.createDataFrame([(1, "us", 3, "a3"), (3, "us", 3, "c")], SCHEMA), str(path), opts)
    assert _snapshot(path) == before


def test_lowercase_table_type_makes_a_merge_on_read_table(spark, tmp_path):
    """hoodie.datasource.write.table.type=merge_on_read (lower case, as users type it) is stored as Hudi's enum
    name: before, hoodie.properties kept the lower-case text and pyhudi then wrote the table copy-on-write."""
    path = tmp_path / "t"
    opts = _options("merge_on_read")
    pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], SCHEMA), str(path), opts)
    pyhudi.write(spark.createDataFrame([(1, "us", 2, "a2")], SCHEMA), str(path), opts)
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.type=MERGE_ON_READ" in props
    assert list((path / "us").glob(".*.log.*")), "the update should go to a log file"
    rows = sorted((r.id, r.v) for r in pyhudi.read(spark, str(path)).collect())
    assert rows == [(1, "a2"), (2, "b")]
