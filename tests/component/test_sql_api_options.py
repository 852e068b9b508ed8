"""pyhudi.sql(spark, text, options): the call's options reach every Hudi write of the call."""

from __future__ import annotations

import uuid

import pyhudi


def test_sql_options_apply_to_the_calls_writes(spark, tmp_path):
    name = f"sql_opts_{uuid.uuid4().hex[:8]}"
    try:
        pyhudi.sql(spark, f"CREATE TABLE {name} (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) "
                          f"LOCATION '{tmp_path / 't'}' TBLPROPERTIES (primaryKey = 'id')")
        pyhudi.sql(spark, f"INSERT INTO {name} VALUES (1, 'a', 'a'), (2, 'b', 'b')")
        # Spark's static default replaces the whole table; the call's option keeps partition b
        pyhudi.sql(spark, f"INSERT OVERWRITE TABLE {name} SELECT 3, 'c', 'a'",
                   options={"hoodie.datasource.overwrite.mode": "dynamic"})
        got = sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, v, dt FROM {name}").collect())
        assert got == [(2, "b", "b"), (3, "c", "a")]
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")
