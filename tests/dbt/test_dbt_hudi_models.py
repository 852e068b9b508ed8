"""Hudi behaviour of the pyhudi dbt adapter, end to end on the shared Spark session, judged by hudi-rs:
a dbt-spark Hudi model unchanged, composite-key merges, partition overwrites, a table rerun on the same timeline,
`_hoodie_*` columns selected from another Hudi table, NULL seed values, `dbt show`, and merge without a key (append).
"""

from __future__ import annotations

import os

import pytest
from dbt.tests.util import run_dbt

from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

EVENTS_1 = """id,region,ts,value,day,note
1,eu,1,10,2024-01-01,a
2,eu,1,20,2024-01-01,
3,us,1,30,2024-01-02,c
"""
EVENTS_2 = """id,region,ts,value,day,note
2,eu,2,21,2024-01-01,b2
2,apac,2,5,2024-01-03,new-region
4,us,2,40,2024-01-03,d
"""

BATCH = "{{ ref('events_' ~ var('batch', 1)) }}"

# written for dbt-spark's Hudi support; only the profile type differs
SPARK_STYLE = """
{{ config(materialized='incremental', file_format='hudi', incremental_strategy='merge', unique_key='id',
          options={'type': 'mor', 'primaryKey': 'id', 'precombineKey': 'ts'}) }}
select id, region, ts, value, day, note from %s where region <> 'apac'
""" % BATCH

COMPOSITE = """
{{ config(materialized='incremental', unique_key=['id', 'region'], table_type='cow', precombine_key='ts') }}
select id, region, ts, value, note from %s
""" % BATCH

BY_DAY = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['day'],
          unique_key='day') }}
select count(*) as n, sum(value) as total, day from %s group by day
""" % BATCH

META_SELECT = """
{{ config(materialized='table', unique_key='id') }}
select * from {{ ref('spark_style') }}
"""

DIM = """
{{ config(materialized='table', unique_key='id', table_type='cow') }}
select id, value from {{ ref('spark_style') }}
"""

NO_KEY = """
{{ config(materialized='incremental', incremental_strategy='merge') }}
select 1 as id
"""


def location(spark, schema: str, table: str) -> str:
    from pyhudi.sqlext import catalog
    return catalog.lookup(spark, None, schema, table).location


def data(spark, schema, table, columns):
    return rows(hudi_rs_read(location(spark, schema, table)), columns)


def timeline(spark, schema, table) -> list[str]:
    folder = os.path.join(location(spark, schema, table), ".hoodie")
    return sorted(f for f in os.listdir(folder) if f[:1].isdigit() and "." in f)


class TestHudiModels:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"events_1.csv": EVENTS_1, "events_2.csv": EVENTS_2}

    @pytest.fixture(scope="class")
    def models(self):
        return {"spark_style.sql": SPARK_STYLE, "composite.sql": COMPOSITE, "by_day.sql": BY_DAY,
                "meta_select.sql": META_SELECT, "dim.sql": DIM, "no_key.sql": NO_KEY}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "hudi_models", "seeds": {"+options": {"primaryKey": "id,region"}}}

    def test_hudi_models(self, project, spark):
        schema = project.test_schema
        run_dbt(["seed"])
        # None bindings are NULL (dbt-spark's session cursor writes the string 'None'); dates load as dates
        seed = spark.sql(f"select count_if(note is null) c, max(day) d from {schema}.events_1").first()
        assert seed.c == 1 and str(seed.d) == "2024-01-02"

        run_dbt(["run", "--vars", "{batch: 1}", "--exclude", "no_key"])
        run_dbt(["run", "--vars", "{batch: 2}", "--exclude", "no_key"])

        # dbt-spark style model: MOR table, upserts by id
        props = open(os.path.join(location(spark, schema, "spark_style"), ".hoodie", "hoodie.properties")).read()
        assert "hoodie.table.type=MERGE_ON_READ" in props and "hoodie.table.recordkey.fields=id" in props
        assert data(spark, schema, "spark_style", ["id", "value", "note"]) == \
            [(1, 10, "a"), (2, 21, "b2"), (3, 30, "c"), (4, 40, "d")]
        # composite key: (2, eu) updated, (2, apac) inserted
        assert data(spark, schema, "composite", ["id", "region", "value"]) == \
            [(1, "eu", 10), (2, "apac", 5), (2, "eu", 21), (3, "us", 30), (4, "us", 40)]
        # insert_overwrite: batch 2 replaced days 01 and 03, day 02 kept from batch 1
        by_day = {str(day): (n, total) for day, n, total in data(spark, schema, "by_day", ["day", "n", "total"])}
        assert by_day == {"2024-01-01": (1, 21), "2024-01-02": (1, 30), "2024-01-03": (2, 45)}
        # select * from a Hudi table: its meta columns do not become data columns (dbt-spark#791)
        meta = hudi_rs_read(location(spark, schema, "meta_select"))
        assert [c for c in meta.column_names if not c.startswith("_hoodie_")] == \
            ["id", "region", "ts", "value", "day", "note"]
        assert len(meta) == 4
        # table rerun: same table, a replace commit on its timeline instead of a new table
        instants = timeline(spark, schema, "dim")
        assert any(i.endswith(".commit") for i in instants) and any(i.endswith(".replacecommit") for i in instants)
        assert data(spark, schema, "dim", ["id", "value"]) == [(1, 10), (2, 21), (3, 30), (4, 40)]

        # dbt show fetches only what it shows
        result = run_dbt(["show", "--select", "spark_style", "--limit", "2"])
        assert len(result.results[0].agate_table.rows) == 2

        # merge without a key appends, as dbt-spark's `merge ... on false`
        run_dbt(["run", "--select", "no_key"])
        run_dbt(["run", "--select", "no_key"])
        assert data(spark, schema, "no_key", ["id"]) == [(1,), (1,)]
