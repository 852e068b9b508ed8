"""Hudi tables look like Spark data-source tables in the catalog: table comment (CREATE ... COMMENT, SET/UNSET
TBLPROPERTIES ('comment')), column comments, partition columns, provider and TBLPROPERTIES, as DESCRIBE EXTENDED and
SHOW TBLPROPERTIES through pyhudi.sql and Spark's own SHOW TABLE EXTENDED show them; reads and writes unaffected."""

from __future__ import annotations

import pytest

import pyhudi
from pyhudi.sqlext import catalog
from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark


def _describe(spark, table: str) -> list[tuple]:
    return [tuple(r) for r in pyhudi.sql(spark, f"DESCRIBE EXTENDED {table}").collect()]


def _detail(spark, table: str, key: str) -> str | None:
    found = [r[1] for r in _describe(spark, table) if r[0] == key]
    return found[0] if found else None


def _spark_information(spark, table: str) -> str:
    """Spark's own v1 SHOW TABLE EXTENDED (what dbt-spark's catalog query reads)."""
    return spark.sql(f"SHOW TABLE EXTENDED LIKE '{table}'").collect()[0]["information"]


@pytest.fixture()
def table(spark):
    name = "comments_t"
    pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name}")
    pyhudi.sql(spark, f"CREATE TABLE {name} (id INT COMMENT 'the id', name STRING, ts BIGINT, dt STRING) USING hudi "
                      "PARTITIONED BY (dt) COMMENT 'orders, it\\'s daily' "
                      "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    yield name
    pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name}")


def test_create_comment_and_column_comments(spark, table):
    assert catalog.lookup(spark, None, None, table).comment == "orders, it's daily"
    assert _detail(spark, table, "Comment") == "orders, it's daily"
    assert "Comment: orders, it's daily" in _spark_information(spark, table)
    described = _describe(spark, table)
    assert ("id", "int", "the id") in described and ("name", "string", None) in described

    pyhudi.sql(spark, f"ALTER TABLE {table} ALTER COLUMN name COMMENT 'the name'")
    assert ("name", "string", "the name") in _describe(spark, table)
    comments = {c.name: c.description for c in spark.catalog.listColumns(table)}
    assert comments["id"] == "the id" and comments["name"] == "the name"

    pyhudi.sql(spark, f"INSERT INTO {table} VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y')")
    assert rows(pyhudi.sql(spark, f"SELECT id, name, dt FROM {table}"), ["id", "name", "dt"], key="id") == \
        [(1, "a", "x"), (2, "b", "y")]
    location = catalog.lookup(spark, None, None, table).location
    assert rows(hudi_rs_read(location), ["id", "name", "dt"], key="id") == [(1, "a", "x"), (2, "b", "y")]


def test_comment_by_tblproperties(spark, table):
    pyhudi.sql(spark, f"ALTER TABLE {table} SET TBLPROPERTIES ('comment' = 'new words')")
    assert _detail(spark, table, "Comment") == "new words"
    # another property change keeps the comment (Spark's v2 ALTER drops it for Python data source tables)
    pyhudi.sql(spark, f"ALTER TABLE {table} SET TBLPROPERTIES ('hoodie.cleaner.commits.retained' = '5')")
    assert _detail(spark, table, "Comment") == "new words"
    assert "Comment: new words" in _spark_information(spark, table)
    pyhudi.sql(spark, f"ALTER TABLE {table} UNSET TBLPROPERTIES ('hoodie.cleaner.commits.retained')")
    assert _detail(spark, table, "Comment") == "new words"
    pyhudi.sql(spark, f"ALTER TABLE {table} SET TBLPROPERTIES (comment = 'unquoted key')")
    assert _detail(spark, table, "Comment") == "unquoted key"
    pyhudi.sql(spark, f"ALTER TABLE {table} UNSET TBLPROPERTIES ('comment')")
    assert _detail(spark, table, "Comment") is None
    assert "comment" not in dict(tuple(r) for r in pyhudi.sql(spark, f"SHOW TBLPROPERTIES {table}").collect())
    pyhudi.sql(spark, f"INSERT INTO {table} VALUES (1, 'a', 1, 'x')")
    assert pyhudi.sql(spark, f"SELECT count(*) AS n FROM {table}").collect()[0]["n"] == 1


