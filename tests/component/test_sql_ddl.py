"""CREATE TABLE / CTAS / CREATE OR REPLACE / DROP through pyhudi.sql as Hudi's Spark SQL does them: partition
columns in any position, a replace that reads its own table, and drops that delete only the table's files."""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import pytest

import pyhudi
from pyhudi.errors import SqlError
from support import hudi_rs_read, rows

COLUMNS = {
    "id": "CAST(id AS INT)",
    "name": "concat('n', id)",
    "amount": "CAST(id * 1.5 AS DOUBLE)",
    "dt": "concat('2024-0', CAST(id % 3 + 1 AS STRING))",
    "region": "IF(id % 2 = 0, 'eu', 'us')",
    "flag": "id % 4 = 0",
}


def _location(spark, table: str) -> str:
    from pyhudi.sqlext.query import Resolver
    return Resolver(spark).entry_by_name(table).location


def _data_columns(columns) -> list[str]:
    return [c for c in columns if not c.startswith("_hoodie_")]


def _random_layout(seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    order = list(COLUMNS)
    rng.shuffle(order)
    partitions = rng.sample(["dt", "region", "name"], seed % 3)
    return order, partitions


def _query(order: list[str], n: int = 9) -> str:
    return "SELECT " + ", ".join(f"{COLUMNS[c]} AS {c}" for c in order) + f" FROM range({n})"


def _partitioned_by(partitions: list[str]) -> str:
    return f"PARTITIONED BY ({', '.join(partitions)})" if partitions else ""


def _assert_table_holds(spark, table: str, order: list[str], partitions: list[str], expected) -> None:
    """SELECT * (pyhudi.sql and plain spark.sql), pyhudi.read and hudi-rs give the query's rows; every one of them
    has the catalog's column order: the other columns as selected, then the partition columns."""
    layout = [c for c in order if c not in partitions] + partitions
    path = _location(spark, table)
    for df in (pyhudi.sql(spark, f"SELECT * FROM {table}"), spark.sql(f"SELECT * FROM {table}"),
               pyhudi.read(spark, path)):
        assert _data_columns(df.columns) == layout
        assert rows(df, order) == expected
    theirs = hudi_rs_read(path)
    assert _data_columns(theirs.column_names) == layout      # the data files keep the catalog order (as Hudi)
    assert rows(theirs, order) == expected


@pytest.mark.parametrize("seed", range(6))
def test_ctas_partition_columns_in_any_position(spark, seed):
    order, partitions = _random_layout(seed)
    table = f"ddl_ctas_{seed}"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    query = _query(order)
    expected = rows(spark.sql(query), order)
    pyhudi.sql(spark, f"CREATE TABLE {table} USING hudi {_partitioned_by(partitions)} "
                      f"TBLPROPERTIES (primaryKey = 'id') AS {query}")
    _assert_table_holds(spark, table, order, partitions, expected)
    if partitions:
        folders = sorted(p.name for p in Path(_location(spark, table)).iterdir() if not p.name.startswith("."))
        assert all(f.startswith(f"{partitions[0]}=") for f in folders)      # hive-style, first partition column
    pyhudi.sql(spark, f"DROP TABLE {table}")


@pytest.mark.parametrize("seed", range(3))
def test_create_with_columns_then_insert_and_replace(spark, seed):
    order, partitions = _random_layout(seed + 10)
    partitions = partitions or ["region"]
    table = f"ddl_cols_{seed}"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    types = dict(zip(COLUMNS, ["INT", "STRING", "DOUBLE", "STRING", "STRING", "BOOLEAN"]))
    defs = ", ".join(f"{c} {types[c]}" for c in order)
    pyhudi.sql(spark, f"CREATE TABLE {table} ({defs}) USING hudi {_partitioned_by(partitions)} "
                      "TBLPROPERTIES (primaryKey = 'id')")
    layout = [c for c in order if c not in partitions] + partitions
    # INSERT is positional in the catalog's order (partition columns last), as in Spark and Hudi
    pyhudi.sql(spark, f"INSERT INTO {table} {_query(layout)}")
    _assert_table_holds(spark, table, order, partitions, rows(spark.sql(_query(order)), order))

    new_order, new_partitions = _random_layout(seed + 20)
    query = _query(new_order, 5)
    pyhudi.sql(spark, f"CREATE OR REPLACE TABLE {table} USING hudi {_partitioned_by(new_partitions)} "
                      f"TBLPROPERTIES (primaryKey = 'id') AS {query}")
    _assert_table_holds(spark, table, new_order, new_partitions, rows(spark.sql(query), new_order))
    pyhudi.sql(spark, f"DROP TABLE {table}")


def test_typed_partition_column_form(spark):
    spark.sql("DROP TABLE IF EXISTS ddl_typed")
    pyhudi.sql(spark, "CREATE TABLE ddl_typed (id INT, amount DOUBLE) USING hudi PARTITIONED BY (dt STRING, n INT) "
                      "TBLPROPERTIES (primaryKey = 'id')")
    pyhudi.sql(spark, "INSERT INTO ddl_typed VALUES (1, 2.5, '2024-01', 7), (2, 3.5, '2024-02', 8)")
    df = pyhudi.sql(spark, "SELECT * FROM ddl_typed")
    assert _data_columns(df.columns) == ["id", "amount", "dt", "n"]
    assert rows(df, ["id", "amount", "dt", "n"]) == [(1, 2.5, "2024-01", 7), (2, 3.5, "2024-02", 8)]
    assert rows(hudi_rs_read(_location(spark, "ddl_typed")), ["id", "dt", "n"]) == [(1, "2024-01", 7),
                                                                                  (2, "2024-02", 8)]
    assert os.path.isdir(os.path.join(_location(spark, "ddl_typed"), "dt=2024-01", "n=7"))
    pyhudi.sql(spark, "DROP TABLE ddl_typed")


def test_partition_column_missing_from_the_select(spark):
    spark.sql("DROP TABLE IF EXISTS ddl_missing")
    with pytest.raises(SqlError, match=r"ddl_missing: partition column\(s\) dt are not among the columns"):
        pyhudi.sql(spark, "CREATE TABLE ddl_missing USING hudi PARTITIONED BY (dt) AS SELECT 1 AS id, 'x' AS name")
    assert not spark.catalog.tableExists("ddl_missing")
    with pytest.raises(SqlError, match="more than once"):
        pyhudi.sql(spark, "CREATE TABLE ddl_missing USING hudi PARTITIONED BY (dt, DT) AS SELECT 1 AS id, 'x' AS dt")
    assert not spark.catalog.tableExists("ddl_missing")


# --- CREATE OR REPLACE reads its query before the old table goes -----------------------------------------
def _create_people(spark, table: str, location=None) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    where = f"LOCATION '{location}'" if location else ""
    pyhudi.sql(spark, f"""CREATE TABLE {table} USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id')
        {where} AS SELECT CAST(id AS INT) AS id, concat('n', id) AS name, IF(id < 3, 'a', 'b') AS dt FROM range(6)""")


@pytest.mark.parametrize("external", [False, True])
def test_create_or_replace_reading_itself(spark, tmp_path, external):
    table = f"ddl_self_{'ext' if external else 'managed'}"
    _create_people(spark, table, tmp_path / "t" if external else None)
    pyhudi.sql(spark, f"""CREATE OR REPLACE TABLE {table} USING hudi TBLPROPERTIES (primaryKey = 'id')
        {f"LOCATION '{tmp_path / 't'}'" if external else ""}
        AS SELECT id, upper(name) AS name, id * 10 AS score FROM {table} WHERE id % 2 = 0""")
    expected = [(0, "N0", 0), (2, "N2", 20), (4, "N4", 40)]
    assert rows(pyhudi.sql(spark, f"SELECT id, name, score FROM {table}")) == expected
    path = _location(spark, table)
    assert rows(hudi_rs_read(path), ["id", "name", "score"]) == expected
    assert not [p for p in Path(path).iterdir() if p.name.startswith("dt=")]     # the old table's files are gone
    assert not [p for p in Path(path).parent.iterdir() if "pyhudi-replace" in p.name]   # no staging left
    pyhudi.sql(spark, f"DROP TABLE {table} PURGE")


def test_failing_replace_leaves_the_old_table(spark):
    table = "ddl_replace_fails"
    _create_people(spark, table)
    path = _location(spark, table)
    before = _hashes(Path(path))
    with pytest.raises(Exception, match="boom"):
        pyhudi.sql(spark, f"""CREATE OR REPLACE TABLE {table} USING hudi TBLPROPERTIES (primaryKey = 'id')
            AS SELECT id, IF(id = 4, raise_error('boom'), name) AS name FROM {table}""")
    assert _hashes(Path(path)) == before
    assert rows(pyhudi.sql(spark, f"SELECT id, name, dt FROM {table}")) == \
        [(i, f"n{i}", "a" if i < 3 else "b") for i in range(6)]
    assert not [p for p in Path(path).parent.iterdir() if "pyhudi-replace" in p.name]
    pyhudi.sql(spark, f"DROP TABLE {table}")


# --- LOCATION rules and drops that delete only the table's files -----------------------------------------
def _hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _foreign_files(folder: Path) -> dict[str, str]:
    (folder / "notes.txt").write_text("keep me")
    (folder / "other").mkdir(exist_ok=True)
    (folder / "other" / "data.csv").write_text("a,b\n1,2\n")
    (folder / "dt=a" / "README").write_text("a user's file inside a partition folder")
    return _hashes(folder)


def test_drop_purge_deletes_only_the_tables_files(spark, tmp_path):
    location = tmp_path / "shared"
    _create_people(spark, "ddl_purge", location)
    foreign = _foreign_files(location)
    foreign = {k: v for k, v in foreign.items() if k in ("notes.txt", "other/data.csv", "dt=a/README")}
    pyhudi.sql(spark, "DROP TABLE ddl_purge PURGE")
    assert _hashes(location) == foreign                  # nothing else was touched, nothing of the table is left
    assert not (location / ".hoodie").exists() and not (location / "dt=b").exists()


def test_managed_drop_deletes_only_the_tables_files(spark):
    _create_people(spark, "ddl_managed_drop")
    path = Path(_location(spark, "ddl_managed_drop"))
    foreign = {k: v for k, v in _foreign_files(path).items() if k in ("notes.txt", "other/data.csv", "dt=a/README")}
    pyhudi.sql(spark, "DROP TABLE ddl_managed_drop")
    assert _hashes(path) == foreign
    assert not spark.catalog.tableExists("ddl_managed_drop")


def test_create_location_rules(spark, tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "report.csv").write_text("x\n1\n")
    before = _hashes(busy)
    for ddl in (f"CREATE TABLE ddl_loc (id INT) USING hudi LOCATION '{busy}'",
                f"CREATE TABLE ddl_loc USING hudi LOCATION '{busy}' AS SELECT 1 AS id"):
        with pytest.raises(SqlError, match=rf"ddl_loc: LOCATION {busy} is not empty and holds no Hudi table "
                                           r"\(report.csv\)"):
            pyhudi.sql(spark, ddl)
        assert not spark.catalog.tableExists("ddl_loc")
    assert _hashes(busy) == before
    with pytest.raises(SqlError, match="LOCATION '' is empty"):
        pyhudi.sql(spark, "CREATE TABLE ddl_loc (id INT) USING hudi LOCATION ''")
    with pytest.raises(SqlError, match="is a file"):
        pyhudi.sql(spark, f"CREATE TABLE ddl_loc (id INT) USING hudi LOCATION '{busy / 'report.csv'}'")
    assert not spark.catalog.tableExists("ddl_loc")
    empty = tmp_path / "empty"
    empty.mkdir()
    pyhudi.sql(spark, f"CREATE TABLE ddl_loc (id INT) USING hudi LOCATION '{empty}'")
    assert (empty / ".hoodie" / "hoodie.properties").exists()
    pyhudi.sql(spark, "DROP TABLE ddl_loc PURGE")
    assert not empty.exists()


def test_key_columns_must_exist(spark):
    spark.sql("DROP TABLE IF EXISTS ddl_keys")
    with pytest.raises(SqlError, match=r"CREATE TABLE ddl_keys: primaryKey uid is not a column of the table "
                                       r"\(id, name\)"):
        pyhudi.sql(spark, "CREATE TABLE ddl_keys (id INT, name STRING) USING hudi TBLPROPERTIES (primaryKey = 'uid')")
    with pytest.raises(SqlError, match="preCombineField ts is not a column"):
        pyhudi.sql(spark, "CREATE TABLE ddl_keys USING hudi TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') "
                          "AS SELECT 1 AS id")
    assert not spark.catalog.tableExists("ddl_keys")


def test_a_table_being_created_reads_empty_and_a_broken_one_stays_an_error(spark):
    """CTAS registers the name before it writes hoodie.properties: another process querying in that moment (a
    dashboard while dbt runs) reads the table empty, as it would a moment later, instead of failing; a folder with
    data files but no hoodie.properties is still refused by name."""
    from pyspark.sql import types as T

    from pyhudi.errors import NotAHudiTableError
    from pyhudi.sqlext import catalog

    schema = T.StructType([T.StructField("id", T.IntegerType()), T.StructField("v", T.StringType())])
    entry = catalog.register(spark, "default", "being_created", schema, [], None, {})
    try:
        df = pyhudi.sql(spark, "SELECT id, v FROM being_created")
        assert df.collect() == [] and df.columns == ["id", "v"]
        Path(entry.location, "part-0.parquet").write_bytes(b"not a table")   # data but no hoodie.properties
        with pytest.raises(NotAHudiTableError, match="hoodie.properties is missing"):
            pyhudi.sql(spark, "SELECT id, v FROM being_created").collect()
    finally:
        spark.sql("DROP TABLE IF EXISTS default.being_created")
