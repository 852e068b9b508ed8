"""Bad input raises a PyHudiError naming the field or file and the fix, and leaves the table untouched."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import pyhudi
from pyhudi import errors


def _snapshot(path: Path) -> dict:
    """Every file under the table with its content hash."""
    return {str(p.relative_to(path)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


OPTIONS = {"hoodie.table.name": "bad", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts"}


@pytest.fixture()
def table(spark, tmp_path):
    path = tmp_path / "bad"
    df = spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], "id long, region string, ts long, v string")
    pyhudi.write(df, path, OPTIONS)
    return path


def test_null_record_key(spark, table):
    before = _snapshot(table)
    df = spark.createDataFrame([(None, "us", 2, "x"), (3, "us", 2, "y")], "id long, region string, ts long, v string")
    with pytest.raises(errors.RecordKeyError, match="id"):
        pyhudi.write(df, table, OPTIONS)
    assert _snapshot(table) == before


@pytest.mark.parametrize("missing,error", [("id", errors.RecordKeyError), ("region", errors.PartitionPathError),
                                           ("ts", errors.SchemaError)])
def test_missing_key_partition_or_precombine_field(spark, table, missing, error):
    before = _snapshot(table)
    df = spark.createDataFrame([(3, "us", 2, "y")], "id long, region string, ts long, v string").drop(missing)
    with pytest.raises(error, match=missing):
        pyhudi.write(df, table, OPTIONS)
    assert _snapshot(table) == before


def test_column_type_clash(spark, table):
    before = _snapshot(table)
    df = spark.createDataFrame([(3, "us", 2, [1, 2])], "id long, region string, ts long, v array<int>")
    with pytest.raises(errors.SchemaError, match="v"):
        pyhudi.write(df, table, OPTIONS)
    assert _snapshot(table) == before


def test_not_a_hudi_table(spark, tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(errors.NotAHudiTableError, match="hoodie.properties"):
        pyhudi.read(spark, tmp_path / "plain")
    # Spark wraps data-source errors in its own exception; the message is still ours.
    with pytest.raises(Exception, match="is not a Hudi table: .hoodie/hoodie.properties is missing"):
        spark.read.format("hudi").load(str(tmp_path / "plain")).collect()


@pytest.mark.parametrize("version, message", [("7", "version=7"), ("10", "version=10"),
                                              ("8", "layout.version=1")])   # a v8 table has timeline layout 2
def test_unsupported_table_version(spark, table, version, message):
    props = table / ".hoodie" / "hoodie.properties"
    original = props.read_text()
    props.write_text(original.replace("hoodie.table.version=6", f"hoodie.table.version={version}"))
    try:
        before = _snapshot(table)
        with pytest.raises(errors.UnsupportedTableVersionError, match=message):
            pyhudi.read(spark, table)
        df = spark.createDataFrame([(3, "us", 2, "y")], "id long, region string, ts long, v string")
        with pytest.raises(errors.UnsupportedTableVersionError):
            pyhudi.write(df, table, OPTIONS)
        assert _snapshot(table) == before
    finally:
        props.write_text(original)


def test_conflicting_identity_and_bad_option_values(spark, table):
    before = _snapshot(table)
    df = spark.createDataFrame([(3, "us", 2, "y")], "id long, region string, ts long, v string")
    with pytest.raises(errors.ConfigError, match="recordkey"):
        pyhudi.write(df, table, {**OPTIONS, "hoodie.datasource.write.recordkey.field": "v"})
    with pytest.raises(errors.ConfigError, match="hoodie.parquet.max.file.size"):
        pyhudi.write(df, table, {**OPTIONS, "hoodie.parquet.max.file.size": "big"})
    with pytest.raises(errors.ConfigError, match="operation"):
        pyhudi.write(df, table, {**OPTIONS, "hoodie.datasource.write.operation": "upsertt"})
    with pytest.warns(UserWarning, match="hoodie.datasource.write.recordky.field"):
        pyhudi.write(df, table, {**OPTIONS, "hoodie.datasource.write.recordky.field": "id"})
    assert set(before) <= set(_snapshot(table))
