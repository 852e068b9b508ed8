"""Issue 12's remaining SQL gaps, each as Hudi 0.14/0.15's Spark SQL does it: TRUNCATE TABLE re-initialises the
table (TruncateHoodieTableCommand), CTAS writes with bulk_insert (CreateHoodieTableAsSelectCommand), a static
INSERT OVERWRITE whose query is empty replaces the named partition (insert_overwrite with the static partition
paths), ALTER TABLE SET/UNSET TBLPROPERTIES settings apply to the next write in Hudi's precedence. Rows are
checked against plain Spark on parquet tables and hudi-rs."""

from __future__ import annotations

from pathlib import Path

import pytest

import pyhudi
from pyhudi.errors import SqlError
from support import hudi_rs_read, rows

COLUMNS = ["id", "name", "ts", "dt"]
ROWS = "SELECT CAST(id AS INT) AS id, concat('n', id) AS name, CAST(id * 10 AS BIGINT) AS ts, " \
       "concat('d', id % 3) AS dt FROM range(9)"


def _location(spark, table: str) -> str:
    from pyhudi.sqlext.query import Resolver
    return Resolver(spark).entry_by_name(table).location


def _timeline(path: str):
    from pyhudi.table import HudiTable
    return HudiTable.load(path).timeline()


def _latest(path: str) -> tuple[str, dict]:
    timeline = _timeline(path)
    instant = timeline.completed_writes()[-1]
    return instant.action, timeline.read_metadata(instant)


def _same(spark, hudi: str, parquet: str) -> None:
    """The Hudi table holds the parquet table's rows, in pyhudi.sql and in hudi-rs."""
    expected = rows(spark.sql(f"SELECT {', '.join(COLUMNS)} FROM {parquet}"))
    assert rows(pyhudi.sql(spark, f"SELECT {', '.join(COLUMNS)} FROM {hudi}")) == expected
    theirs = hudi_rs_read(_location(spark, hudi))
    assert (rows(theirs, COLUMNS) if theirs.num_rows else []) == expected


def _both(spark, hudi: str, parquet: str, statement: str) -> None:
    """Run `statement` ({t} is the table) on the Hudi table and on the parquet table, then compare."""
    pyhudi.sql(spark, statement.format(t=hudi))
    spark.sql(statement.format(t=parquet))
    _same(spark, hudi, parquet)


def _create_pair(spark, tmp_path: Path, hudi: str, parquet: str, table_type: str, location: bool = False) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {parquet}")
    pyhudi.sql(spark, f"DROP TABLE IF EXISTS {hudi} PURGE")
    where = f" LOCATION '{tmp_path / hudi}'" if location else ""
    pyhudi.sql(spark, f"CREATE TABLE {hudi} (id INT, name STRING, ts BIGINT, dt STRING) USING hudi "
                      f"PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', "
                      f"type = '{table_type}'){where}")
    spark.sql(f"CREATE TABLE {parquet} (id INT, name STRING, ts BIGINT, dt STRING) USING parquet "
              "PARTITIONED BY (dt)")   # managed: Spark truncates no external table


# --- 1. TRUNCATE TABLE ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_truncate_table_reinitialises_the_table(spark, tmp_path, table_type):
    hudi, parquet = f"trunc_{table_type}", f"trunc_{table_type}_pq"
    _create_pair(spark, tmp_path, hudi, parquet, table_type, location=True)
    path = Path(_location(spark, hudi))
    (path / "README.txt").write_text("someone else's file")   # a LOCATION may hold other files: they stay
    _both(spark, hudi, parquet, f"INSERT INTO {{t}} {ROWS}")
    pyhudi.sql(spark, f"UPDATE {hudi} SET name = 'x', ts = ts + 1 WHERE id < 4")   # MOR: log files too
    properties = (path / ".hoodie" / "hoodie.properties").read_text()

    _both(spark, hudi, parquet, "TRUNCATE TABLE {t}")
    # Hudi's TruncateHoodieTableCommand: data and timeline deleted, hoodie.properties initialised again
    assert _timeline(str(path)).instants == []
    assert sorted(p.name for p in path.iterdir()) == [".hoodie", "README.txt"]
    assert sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file()) == ["hoodie.properties"]
    keep = ("hoodie.table.name", "hoodie.table.type", "hoodie.table.recordkey.fields",
            "hoodie.table.partition.fields", "hoodie.table.precombine.field", "hoodie.table.checksum")
    after = (path / ".hoodie" / "hoodie.properties").read_text()
    assert [line for line in after.splitlines() if line.startswith(keep)] == \
        [line for line in properties.splitlines() if line.startswith(keep)]
    assert pyhudi.read(spark, str(path)).count() == 0

    # later writes start a new history
    _both(spark, hudi, parquet, f"INSERT INTO {{t}} SELECT * FROM ({ROWS}) WHERE id > 5")
    _both(spark, hudi, parquet, "INSERT INTO {t} SELECT id + 100, 'u', ts + 1, dt FROM {t} WHERE id = 7")
    assert len(_timeline(str(path)).completed_writes()) == 2
    assert (path / "README.txt").read_text() == "someone else's file"
    pyhudi.sql(spark, f"DROP TABLE {hudi} PURGE")
    spark.sql(f"DROP TABLE {parquet}")


