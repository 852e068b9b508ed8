"""INSERT OVERWRITE, SET/RESET hoodie.* and statement options as Hudi 0.14/0.15's Spark SQL: differential against
plain Spark on a parquet table, precedence between TBLPROPERTIES / session settings / statement options, bad input,
and MERGE INTO in one commit."""

from __future__ import annotations

import threading
import uuid

import pytest

import pyhudi
from pyhudi.errors import SqlError
from pyhudi import sqlext
from pyhudi.sqlext import settings
from pyhudi.table import HudiTable
from support import hudi_rs_read, rows

MODE = "hoodie.datasource.overwrite.mode"
START = "(1, 'a1', 'a'), (2, 'b1', 'b'), (3, 'c1', 'c')"


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _create(spark, name: str, location, using: str = "hudi", tblproperties: str = "primaryKey = 'id'") -> None:
    props = f" TBLPROPERTIES ({tblproperties})" if using == "hudi" else ""
    pyhudi.sql(spark, f"CREATE TABLE {name} (id INT, v STRING, dt STRING) USING {using} PARTITIONED BY (dt) "
                      f"LOCATION '{location}'{props}")
    pyhudi.sql(spark, f"INSERT INTO {name} VALUES {START}")


def _rows(spark, name: str) -> list[tuple]:
    return sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, v, dt FROM {name}").collect())


def _completed(path) -> list[str]:
    return [i.time for i in HudiTable.load(str(path)).timeline().completed_writes()]


@pytest.fixture
def reset_modes(spark):
    yield
    for key in (MODE, "spark.sql.sources.partitionOverwriteMode"):
        pyhudi.sql(spark, f"RESET {key}")


# --- differential: the Hudi table ends with the rows plain Spark gives on a parquet table ----------------------
OVERWRITES = {
    "no_partition_clause": "INSERT OVERWRITE TABLE {t} SELECT 10, 'a2', 'a' UNION ALL SELECT 11, 'd1', 'd'",
    "static_partition": "INSERT OVERWRITE TABLE {t} PARTITION (dt = 'a') SELECT 12, 'a3'",
    "dynamic_partition": "INSERT OVERWRITE TABLE {t} PARTITION (dt) SELECT 13, 'b2', 'b' UNION ALL "
                         "SELECT 14, 'd2', 'd'",
    "static_partition_no_rows": "INSERT OVERWRITE TABLE {t} PARTITION (dt = 'b') SELECT 15, 'x' WHERE 1 = 0",
}


@pytest.mark.parametrize("mode", ["static", "dynamic"])
def test_insert_overwrite_matches_spark_parquet(spark, tmp_path, reset_modes, mode):
    """Each statement in turn on both tables; after each, the Hudi table (pyhudi and hudi-rs) has the parquet
    table's rows and one more completed instant."""
    hudi, parquet = _name("ovw_hudi"), _name("ovw_parquet")
    statements = [s for s in OVERWRITES if (s, mode) != ("static_partition_no_rows", "dynamic")]
    # (Hudi's dynamic overwrite replaces only the partitions written: with no rows nothing, where Spark treats a
    # fully static PARTITION clause as a static overwrite; tested on its own below)
    try:
        _create(spark, hudi, tmp_path / "hudi")
        _create(spark, parquet, tmp_path / "parquet", using="parquet")
        pyhudi.sql(spark, f"SET spark.sql.sources.partitionOverwriteMode = {mode}")
        for statement in statements:
            before = len(_completed(tmp_path / "hudi"))
            for table in (parquet, hudi):
                pyhudi.sql(spark, OVERWRITES[statement].format(t=table))
            expected = _rows(spark, parquet)
            assert _rows(spark, hudi) == expected, statement
            assert sorted(rows(hudi_rs_read(tmp_path / "hudi"), ["id", "v", "dt"])) == expected, statement
            assert len(_completed(tmp_path / "hudi")) == before + 1, statement   # one replacecommit
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {hudi} PURGE; DROP TABLE IF EXISTS {parquet}")