def test_describe_extended_shows_partitions_and_provider(spark, table):
    described = _describe(spark, table)
    names = [r[0] for r in described]
    start = names.index("# Partition Information")
    assert described[start + 1] == ("# col_name", "data_type", "comment")
    assert described[start + 2] == ("dt", "string", None)
    assert names.index("# Detailed Table Information") > start + 2
    assert _detail(spark, table, "Provider") == "hudi"
    # as Spark's v1 DESCRIBE of a data source table: no `Partition Columns` row (the partition information above
    # shows them), properties sorted and without the reserved owner/provider keys
    assert _detail(spark, table, "Partition Columns") is None
    assert _detail(spark, table, "Table Properties") == "[preCombineField=ts, primaryKey=id, type=cow]"
    spark.sql("DROP TABLE IF EXISTS comments_pq")
    spark.sql("CREATE TABLE comments_pq (id INT COMMENT 'the id', name STRING, ts BIGINT, dt STRING) USING parquet "
              "PARTITIONED BY (dt) COMMENT 'c' TBLPROPERTIES (primaryKey = 'id')")
    theirs = [tuple(r) for r in spark.sql("DESCRIBE EXTENDED comments_pq").collect()]
    spark.sql("DROP TABLE comments_pq")
    assert [r[0] for r in described if not r[0].startswith("_hoodie_")] == [r[0] for r in theirs]
    # plain DESCRIBE: the columns and the partition information, no details
    plain = [tuple(r) for r in pyhudi.sql(spark, f"DESCRIBE {table}").collect()]
    assert ("# Partition Information", "", "") in plain and ("Provider", "hudi", "") not in plain


def test_show_tblproperties(spark, table):
    props = dict(tuple(r) for r in pyhudi.sql(spark, f"SHOW TBLPROPERTIES {table}").collect())
    assert props["primaryKey"] == "id" and props["preCombineField"] == "ts" and props["type"] == "cow"
    assert "provider" not in props and "owner" not in props   # reserved, as Spark leaves them out
    one = [tuple(r) for r in pyhudi.sql(spark, f"SHOW TBLPROPERTIES {table} ('primaryKey')").collect()]
    assert one == [("primaryKey", "id")]
    missing = pyhudi.sql(spark, f"SHOW TBLPROPERTIES {table} ('nope')").collect()
    assert "does not have property: nope" in missing[0]["value"]


def test_ctas_and_replace_comment(spark):
    pyhudi.sql(spark, "DROP TABLE IF EXISTS comments_ctas")
    pyhudi.sql(spark, "CREATE TABLE comments_ctas USING hudi PARTITIONED BY (dt) COMMENT 'first' "
                      "TBLPROPERTIES (primaryKey = 'id') AS SELECT 1 AS id, 'x' AS dt, 'n' AS name")
    assert _detail(spark, "comments_ctas", "Comment") == "first"
    described = _describe(spark, "comments_ctas")
    start = described.index(("# Partition Information", "", ""))
    assert described[start + 2] == ("dt", "string", None)
    pyhudi.sql(spark, "CREATE OR REPLACE TABLE comments_ctas USING hudi COMMENT 'second' "
                      "TBLPROPERTIES (primaryKey = 'id') AS SELECT id, name FROM comments_ctas")
    assert _detail(spark, "comments_ctas", "Comment") == "second"
    assert rows(pyhudi.sql(spark, "SELECT id, name FROM comments_ctas"), ["id", "name"], key="id") == [(1, "n")]
    pyhudi.sql(spark, "DROP TABLE comments_ctas")
