"""Tables without a record key (Hudi 0.14+): insert-style writes get auto-generated keys
`<instant>_<sparkPartitionId>_<rowId>`; operations that must find records are refused."""

from __future__ import annotations

import os

import pytest

import pyhudi
from pyhudi.errors import ConfigError
from pyhudi.table import HudiTable
from support import assert_same_rows_as_hudi_rs

OPTIONS = {"hoodie.table.name": "events", "hoodie.datasource.write.partitionpath.field": "p"}


def _df(spark):
    return spark.createDataFrame([(1, "a", "x"), (2, "b", "y"), (3, "c", "x")], "id int, name string, p string")


def test_insert_and_bulk_insert_generate_unique_keys(spark, tmp_path):
    path = str(tmp_path / "events")
    first = pyhudi.write(_df(spark), path, {**OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"}).instant_time
    second = pyhudi.write(_df(spark), path, {**OPTIONS, "hoodie.datasource.write.operation": "insert"}).instant_time
    keys = [r[0] for r in pyhudi.read(spark, path).select("_hoodie_record_key").collect()]
    assert len(keys) == len(set(keys)) == 6
    assert sorted({k.split("_")[0] for k in keys}) == sorted([str(first), str(second)])
    assert "hoodie.table.recordkey.fields" not in HudiTable.load(path).properties.values
    assert_same_rows_as_hudi_rs(spark, path, min_columns=3)


def test_upsert_without_record_key_is_refused_and_table_untouched(spark, tmp_path):
    path = str(tmp_path / "events")
    pyhudi.write(_df(spark), path, {**OPTIONS, "hoodie.datasource.write.operation": "insert"})
    before = sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs)
    with pytest.raises(ConfigError, match="has no record key.*recordkey.field"):
        pyhudi.write(_df(spark), path, {"hoodie.datasource.write.operation": "upsert"})
    assert sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs) == before
