"""ALTER TABLE DROP PARTITION, TRUNCATE TABLE, SHOW PARTITIONS and SET/UNSET TBLPROPERTIES on Hudi tables through
pyhudi.sql: replacecommits where Hudi makes them, the rows checked against plain Spark and hudi-rs, bad input
refused with the table left as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import pyhudi
from pyhudi.errors import PyHudiError, SqlError
from support import hudi_rs_read, rows

ROWS = "SELECT CAST(id AS INT) AS id, concat('n', id) AS name, concat('d', id % 3) AS dt, " \
       "IF(id % 2 = 0, 'eu', 'us') AS region FROM range(12)"


def _location(spark, table: str) -> str:
    from pyhudi.sqlext.query import Resolver
    return Resolver(spark).entry_by_name(table).location


def _hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _latest(path: str) -> tuple[str, dict]:
    from pyhudi.table import HudiTable
    timeline = HudiTable.load(path).timeline()
    instant = timeline.completed_writes()[-1]
    return instant.action, timeline.read_metadata(instant)


def _check(spark, table: str, where: str) -> None:
    """The table holds ROWS filtered by `where` in pyhudi.sql and in hudi-rs."""
    expected = rows(spark.sql(f"SELECT * FROM ({ROWS}) WHERE {where}"), ["id", "name", "dt", "region"])
    assert rows(pyhudi.sql(spark, f"SELECT id, name, dt, region FROM {table}")) == expected
    theirs = hudi_rs_read(_location(spark, table))
    assert (rows(theirs, ["id", "name", "dt", "region"]) if theirs.num_rows else []) == expected


def _partitions(spark, text: str) -> list[str]:
    return [r[0] for r in pyhudi.sql(spark, text).collect()]


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_drop_partition_truncate_and_show_partitions(spark, table_type):
    t = f"ddlp_{table_type}"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"""CREATE TABLE {t} (id INT, name STRING, dt STRING, region STRING) USING hudi
        PARTITIONED BY (dt, region) TBLPROPERTIES (primaryKey = 'id', type = '{table_type}');
        INSERT INTO {t} {ROWS}""")
    everything = sorted({f"dt={r.dt}/region={r.region}" for r in spark.sql(ROWS).collect()})
    assert _partitions(spark, f"SHOW PARTITIONS {t}") == everything
    assert pyhudi.sql(spark, f"SHOW PARTITIONS {t}").columns == ["partition"]
    assert _partitions(spark, f"SHOW PARTITIONS {t} PARTITION (region = 'eu')") == \
        [p for p in everything if p.endswith("region=eu")]

    pyhudi.sql(spark, f"ALTER TABLE {t} DROP PARTITION (dt = 'd0', region = 'eu')")
    action, meta = _latest(_location(spark, t))
    assert (action, meta["operationType"]) == ("replacecommit", "DELETE_PARTITION")
    assert list(meta["partitionToReplaceFileIds"]) == ["dt=d0/region=eu"]
    _check(spark, t, "NOT (dt = 'd0' AND region = 'eu')")
    pyhudi.sql(spark, f"ALTER TABLE {t} DROP PARTITION (dt = 'd1')")          # a partial spec: every match
    _check(spark, t, "dt = 'd2' OR (dt = 'd0' AND region = 'us')")
    assert _partitions(spark, f"SHOW PARTITIONS {t}") == ["dt=d0/region=us", "dt=d2/region=eu", "dt=d2/region=us"]

    path = Path(_location(spark, t))
    before = _hashes(path)
    with pytest.raises(SqlError, match=rf"ALTER TABLE {t} DROP PARTITION \(dt='zz'\): no such partition "
                                       r"\(partitions: dt=d0/region=us, "):
        pyhudi.sql(spark, f"ALTER TABLE {t} DROP PARTITION (dt = 'zz')")
    with pytest.raises(SqlError, match=f"{t}: nope is not a partition column; the partition columns are dt, region"):
        pyhudi.sql(spark, f"ALTER TABLE {t} DROP PARTITION (nope = 'x')")
    pyhudi.sql(spark, f"ALTER TABLE {t} DROP IF EXISTS PARTITION (dt = 'zz')")   # nothing to do: no commit
    assert _hashes(path) == before

    pyhudi.sql(spark, f"TRUNCATE TABLE {t} PARTITION (dt = 'd2', region = 'us')")
    _check(spark, t, "(dt = 'd2' AND region = 'eu') OR (dt = 'd0' AND region = 'us')")
    pyhudi.sql(spark, f"TRUNCATE TABLE {t}")
    _check(spark, t, "false")
    assert _commits(spark, t) == []   # as Hudi: data and timeline deleted, hoodie.properties initialised again
    assert _partitions(spark, f"SHOW PARTITIONS {t}") == []
    pyhudi.sql(spark, f"INSERT INTO {t} SELECT * FROM ({ROWS}) WHERE id < 2")
    _check(spark, t, "id < 2")
    pyhudi.sql(spark, f"DROP TABLE {t}")


def _properties(spark, table: str) -> dict:
    from pyhudi.sqlext.query import Resolver
    return Resolver(spark).entry_by_name(table).properties


def _commits(spark, t):
    return pyhudi.sql(spark, f"CALL show_commits(table => '{t}', limit => 100)").collect()


def test_partition_statements_on_an_unpartitioned_table(spark):
    t = "ddlp_flat"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"CREATE TABLE {t} (id INT, name STRING) USING hudi TBLPROPERTIES (primaryKey = 'id'); "
                      f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
    assert pyhudi.sql(spark, f"SHOW PARTITIONS {t}").collect() == []   # Hudi: no rows (Spark would raise)
    with pytest.raises(SqlError, match=f"SHOW PARTITIONS {t}: the table is not partitioned"):
        pyhudi.sql(spark, f"SHOW PARTITIONS {t} PARTITION (id = 1)")
    with pytest.raises(SqlError, match="not partitioned"):
        pyhudi.sql(spark, f"ALTER TABLE {t} DROP PARTITION (id = 1)")
    pyhudi.sql(spark, f"TRUNCATE TABLE {t}")
    assert pyhudi.sql(spark, f"SELECT * FROM {t}").count() == 0
    assert hudi_rs_read(_location(spark, t)).num_rows == 0
    pyhudi.sql(spark, f"DROP TABLE {t}")


def test_tblproperties_take_effect_on_the_next_write(spark):
    t = "ddlp_props"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"CREATE TABLE {t} (id INT, name STRING) USING hudi TBLPROPERTIES (primaryKey = 'id'); "
                      f"INSERT INTO {t} VALUES (1, 'a')")
    path = _location(spark, t)
    assert _latest(path)[1]["operationType"] == "INSERT"   # INSERT INTO without an ordering field: an insert ...
    pyhudi.sql(spark, f"ALTER TABLE {t} SET TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', "
                      "hoodie.clean.automatic = 'true', 'hoodie.cleaner.commits.retained' = '1')")
    assert _properties(spark, t)["hoodie.spark.sql.insert.into.operation"] == "upsert"
    # ... until the table says upsert; and the cleaner keeps one commit
    for name in ("b", "c", "d"):
        pyhudi.sql(spark, f"INSERT INTO {t} VALUES (1, '{name}')")
        assert _latest(path)[1]["operationType"] == "UPSERT"
    assert rows(pyhudi.sql(spark, f"SELECT id, name FROM {t}")) == [(1, "d")]
    assert list((Path(path) / ".hoodie").glob("*.clean"))      # the service setting applied to these writes

    pyhudi.sql(spark, f"ALTER TABLE {t} UNSET TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation')")
    assert "hoodie.spark.sql.insert.into.operation" not in _properties(spark, t)
    pyhudi.sql(spark, f"INSERT INTO {t} VALUES (2, 'e')")
    assert _latest(path)[1]["operationType"] == "INSERT"
    pyhudi.sql(spark, f"ALTER TABLE {t} UNSET TBLPROPERTIES IF EXISTS ('no.such.key')")

    before = _properties(spark, t)
    with pytest.raises(SqlError, match=f"ALTER TABLE {t} SET TBLPROPERTIES: primaryKey is part of the table's "
                                       "identity"):
        pyhudi.sql(spark, f"ALTER TABLE {t} SET TBLPROPERTIES (primaryKey = 'name')")
    with pytest.raises(SqlError, match="UNSET TBLPROPERTIES: primaryKey is part of the table's identity"):
        pyhudi.sql(spark, f"ALTER TABLE {t} UNSET TBLPROPERTIES ('primaryKey')")
    with pytest.raises(PyHudiError, match="hoodie.cleaner.commits.retained='abc' is invalid"):
        pyhudi.sql(spark, f"ALTER TABLE {t} SET TBLPROPERTIES ('hoodie.cleaner.commits.retained' = 'abc')")
    with pytest.raises(SqlError, match="no.such.key is not set"):
        pyhudi.sql(spark, f"ALTER TABLE {t} UNSET TBLPROPERTIES ('no.such.key')")
    assert _properties(spark, t) == before and before["primaryKey"] == "id"
    pyhudi.sql(spark, f"DROP TABLE {t}")