def test_truncate_partition_is_a_delete_partition_replacecommit(spark, tmp_path):
    hudi, parquet = "trunc_part", "trunc_part_pq"
    _create_pair(spark, tmp_path, hudi, parquet, "cow")
    _both(spark, hudi, parquet, f"INSERT INTO {{t}} {ROWS}")
    _both(spark, hudi, parquet, "TRUNCATE TABLE {t} PARTITION (dt = 'd1')")
    action, meta = _latest(_location(spark, hudi))
    assert (action, meta["operationType"], list(meta["partitionToReplaceFileIds"])) == \
        ("replacecommit", "DELETE_PARTITION", ["dt=d1"])
    assert len(_timeline(_location(spark, hudi)).completed_writes()) == 2   # the history stays
    pyhudi.sql(spark, f"DROP TABLE {hudi} PURGE")
    spark.sql(f"DROP TABLE {parquet}")


# --- 3. CTAS ----------------------------------------------------------------------------------------------------
def test_ctas_writes_with_bulk_insert_as_hudi(spark, tmp_path):
    pyhudi.sql(spark, "DROP TABLE IF EXISTS ctas_bulk PURGE")
    pyhudi.sql(spark, f"CREATE TABLE ctas_bulk USING hudi PARTITIONED BY (dt) "
                      f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') AS {ROWS}")
    action, meta = _latest(_location(spark, "ctas_bulk"))
    assert (action, meta["operationType"]) == ("commit", "BULK_INSERT")
    assert rows(pyhudi.sql(spark, "SELECT id, name, ts, dt FROM ctas_bulk")) == rows(spark.sql(ROWS))
    assert rows(hudi_rs_read(_location(spark, "ctas_bulk")), COLUMNS) == rows(spark.sql(ROWS))

    # CREATE OR REPLACE ... AS SELECT too; an explicit operation (here hoodie.spark.sql.insert.into.operation)
    # decides, as in ProvidesHoodieConfig.buildHoodieInsertConfig
    pyhudi.sql(spark, f"CREATE OR REPLACE TABLE ctas_bulk USING hudi TBLPROPERTIES (primaryKey = 'id') AS {ROWS}")
    assert _latest(_location(spark, "ctas_bulk"))[1]["operationType"] == "BULK_INSERT"
    pyhudi.sql(spark, "SET hoodie.spark.sql.insert.into.operation = insert")
    try:
        pyhudi.sql(spark, f"CREATE OR REPLACE TABLE ctas_bulk USING hudi TBLPROPERTIES (primaryKey = 'id') "
                          f"AS {ROWS}")
        assert _latest(_location(spark, "ctas_bulk"))[1]["operationType"] == "INSERT"
    finally:
        pyhudi.sql(spark, "RESET hoodie.spark.sql.insert.into.operation")
    pyhudi.sql(spark, f"CREATE OR REPLACE TABLE ctas_bulk USING hudi TBLPROPERTIES (primaryKey = 'id', "
                      f"'hoodie.datasource.write.operation' = 'upsert') AS {ROWS}")
    assert _latest(_location(spark, "ctas_bulk"))[1]["operationType"] == "UPSERT"
    assert rows(pyhudi.sql(spark, "SELECT id, name, ts, dt FROM ctas_bulk")) == rows(spark.sql(ROWS))
    pyhudi.sql(spark, "DROP TABLE ctas_bulk PURGE")


def test_ctas_keeps_every_row_of_a_key(spark):
    """Hudi's CreateHoodieTableAsSelectCommand writes with hoodie.combine.before.insert=false: rows of one key all
    stay (Hudi's own TestCreateTable "Test CTAS not de-duplicating by default")."""
    source = f"SELECT * FROM ({ROWS}) UNION ALL SELECT 1, 'older', 5, 'd1' UNION ALL SELECT 2, 'newer', 99, 'd2'"
    pyhudi.sql(spark, "DROP TABLE IF EXISTS ctas_dups PURGE")
    try:
        pyhudi.sql(spark, f"CREATE TABLE ctas_dups USING hudi PARTITIONED BY (dt) "
                          f"TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') AS {source}")
        expected = rows(spark.sql(f"SELECT id, name, ts, dt FROM ({source})"))
        assert rows(pyhudi.sql(spark, "SELECT id, name, ts, dt FROM ctas_dups")) == expected
    finally:
        pyhudi.sql(spark, "DROP TABLE IF EXISTS ctas_dups PURGE")


# --- 4. a static INSERT OVERWRITE whose query is empty -------------------------------------------------------
@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_static_overwrite_with_an_empty_query(spark, tmp_path, table_type):
    hudi, parquet = f"ovw_empty_{table_type}", f"ovw_empty_{table_type}_pq"
    _create_pair(spark, tmp_path, hudi, parquet, table_type)
    _both(spark, hudi, parquet, f"INSERT INTO {{t}} {ROWS}")
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW cf_empty_src AS {ROWS}")
    path = _location(spark, hudi)
    d1_groups = {s["fileId"] for s in _latest(path)[1]["partitionToWriteStats"]["dt=d1"]}

    _both(spark, hudi, parquet, "INSERT OVERWRITE {t} PARTITION (dt = 'd1') SELECT id, name, ts FROM cf_empty_src WHERE id < 0")
    # Hudi: an insert_overwrite replacecommit replacing the static partition's file groups (not a delete_partition)
    action, meta = _latest(path)
    assert (action, meta["operationType"]) == ("replacecommit", "INSERT_OVERWRITE")
    assert {k: set(v) for k, v in meta["partitionToReplaceFileIds"].items()} == {"dt=d1": d1_groups}

    # a partition that does not exist: the commit replaces nothing, the table is unchanged
    writes = len(_timeline(path).completed_writes())
    _both(spark, hudi, parquet, "INSERT OVERWRITE {t} PARTITION (dt = 'zz') SELECT id, name, ts FROM cf_empty_src WHERE id < 0")
    assert len(_timeline(path).completed_writes()) == writes + 1
    assert not _latest(path)[1].get("partitionToReplaceFileIds")
    _both(spark, hudi, parquet, "INSERT INTO {t} SELECT id + 100, name, ts, 'd1' FROM {t} WHERE id < 3")
    pyhudi.sql(spark, f"DROP TABLE {hudi} PURGE")
    spark.sql(f"DROP TABLE {parquet}")


# --- 2. ALTER TABLE SET / UNSET TBLPROPERTIES ---------------------------------------------------------------------
def _actions(path: str) -> list[str]:
    return [i.action for i in _timeline(path).completed_writes()]


def _write(spark, t: str, n: int, options: dict | None = None) -> None:
    """An update of key n % 30 only: a log file on merge-on-read, so compaction has work (a write that also
    inserts rewrites the small base file instead, as Hudi's MOR upsert partitioner does)."""
    pyhudi.sql(spark, f"INSERT INTO {t} VALUES ({n % 30}, 'v{n}', {n + 100})", options)


def test_tblproperties_service_settings_and_precedence(spark):
    t = "props_services"
    pyhudi.sql(spark, f"DROP TABLE IF EXISTS {t} PURGE")
    pyhudi.sql(spark, f"CREATE TABLE {t} (id INT, name STRING, ts BIGINT) USING hudi "
                      "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')")
    path = _location(spark, t)
    properties = (Path(path) / ".hoodie" / "hoodie.properties").read_bytes()
    pyhudi.sql(spark, f"INSERT INTO {t} SELECT CAST(id AS INT), 'a', id FROM range(30)")
    pyhudi.sql(spark, f"ALTER TABLE {t} SET TBLPROPERTIES ('hoodie.compact.inline' = 'true', "
                      "'hoodie.compact.inline.max.delta.commits' = '2')")
    _write(spark, t, 1)
    assert _actions(path) == ["deltacommit", "deltacommit", "commit"]   # compacted after the 2nd delta commit

    # the session's SET hoodie.* wins over TBLPROPERTIES
    pyhudi.sql(spark, "SET hoodie.compact.inline.max.delta.commits = 3")
    try:
        for n in (3, 4):
            _write(spark, t, n)
        assert _actions(path)[3:] == ["deltacommit", "deltacommit"]
        # a statement's options win over the session
        _write(spark, t, 9, {"hoodie.compact.inline.max.delta.commits": "1"})
        assert _actions(path)[5:] == ["deltacommit", "commit"]
    finally:
        pyhudi.sql(spark, "RESET hoodie.compact.inline.max.delta.commits")

    # UNSET: Hudi's default again (hoodie.compact.inline=false: no compaction)
    pyhudi.sql(spark, f"ALTER TABLE {t} UNSET TBLPROPERTIES ('hoodie.compact.inline')")
    for n in (10, 11, 12):
        _write(spark, t, n)
    assert _actions(path)[7:] == ["deltacommit"] * 3

    # archiving settings: the active timeline keeps between keep.min and keep.max commits
    pyhudi.sql(spark, f"ALTER TABLE {t} SET TBLPROPERTIES ('hoodie.keep.min.commits' = '2', "
                      "'hoodie.keep.max.commits' = '3', 'hoodie.cleaner.commits.retained' = '1')")
    for n in (20, 21, 22, 23):
        _write(spark, t, n)
    # archived up to the last compaction (a merge-on-read table keeps the delta commits after it, as Hudi's
    # archiver does); without these settings (keep.min/max 20/30) nothing would be archived yet
    assert _actions(path) == ["deltacommit"] * 7
    assert list((Path(path) / ".hoodie" / "archived").iterdir())
    assert rows(pyhudi.sql(spark, f"SELECT count(*) FROM {t}")) == [(30,)]
    # Hudi 0.14/0.15 keep ALTER TABLE's properties in the catalog only: hoodie.properties is unchanged
    assert (Path(path) / ".hoodie" / "hoodie.properties").read_bytes() == properties

    for key, value in (("preCombineField", "name"), ("type", "cow"),
                       ("hoodie.datasource.write.partitionpath.field", "name"),
                       ("hoodie.datasource.write.recordkey.field", "name")):
        with pytest.raises(SqlError, match=f"SET TBLPROPERTIES: {key} is part of the table's identity"):
            pyhudi.sql(spark, f"ALTER TABLE {t} SET TBLPROPERTIES ('{key}' = '{value}')")
    pyhudi.sql(spark, f"DROP TABLE {t} PURGE")


# --- 5. CREATE OR REPLACE TABLE t AS SELECT ... FROM t ---------------------------------------------------------
def test_create_or_replace_swaps_the_new_table_in(spark, monkeypatch):
    """The new table is written first (its query reads the old one), then swapped in: readers see the old table
    while its files move in, nothing (not a Hudi table) while the old files go, then the new table — never both
    tables' rows, which the old files (older than the new timeline) would give as archived commits."""
    from pyhudi.client import replace
    from pyhudi.storage import Storage
    from pyhudi.table import HudiTable

    t = "replace_swap"
    pyhudi.sql(spark, f"DROP TABLE IF EXISTS {t} PURGE")
    pyhudi.sql(spark, f"CREATE TABLE {t} USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id') "
                      f"AS {ROWS}")
    path = _location(spark, t)
    (Path(path) / "notes.txt").write_text("not the table's")     # another owner's file: swapped file by file
    old = rows(spark.sql(ROWS))
    replacement = "SELECT id, concat(name, '!') AS name, ts, dt FROM {src} WHERE id % 2 = 0"
    new = rows(spark.sql(replacement.format(src=f"({ROWS})")))
    seen = {}

    class Probe(Storage):
        def makedirs(self, relative):          # before each staged data file moves in
            if "moving" not in seen:
                seen["moving"] = (rows(pyhudi.read(spark, path).select(*COLUMNS)),
                                  rows(hudi_rs_read(path), COLUMNS))
            return super().makedirs(relative)

        def delete_file(self, relative):       # the old table's files go while no timeline is in place
            seen.setdefault("deleting", HudiTable.exists(path))
            return super().delete_file(relative)

    monkeypatch.setattr(replace, "Storage", Probe)
    statement = f"CREATE OR REPLACE TABLE {t} USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id') AS "
    pyhudi.sql(spark, statement + replacement.format(src=t))
    assert seen == {"moving": (old, old), "deleting": False}
    assert rows(pyhudi.sql(spark, f"SELECT {', '.join(COLUMNS)} FROM {t}")) == new
    assert rows(hudi_rs_read(path), COLUMNS) == new
    assert sorted(p.name for p in Path(path).iterdir() if not p.name.startswith("dt=")) == [".hoodie", "notes.txt"]

    # a folder with only the table's files: swapped whole by two renames
    (Path(path) / "notes.txt").unlink()
    seen.clear()
    pyhudi.sql(spark, statement + f"SELECT id, name, ts + 1 AS ts, dt FROM {t}")
    assert seen == {}
    assert rows(hudi_rs_read(path), COLUMNS) == [(i, n, ts + 1, d) for i, n, ts, d in new]
    assert not [p for p in Path(path).parent.iterdir() if "pyhudi-re" in p.name]
    from pyhudi.sqlext.query import Resolver
    assert Resolver(spark).entry_by_name(t).managed
    pyhudi.sql(spark, f"DROP TABLE {t}")
    assert not Path(path).exists()