def test_dynamic_overwrite_of_a_static_partition_with_no_rows_keeps_it(spark, tmp_path, reset_modes):
    """Hudi (not Spark): in DYNAMIC mode only the partitions the query writes are replaced, even for a static
    PARTITION clause."""
    name = _name("ovw_dyn_empty")
    try:
        _create(spark, name, tmp_path / "t")
        pyhudi.sql(spark, f"SET {MODE} = DYNAMIC")
        pyhudi.sql(spark, OVERWRITES["static_partition_no_rows"].format(t=name))
        assert _rows(spark, name) == [(1, "a1", "a"), (2, "b1", "b"), (3, "c1", "c")]
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")


def test_default_session_overwrites_the_whole_table(spark, tmp_path):
    """pyhudi.session() keeps Spark's STATIC default: INSERT OVERWRITE without PARTITION replaces the table."""
    assert spark.conf.get("spark.sql.sources.partitionOverwriteMode").upper() == "STATIC"
    name = _name("ovw_default")
    try:
        _create(spark, name, tmp_path / "t")
        pyhudi.sql(spark, f"INSERT OVERWRITE TABLE {name} SELECT 9, 'a9', 'a'")
        assert _rows(spark, name) == [(9, "a9", "a")]
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")


# --- precedence: TBLPROPERTIES < SET (session) < options= < /* pyhudi.options */ -------------------------------
def test_overwrite_mode_precedence(spark, tmp_path, reset_modes):
    name = _name("ovw_prec")
    kept = [(2, "b1", "b"), (3, "c1", "c")]

    def overwrite(new_id: int, prefix: str = "", options=None) -> list[tuple]:
        # pyhudi.sqlext.sql is what pyhudi.sql calls (pyhudi.sql forwards options= once its signature has them)
        sqlext.sql(spark, f"{prefix} INSERT OVERWRITE TABLE {name} SELECT {new_id}, 'n', 'a'", options=options)
        return _rows(spark, name)

    dynamic = f'/* pyhudi.options {{"{MODE}": "dynamic"}} */'
    static = f'/* pyhudi.options {{"{MODE}": "static"}} */'
    try:
        _create(spark, name, tmp_path / "t", tblproperties=f"primaryKey = 'id', '{MODE}' = 'dynamic'")
        # TBLPROPERTIES beat spark.sql.sources.partitionOverwriteMode (Spark's STATIC here)
        assert overwrite(20) == sorted([(20, "n", "a")] + kept)
        # a session SET beats TBLPROPERTIES
        pyhudi.sql(spark, f"SET {MODE} = STATIC")
        assert settings.session_options(spark)[MODE] == "STATIC"
        assert overwrite(21) == [(21, "n", "a")]
        pyhudi.sql(spark, f"INSERT INTO {name} VALUES (2, 'b1', 'b'), (3, 'c1', 'c')")
        # the statement's comment beats the session, for that statement only
        assert overwrite(22, prefix=dynamic) == sorted([(22, "n", "a")] + kept)
        assert overwrite(23) == [(23, "n", "a")]
        pyhudi.sql(spark, f"INSERT INTO {name} VALUES (2, 'b1', 'b'), (3, 'c1', 'c')")
        # options= beat the session; the comment beats options=
        assert overwrite(24, options={MODE: "dynamic"}) == sorted([(24, "n", "a")] + kept)
        assert overwrite(25, prefix=static, options={MODE: "dynamic"}) == [(25, "n", "a")]
        pyhudi.sql(spark, f"INSERT INTO {name} VALUES (2, 'b1', 'b'), (3, 'c1', 'c')")
        # RESET key: back to TBLPROPERTIES
        pyhudi.sql(spark, f"RESET {MODE}")
        assert MODE not in settings.session_options(spark)
        assert overwrite(26) == sorted([(26, "n", "a")] + kept)
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")


