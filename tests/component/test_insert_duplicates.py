"""What an insert does with a key the table already stores, as Hudi 0.14/0.15 decides it:

- hoodie.merge.allow.duplicate.on.inserts (Hudi's default true): an insert routed into a small file keeps the
  stored record (HoodieConcatHandle); false merges it as an update would;
- hoodie.datasource.write.insert.drop.duplicates: incoming records of stored keys are dropped (an upsert becomes
  an insert);
- ValidateDuplicateKeyPayload (SQL strict mode, hoodie.datasource.insert.dup.policy=fail): the write fails with
  Hudi's message and the table is untouched;
- the SQL layer's policies: dup.policy none / drop / fail, the legacy hoodie.sql.insert.mode.
hudi-rs reads every table to the same rows."""

from __future__ import annotations

import os

import pytest

import pyhudi
from support import assert_same_rows_as_hudi_rs

OPTIONS = {"hoodie.table.name": "dups", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.datasource.write.operation": "insert"}


def _df(spark, rows):
    return spark.createDataFrame(rows, "id int, name string, ts long, p string")


def _rows(spark, path):
    return sorted((r.id, r.name) for r in pyhudi.read(spark, path).select("id", "name").collect())


def _files(path):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_insert_keeps_a_stored_key_by_default_and_merges_it_when_duplicates_are_not_allowed(spark, tmp_path,
                                                                                             table_type):
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    pyhudi.write(_df(spark, [(1, "a1", 1, "x"), (2, "b1", 1, "x")]), path, options)
    pyhudi.write(_df(spark, [(1, "a2", 2, "x")]), path, options)          # Hudi's default: both stay
    assert _rows(spark, path) == [(1, "a1"), (1, "a2"), (2, "b1")]
    pyhudi.write(_df(spark, [(2, "b2", 2, "x")]), path,
                 {**options, "hoodie.merge.allow.duplicate.on.inserts": "false"})   # merged into the small file
    assert _rows(spark, path) == [(1, "a1"), (1, "a2"), (2, "b2")]
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_drop_duplicates_drops_stored_keys_and_turns_an_upsert_into_an_insert(spark, tmp_path):
    path = str(tmp_path / "t")
    pyhudi.write(_df(spark, [(1, "a1", 1, "x"), (2, "b1", 1, "y")]), path, OPTIONS)
    options = {**OPTIONS, "hoodie.datasource.write.operation": "upsert",
               "hoodie.datasource.write.insert.drop.duplicates": "true"}
    result = pyhudi.write(_df(spark, [(1, "a2", 9, "x"), (2, "b2", 9, "x"), (3, "c1", 1, "y")]), path, options)
    assert result.operation == "insert"
    # key 2 arrives in another partition: a partition-scoped index does not know it there, so it is inserted
    assert _rows(spark, path) == [(1, "a1"), (2, "b1"), (2, "b2"), (3, "c1")]
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_validate_duplicate_key_payload_fails_the_write_and_leaves_the_table(spark, tmp_path):
    path = str(tmp_path / "t")
    pyhudi.write(_df(spark, [(1, "a1", 1, "x")]), path, OPTIONS)
    before = _files(path)
    options = {**OPTIONS, "hoodie.datasource.write.operation": "upsert",
               "hoodie.datasource.write.payload.class": "org.apache.spark.sql.hudi.command.ValidateDuplicateKeyPayload"}
    with pytest.raises(Exception, match="Duplicate key found for insert statement, key is: 1"):
        pyhudi.write(_df(spark, [(1, "a2", 2, "x")]), path, options)
    pyhudi.write(_df(spark, [(2, "b1", 1, "x")]), path, options)   # a new key passes (the failed write rolled back)
    assert _rows(spark, path) == [(1, "a1"), (2, "b1")]
    assert [f for f in before if f not in _files(path)] == []


def test_sql_duplicate_policies(spark, tmp_path):
    t = "dup_policies"
    pyhudi.sql(spark, f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"CREATE TABLE {t} (id INT, name STRING, ts BIGINT) USING hudi "
                      f"LOCATION '{tmp_path / t}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    pyhudi.sql(spark, f"INSERT INTO {t} VALUES (1, 'a1', 1)")
    try:
        pyhudi.sql(spark, f"INSERT INTO {t} VALUES (1, 'a0', 0)")    # upsert (ordering field): the stored row stays
        pyhudi.sql(spark, "SET hoodie.spark.sql.insert.into.operation = insert")
        pyhudi.sql(spark, "SET hoodie.datasource.insert.dup.policy = drop")
        pyhudi.sql(spark, f"INSERT INTO {t} VALUES (1, 'a2', 2), (2, 'b1', 1)")
        assert sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, name FROM {t}").collect()) == \
            [(1, "a1"), (2, "b1")]
        pyhudi.sql(spark, "SET hoodie.datasource.insert.dup.policy = fail")
        with pytest.raises(Exception, match="Duplicate key found for insert statement, key is: 2"):
            pyhudi.sql(spark, f"INSERT INTO {t} VALUES (2, 'b2', 2)")
        pyhudi.sql(spark, "SET hoodie.datasource.insert.dup.policy = none")
        pyhudi.sql(spark, f"INSERT INTO {t} VALUES (2, 'b3', 3)")          # inserted next to the stored one
        assert sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, name FROM {t}").collect()) == \
            [(1, "a1"), (2, "b1"), (2, "b3")]
        assert_same_rows_as_hudi_rs(spark, str(tmp_path / t), min_columns=3)
    finally:
        pyhudi.sql(spark, "RESET hoodie.spark.sql.insert.into.operation")
        pyhudi.sql(spark, "RESET hoodie.datasource.insert.dup.policy")
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {t}")


def test_sql_insert_maps_columns_by_name_when_they_all_match(spark, tmp_path):
    t = "insert_by_name"
    pyhudi.sql(spark, f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"CREATE TABLE {t} (id INT, name STRING, price DOUBLE, dt STRING) USING hudi "
                      f"PARTITIONED BY (dt) LOCATION '{tmp_path / t}' TBLPROPERTIES (primaryKey = 'id')")
    try:
        pyhudi.sql(spark, f"INSERT INTO {t} PARTITION (dt = 'd1') SELECT 20 AS price, 'a' AS name, 1 AS id")
        pyhudi.sql(spark, f"INSERT INTO {t} PARTITION (dt = 'd1') SELECT 2, 'b', 30")   # by position
        assert sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, name, price, dt FROM {t}").collect()) == \
            [(1, "a", 20.0, "d1"), (2, "b", 30.0, "d1")]
        with pytest.raises(Exception, match=r"\[INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS\]"):
            pyhudi.sql(spark, f"INSERT INTO {t} PARTITION (dt = 'd1') SELECT 3, 'c', 1.0, 'd1'")
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {t}")
