"""Hudi's SQL insert path combines a statement's rows by key before an insert-style write when the table has a
primary key and a preCombineField (hoodie.combine.before.insert defaults to that), as INSERT INTO's upsert does."""

from __future__ import annotations

import pyhudi


def _rows(spark, table):
    return sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT k, ts, v FROM {table}").collect())


def test_insert_overwrite_keeps_the_latest_row_per_key(spark):
    pyhudi.sql(spark, "CREATE TABLE combine_ow (k STRING, ts INT, v INT) USING hudi "
                      "TBLPROPERTIES (primaryKey = 'k', preCombineField = 'ts')")
    pyhudi.sql(spark, "INSERT OVERWRITE TABLE combine_ow SELECT * FROM VALUES ('a', 1, 1), ('a', 2, 2), ('b', 5, 5)")
    assert _rows(spark, "combine_ow") == [("a", 2, 2), ("b", 5, 5)]


def test_the_session_can_turn_combining_off(spark):
    pyhudi.sql(spark, "CREATE TABLE combine_off (k STRING, ts INT, v INT) USING hudi "
                      "TBLPROPERTIES (primaryKey = 'k', preCombineField = 'ts')")
    pyhudi.sql(spark, "/* pyhudi.options {\"hoodie.combine.before.insert\": \"false\"} */ "
                      "INSERT OVERWRITE TABLE combine_off SELECT * FROM VALUES ('a', 1, 1), ('a', 2, 2)")
    assert _rows(spark, "combine_off") == [("a", 1, 1), ("a", 2, 2)]