def test_set_and_reset_reach_spark(spark):
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    pyhudi.sql(spark, "SET spark.sql.shuffle.partitions = 3; SET hoodie.upsert.shuffle.parallelism = 7")
    try:
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
        assert settings.session_options(spark)["hoodie.upsert.shuffle.parallelism"] == "7"
        pyhudi.sql(spark, "RESET")
        assert settings.session_options(spark) == {}
        # Spark's RESET goes back to the value the session started with, not to the one before this test
        started = spark.sparkContext.getConf().get("spark.sql.shuffle.partitions", "200")
        assert spark.conf.get("spark.sql.shuffle.partitions") == started
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)


def test_statement_options_are_per_thread():
    """dbt runs models in threads on one session: one thread's statement options never reach another's."""
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def model_a():
        with settings.scoped({MODE: "dynamic"}):
            seen["a"] = settings.statement_options()
            inside.set()
            done.wait(10)

    def model_b():
        inside.wait(10)
        seen["b"] = settings.statement_options()
        done.set()

    threads = [threading.Thread(target=model_a), threading.Thread(target=model_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert seen == {"a": {MODE: "dynamic"}, "b": {}}
    assert settings.statement_options() == {}


# --- bad input: a clear SqlError, the table untouched ----------------------------------------------------------
@pytest.mark.parametrize("text,message", [
    (f'/* pyhudi.options {{"{MODE}": "sideways"}} */ INSERT OVERWRITE TABLE {{t}} SELECT 9, \'x\', \'a\'',
     "sideways"),
    (f'/* pyhudi.options {{"{MODE}": dynamic}} */ INSERT OVERWRITE TABLE {{t}} SELECT 9, \'x\', \'a\'',
     "not valid JSON"),
    (f'/* pyhudi.options {{"{MODE}": true}} */ INSERT OVERWRITE TABLE {{t}} SELECT 9, \'x\', \'a\'',
     "non-string value"),
    ('/* pyhudi.options ["dynamic"] */ INSERT OVERWRITE TABLE {t} SELECT 9, \'x\', \'a\'', "not a JSON object"),
    ("INSERT OVERWRITE TABLE {t} PARTITION (v = 'x') SELECT 9, 'a'", "partitioned by dt"),
], ids=["unknown_mode", "bad_json", "non_string", "not_object", "wrong_partition_column"])
def test_bad_input_leaves_the_table(spark, tmp_path, text, message):
    name = _name("ovw_bad")
    try:
        _create(spark, name, tmp_path / "t")
        before = _rows(spark, name), _completed(tmp_path / "t")
        with pytest.raises(SqlError, match=message) as error:
            pyhudi.sql(spark, text.replace("{t}", name))
        assert "INSERT OVERWRITE" in str(error.value) or "INSERT INTO" in str(error.value)
        assert (_rows(spark, name), _completed(tmp_path / "t")) == before
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")


def test_unknown_mode_from_set(spark, tmp_path, reset_modes):
    name = _name("ovw_bad_set")
    try:
        _create(spark, name, tmp_path / "t")
        pyhudi.sql(spark, f"SET {MODE} = sideways")
        before = _rows(spark, name), _completed(tmp_path / "t")
        with pytest.raises(SqlError, match="sideways.*STATIC.*DYNAMIC"):
            pyhudi.sql(spark, f"INSERT OVERWRITE TABLE {name} SELECT 9, 'x', 'a'")
        assert (_rows(spark, name), _completed(tmp_path / "t")) == before
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")


# --- MERGE INTO: one commit ------------------------------------------------------------------------------------
@pytest.mark.parametrize("statement", ["INSERT INTO", "INSERT OVERWRITE TABLE"])
def test_insert_select_star_from_a_hudi_table_drops_its_meta_columns(spark, tmp_path, statement):
    """`INSERT INTO t SELECT * FROM hudi_table`: the query's `_hoodie_*` columns are dropped before its columns
    meet the table's (Hudi's alignQueryOutput), so a copy between Hudi tables works as between parquet tables."""
    source, target, twin = _name("src"), _name("dst"), _name("twin")
    try:
        for name in (source, target, twin):
            _create(spark, name, tmp_path / name)
        pyhudi.sql(spark, f"UPDATE {source} SET v = 'new' WHERE id = 2")
        pyhudi.sql(spark, f"{statement} {target} SELECT * FROM {source} WHERE id > 1")
        pyhudi.sql(spark, f"{statement} {twin} SELECT id, v, dt FROM {source} WHERE id > 1")
        assert _rows(spark, target) == _rows(spark, twin)
        assert (2, "new", "b") in _rows(spark, target)
        with pytest.raises(SqlError, match="NOT_ENOUGH_DATA_COLUMNS"):   # a missing data column is still an error
            pyhudi.sql(spark, f"INSERT INTO {target} SELECT _hoodie_record_key, id, v FROM {source}")
    finally:
        for name in (source, target, twin):
            pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")


def test_merge_updates_deletes_and_inserts_in_one_commit(spark, tmp_path):
    name, source = _name("merge_one"), _name("merge_src")
    try:
        for table_type in ("cow", "mor"):
            path = tmp_path / table_type
            pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")
            _create(spark, name, path, tblproperties=f"primaryKey = 'id', type = '{table_type}'")
            spark.createDataFrame([(1, "a2", "a", "update"), (2, "", "b", "delete"), (4, "d1", "d", "insert")],
                                  "id int, v string, dt string, op string").createOrReplaceTempView(source)
            before = _completed(path)
            pyhudi.sql(spark, f"""MERGE INTO {name} t USING {source} s ON t.id = s.id
                WHEN MATCHED AND s.op = 'delete' THEN DELETE
                WHEN MATCHED THEN UPDATE SET v = s.v
                WHEN NOT MATCHED THEN INSERT (id, v, dt) VALUES (s.id, s.v, s.dt)""")
            assert len(_completed(path)) == len(before) + 1
            expected = [(1, "a2", "a"), (3, "c1", "c"), (4, "d1", "d")]
            assert _rows(spark, name) == expected
            assert sorted(rows(hudi_rs_read(path), ["id", "v", "dt"])) == expected
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")
        spark.catalog.dropTempView(source)


def test_merge_single_write_path(spark, tmp_path, monkeypatch):
    """The one-upsert MERGE path, run with `_hoodie_is_deleted` (a delete flag today's writer already honours,
    though as a data column) standing in for the writer's schema-less DELETE_FLAG_COLUMN: one commit, the rows
    of MERGE's clauses in order, and hudi-rs reads the same rows."""
    from pyhudi.sqlext import dml
    monkeypatch.setattr(dml, "DELETE_FLAG_COLUMN", "_hoodie_is_deleted")
    name, source = _name("merge_path"), _name("merge_path_src")
    path = tmp_path / "t"
    try:
        _create(spark, name, path, tblproperties="primaryKey = 'id', type = 'mor'")
        spark.createDataFrame([(1, "a2", "a", "update"), (2, "", "b", "delete"), (3, "c2", "c", "skip"),
                               (4, "d1", "d", "insert"), (5, "e1", "e", "skip")],
                              "id int, v string, dt string, op string").createOrReplaceTempView(source)
        before = _completed(path)
        pyhudi.sql(spark, f"""MERGE INTO {name} t USING {source} s ON t.id = s.id
            WHEN MATCHED AND s.op = 'delete' THEN DELETE
            WHEN MATCHED AND s.op = 'update' THEN UPDATE SET v = s.v
            WHEN NOT MATCHED AND s.op = 'insert' THEN INSERT *""")
        assert len(_completed(path)) == len(before) + 1
        expected = [(1, "a2", "a"), (3, "c1", "c"), (4, "d1", "d")]
        assert _rows(spark, name) == expected
        assert sorted(rows(hudi_rs_read(path), ["id", "v", "dt"])) == expected
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")
        spark.catalog.dropTempView(source)


def test_static_overwrite_with_static_and_dynamic_partition_columns(spark, tmp_path, reset_modes):
    """STATIC mode, PARTITION (p0 = 'a', p1): every existing partition with p0 = 'a' is replaced by the query's
    rows, the others stay — as plain Spark does on a parquet table — in one replacecommit."""
    hudi, parquet = _name("mixed_hudi"), _name("mixed_parquet")
    try:
        for name, using, where in ((hudi, "hudi", tmp_path / "hudi"), (parquet, "parquet", tmp_path / "parquet")):
            props = " TBLPROPERTIES (primaryKey = 'id')" if using == "hudi" else ""
            pyhudi.sql(spark, f"CREATE TABLE {name} (id INT, v STRING, p0 STRING, p1 STRING) USING {using} "
                              f"PARTITIONED BY (p0, p1) LOCATION '{where}'{props}")
            pyhudi.sql(spark, f"INSERT INTO {name} VALUES (1, 'x', 'a', 'x'), (2, 'y', 'a', 'y'), (3, 'z', 'b', 'x')")
        pyhudi.sql(spark, "SET spark.sql.sources.partitionOverwriteMode = STATIC")
        before = len(_completed(tmp_path / "hudi"))
        for name in (parquet, hudi):
            pyhudi.sql(spark, f"INSERT OVERWRITE TABLE {name} PARTITION (p0 = 'a', p1) SELECT 4, 'w', 'z'")
        expected = sorted(tuple(r) for r in spark.sql(f"SELECT id, v, p0, p1 FROM {parquet}").collect())
        assert expected == [(3, "z", "b", "x"), (4, "w", "a", "z")]
        assert sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, v, p0, p1 FROM {hudi}").collect()) == expected
        assert sorted(rows(hudi_rs_read(str(tmp_path / "hudi")), ["id", "v", "p0", "p1"])) == expected
        timeline = HudiTable.load(str(tmp_path / "hudi")).timeline()
        assert len(_completed(tmp_path / "hudi")) == before + 1
        assert timeline.completed_writes()[-1].action == "replacecommit"
    finally:
        for name in (hudi, parquet):
            pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("index,table_type,moves", [("GLOBAL_BLOOM", "mor", "false"), ("GLOBAL_SIMPLE", "cow", "true"),
                                                    ("BLOOM", "mor", "false")])
def test_merge_matches_by_key_alone_under_a_global_index(spark, tmp_path, index, table_type, moves):
    """A global index locates a key in any partition, so a MERGE source row giving another partition matches the
    stored record (Hudi tags it through the index): its DELETE deletes it. Under a partition-scoped index the
    same row does not match and is inserted (conformance seed 1013 found the global case inserting instead)."""
    name, source = _name("merge_global"), _name("merge_global_src")
    path = tmp_path / "t"
    try:
        _create(spark, name, path, tblproperties=f"primaryKey = 'id', type = '{table_type}', "
                f"'hoodie.index.type' = '{index}', 'hoodie.bloom.index.update.partition.path' = '{moves}', "
                f"'hoodie.simple.index.update.partition.path' = '{moves}'")
        spark.createDataFrame([(1, "a2", "a", "update"), (2, "b2", "z", "delete")],
                              "id int, v string, dt string, op string").createOrReplaceTempView(source)
        pyhudi.sql(spark, f"""MERGE INTO {name} t USING {source} s ON t.id = s.id
            WHEN MATCHED AND s.op = 'delete' THEN DELETE
            WHEN MATCHED THEN UPDATE SET v = s.v
            WHEN NOT MATCHED THEN INSERT (id, v, dt) VALUES (s.id, s.v, s.dt)""")
        expected = [(1, "a2", "a"), (3, "c1", "c")] if index.startswith("GLOBAL") else \
            [(1, "a2", "a"), (2, "b1", "b"), (2, "b2", "z"), (3, "c1", "c")]
        assert _rows(spark, name) == expected
        assert sorted(rows(hudi_rs_read(path), ["id", "v", "dt"])) == expected
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name} PURGE")
        spark.catalog.dropTempView(source)
