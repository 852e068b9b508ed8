"""Hudi's Spark SQL quickstart through pyhudi.sql: COW and MOR tables, insert, update, merge, delete, time travel,
incremental reads and CALL procedures; checked against hudi-rs."""

from __future__ import annotations

import os

import pytest

import pyhudi
from pyhudi.errors import PyHudiError, SqlError
from support import hudi_rs_read, rows

TRIPS = """
INSERT INTO {t} VALUES
 (1695159649087, '334e26e9', 'rider-A', 'driver-K', 19.10, 'san_francisco'),
 (1695091554788, 'e96c4396', 'rider-C', 'driver-M', 27.70, 'san_francisco'),
 (1695046462179, '9909a8b1', 'rider-D', 'driver-L', 33.90, 'san_francisco'),
 (1695516137016, 'e3cf430c', 'rider-F', 'driver-P', 34.15, 'sao_paulo'),
 (1695115999911, 'c8abbe79', 'rider-J', 'driver-T', 17.85, 'chennai')
"""


def _create(table_type: str, name: str) -> str:
    return f"""CREATE TABLE {name} (ts BIGINT, uuid STRING, rider STRING, driver STRING, fare DOUBLE, city STRING)
    USING hudi PARTITIONED BY (city)
    TBLPROPERTIES (type = '{table_type}', primaryKey = 'uuid', preCombineField = 'ts')"""


def _same_as_hudi_rs(spark, t, path):
    columns = ["uuid", "fare", "city"]
    assert rows(pyhudi.sql(spark, f"SELECT * FROM {t}"), columns) == rows(hudi_rs_read(path), columns)


def _data(spark, query):
    return sorted(tuple(r) for r in pyhudi.sql(spark, query).collect())


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_quickstart_flow(spark, table_type):
    t = f"qs_trips_{table_type}"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, _create(table_type, t) + ";\n" + TRIPS.format(t=t))
    entry_path = spark.sql(f"DESCRIBE TABLE EXTENDED {t}")  # the catalog knows it (any statement works)
    assert entry_path is not None
    from pyhudi.sqlext.query import Resolver
    path = Resolver(spark).entry_by_name(t).location
    assert os.path.isdir(os.path.join(path, "city=san_francisco"))       # SQL tables: hive-style partitions
    first = pyhudi.sql(spark, f"SELECT min(_hoodie_commit_time) FROM {t}").collect()[0][0]

    pyhudi.sql(spark, f"UPDATE {t} SET fare = 25.0 WHERE rider = 'rider-D'")
    pyhudi.sql(spark, f"""
        MERGE INTO {t} AS target
        USING (SELECT 1695091554789 AS ts, 'e96c4396' AS uuid, 'rider-C' AS rider, 'driver-M' AS driver,
                      99.0 AS fare, 'san_francisco' AS city, 'u' AS op
               UNION ALL SELECT 1695091554789, 'c8abbe79', 'rider-J', 'driver-T', 0.0, 'chennai', 'd'
               UNION ALL SELECT 1695091554789, 'aaaa0001', 'rider-Z', 'driver-Z', 5.5, 'chennai', 'i') AS source
        ON target.uuid = source.uuid
        WHEN MATCHED AND source.op = 'd' THEN DELETE
        WHEN MATCHED THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *""")
    pyhudi.sql(spark, f"DELETE FROM {t} WHERE rider IN ('rider-A')")

    expected = [("aaaa0001", 5.5), ("9909a8b1", 25.0), ("e3cf430c", 34.15), ("e96c4396", 99.0)]
    assert _data(spark, f"SELECT uuid, fare FROM {t}") == sorted(expected)
    assert sorted(tuple(r) for r in spark.sql(f"SELECT uuid, fare FROM {t}").collect()) == sorted(expected)
    _same_as_hudi_rs(spark, t, path)      # MOR: merged from log files (data and delete blocks)

    # time travel to the first commit: the five inserted rows
    assert len(_data(spark, f"SELECT uuid FROM {t} TIMESTAMP AS OF '{first}'")) == 5
    # incremental: what changed after the first commit (latest state of each changed record)
    changed = _data(spark, f"SELECT uuid, fare FROM hudi_table_changes('{t}', 'latest_state', '{first}')")
    assert ("9909a8b1", 25.0) in changed and ("aaaa0001", 5.5) in changed
    assert ("e3cf430c", 34.15) not in changed

    commits = pyhudi.sql(spark, f"CALL show_commits(table => '{t}', limit => 10)")
    assert commits.columns[:3] == ["commit_time", "action", "total_bytes_written"]
    assert commits.count() == 4   # insert, update, one MERGE (updates, deletes and inserts), delete
    props = dict(tuple(r) for r in pyhudi.sql(spark, f"CALL show_table_properties(table => '{t}', limit => 100)")
                 .collect())
    assert props["hoodie.table.type"] == ("MERGE_ON_READ" if table_type == "mor" else "COPY_ON_WRITE")
    assert props["hoodie.datasource.write.hive_style_partitioning"] == "true"
    files = pyhudi.sql(spark, f"CALL show_fsview_latest(table => '{t}', partition_path => 'city=san_francisco')")
    assert files.count() >= 1
    if table_type == "mor":
        assert files.agg({"num_delta_files": "sum"}).collect()[0][0] >= 1
        done = pyhudi.sql(spark, f"CALL run_compaction(op => 'scheduleAndExecute', table => '{t}')")
        assert [tuple(r)[2] for r in done.collect()] == ["COMPLETED"]
        assert _data(spark, f"SELECT uuid, fare FROM {t}") == sorted(expected)
        assert pyhudi.sql(spark, f"CALL show_compaction(table => '{t}')").count() == 1
        _same_as_hudi_rs(spark, t, path)
    pyhudi.sql(spark, f"DROP TABLE {t}")
    assert not os.path.exists(path)          # managed table: DROP deletes the files


