"""The upsert's per-row delete flag (pyhudi.client.DELETE_FLAG_COLUMN): updates, deletes and inserts of one batch
in one commit, as Hudi's MERGE INTO. The flag is not a table column: not in the schema, not in any file."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

import pyhudi
from pyhudi.client import DELETE_FLAG_COLUMN
from pyhudi.errors import SchemaError
from pyhudi.table import HudiTable
from support import hudi_rs_read, rows

SCHEMA = "id long, name string, ts long, region string"


def _options(name, table_type, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.table.type": table_type, **extra}


def _completed(path) -> list[str]:
    return [i.time for i in HudiTable.load(str(path)).timeline().completed_writes()]


def _files(path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_upsert_with_delete_flags_is_one_commit(spark, tmp_path, table_type):
    path = tmp_path / "t"
    opts = _options("flags", table_type)
    pyhudi.write(spark.createDataFrame([(1, "a", 1, "x"), (2, "b", 1, "x"), (3, "c", 1, "y"), (4, "d", 1, "y")],
                                       SCHEMA), str(path), opts)
    before = _completed(path)
    batch = spark.createDataFrame(
        [(1, "a2", 2, "x", False), (2, "b", 2, "x", True), (3, "c", 2, "y", None), (5, "e", 2, "y", False),
         (6, "f", 2, "x", True)],   # 6: a delete of a key the table does not hold changes nothing
        SCHEMA + f", {DELETE_FLAG_COLUMN} boolean")
    pyhudi.write(batch, str(path), opts)
    assert len(_completed(path)) == len(before) + 1
    expected = [(1, "a2"), (3, "c"), (4, "d"), (5, "e")]
    assert sorted(rows(pyhudi.read(spark, str(path)), ["id", "name"])) == expected
    assert sorted(rows(hudi_rs_read(path), ["id", "name"])) == expected
    table = HudiTable.load(str(path))
    assert DELETE_FLAG_COLUMN not in [f["name"] for f in table.latest_avro_schema()["fields"]]
    for parquet in path.rglob("*.parquet"):
        assert DELETE_FLAG_COLUMN not in pq.read_schema(parquet).names


def test_delete_flag_joins_hoodie_is_deleted(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("flags_and_deleted", "COPY_ON_WRITE")
    schema = SCHEMA + ", _hoodie_is_deleted boolean"
    pyhudi.write(spark.createDataFrame([(1, "a", 1, "x", False), (2, "b", 1, "x", False), (3, "c", 1, "x", False)],
                                       schema), str(path), opts)
    pyhudi.write(spark.createDataFrame([(1, "a", 2, "x", True, False), (2, "b", 2, "x", False, True),
                                        (3, "c2", 2, "x", False, None)],
                                       schema + f", {DELETE_FLAG_COLUMN} boolean"), str(path), opts)
    assert sorted(rows(pyhudi.read(spark, str(path)), ["id", "name"])) == [(3, "c2")]
    assert sorted(rows(hudi_rs_read(path), ["id", "name"])) == [(3, "c2")]


@pytest.mark.parametrize("operation, flag_type, message", [
    ("insert", "boolean", "operation is insert"),
    ("upsert", "string", "must be boolean"),
])
def test_bad_delete_flag_is_refused_and_the_table_unchanged(spark, tmp_path, operation, flag_type, message):
    path = tmp_path / "t"
    opts = _options("bad_flags", "COPY_ON_WRITE")
    pyhudi.write(spark.createDataFrame([(1, "a", 1, "x")], SCHEMA), str(path), opts)
    before = _files(path)
    value = True if flag_type == "boolean" else "yes"
    batch = spark.createDataFrame([(1, "a", 2, "x", value)], SCHEMA + f", {DELETE_FLAG_COLUMN} {flag_type}")
    with pytest.raises(SchemaError, match=message):
        pyhudi.write(batch, str(path), {**opts, "hoodie.datasource.write.operation": operation})
    assert _files(path) == before