def test_ctas_alter_and_external_drop(spark, tmp_path):
    spark.sql("DROP TABLE IF EXISTS ctas_src")
    location = tmp_path / "ext"
    pyhudi.sql(spark, f"""CREATE OR REPLACE TABLE ctas_src USING hudi
        OPTIONS (primaryKey 'id', preCombineField 'ts') LOCATION '{location}'
        AS SELECT id, CAST(id * 10 AS BIGINT) AS ts, concat('n', id) AS name FROM range(3)""")
    assert _data(spark, "SELECT id, name FROM ctas_src") == [(0, "n0"), (1, "n1"), (2, "n2")]
    pyhudi.sql(spark, "ALTER TABLE ctas_src ADD COLUMNS (note STRING)")
    with pytest.raises(SqlError, match="not supported on Hudi tables"):
        pyhudi.sql(spark, "ALTER TABLE ctas_src DROP COLUMNS (name)")
    assert _data(spark, "SELECT id, note FROM ctas_src WHERE id = 0") == [(0, None)]
    pyhudi.sql(spark, "INSERT INTO ctas_src VALUES (3, 30, 'n3', 'new')")
    assert _data(spark, "SELECT id, note FROM ctas_src WHERE id >= 2") == [(2, None), (3, "new")]
    assert rows(hudi_rs_read(location), ["id", "note"]) == [(0, None), (1, None), (2, None), (3, "new")]
    pyhudi.sql(spark, "DROP TABLE ctas_src")
    assert (location / ".hoodie" / "hoodie.properties").exists()   # external: files stay
    # ... and the table can be registered again from its location
    pyhudi.sql(spark, f"CREATE TABLE ctas_again USING hudi LOCATION '{location}'")
    assert _data(spark, "SELECT count(*) FROM ctas_again") == [(4,)]
    pyhudi.sql(spark, "DROP TABLE ctas_again PURGE")
    assert not location.exists()


def test_non_hudi_statements_behave_as_spark(spark):
    text = "SELECT 'a;b' AS x, 1 AS y -- trailing; comment\n"
    assert pyhudi.sql(spark, text).collect() == spark.sql(text).collect()
    script = "CREATE OR REPLACE TEMPORARY VIEW qs_v AS SELECT 1 AS id; /* ; */ SELECT id + 1 AS id FROM qs_v;"
    assert pyhudi.sql(spark, script).collect()[0].id == 2
    with pytest.raises(Exception) as ours:
        pyhudi.sql(spark, "SELECT * FROM no_such_table_xyz")
    with pytest.raises(Exception) as theirs:
        spark.sql("SELECT * FROM no_such_table_xyz")
    assert type(ours.value) is type(theirs.value)


def test_bad_sql_and_bad_calls(spark):
    with pytest.raises(SqlError, match="line 2"):
        pyhudi.sql(spark, "SELECT 1;\nSELECT * FROM (SELECT 1 WHERE")
    with pytest.raises(SqlError, match="show_commits"):
        pyhudi.sql(spark, "CALL no_such_procedure(table => 't')")
    with pytest.raises(SqlError, match="valid arguments: table, limit"):
        pyhudi.sql(spark, "CALL show_commits(tabel => 't')")
    # a table without a primary key: inserts get generated keys; UPDATE changes each row by its own key (Hudi's
    # prepped write of a key-less table)
    spark.sql("DROP TABLE IF EXISTS qs_nokey")
    pyhudi.sql(spark, "CREATE TABLE qs_nokey (id INT, name STRING) USING hudi; "
                      "INSERT INTO qs_nokey VALUES (1, 'a'), (1, 'a')")
    assert _data(spark, "SELECT id, name FROM qs_nokey") == [(1, "a"), (1, "a")]
    pyhudi.sql(spark, "UPDATE qs_nokey SET name = 'b' WHERE id = 1")
    assert _data(spark, "SELECT id, name FROM qs_nokey") == [(1, "b"), (1, "b")]
    pyhudi.sql(spark, "DROP TABLE qs_nokey")
    assert issubclass(SqlError, PyHudiError)
