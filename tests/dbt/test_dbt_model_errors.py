"""Bad model configs fail with an error naming the model, the column and the fix, and leave the table as it
was: a partition column or unique_key the select lacks, a partition_by that no longer matches the table, an
unknown incremental strategy or Hudi overwrite mode."""

from __future__ import annotations

import os

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

# one model, broken in different ways by --vars on later runs
ORDERS = """
{% set bad = var('bad', 'none') %}
{{ config(materialized='incremental', incremental_strategy='merge',
          unique_key=('nope' if bad == 'key' else 'id'),
          partition_by=(['region'] if bad == 'partition_change' else ['dt']),
          options=({'hoodie.datasource.overwrite.mode': 'sometimes'} if bad == 'mode' else {})) }}
{% if bad == 'partition' %}
select id, amount from {{ ref('src') }}
{% else %}
select id, dt, region, amount + {{ var('add', 0) }} as amount from {{ ref('src') }}
{% endif %}
"""

NEW_KEYLESS = """
{{ config(materialized='incremental', partition_by=['day']) }}
select 1 as id
"""

BAD_STRATEGY = """
{{ config(materialized='incremental', incremental_strategy='upsert') }}
select 1 as id
"""

SRC = """id,dt,region,amount
1,2024-01-01,eu,10
2,2024-01-02,us,20
"""


def location(spark, schema, table):
    from pyhudi.sqlext import catalog
    return catalog.lookup(spark, None, schema, table).location


class TestModelErrors:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"src.csv": SRC}

    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "new_keyless.sql": NEW_KEYLESS, "bad_strategy.sql": BAD_STRATEGY}

    def test_bad_configs_name_model_column_and_fix(self, project, spark):
        schema = project.test_schema
        run_dbt(["seed"])
        run_dbt(["run", "--select", "orders"])
        folder = os.path.join(location(spark, schema, "orders"), ".hoodie")
        before = sorted(os.listdir(folder))

        def fails(bad, *expected):
            _, log = run_dbt_and_capture(["run", "--select", "orders", "--vars", f"{{bad: {bad}, add: 5}}"],
                                         expect_pass=False)
            for text in ("orders",) + expected:
                assert text in log, (bad, text)
            assert sorted(os.listdir(folder)) == before, bad      # nothing written
            assert rows(hudi_rs_read(location(spark, schema, "orders")), ["id", "amount"]) == [(1, 10), (2, 20)]

        fails("partition", "partition_by column(s) dt not in the model's select", "select the column")
        fails("key", "unique_key column(s) nope not in the model's select")
        fails("partition_change", "partition_by [region] differs from the partition columns", "--full-refresh")
        fails("mode", "hoodie.datasource.overwrite.mode is 'sometimes'", "STATIC", "DYNAMIC")

        # a new table is not created when its partition column is missing
        _, log = run_dbt_and_capture(["run", "--select", "new_keyless"], expect_pass=False)
        assert "new_keyless" in log and "partition_by column(s) day not in the model's select" in log
        assert spark.sql(f"show tables in {schema} like 'new_keyless'").count() == 0

        _, log = run_dbt_and_capture(["run", "--select", "bad_strategy"], expect_pass=False)
        assert "bad_strategy" in log and "unknown incremental_strategy 'upsert'" in log

        # the good model still runs on after the failures
        run_dbt(["run", "--select", "orders", "--vars", "{add: 1}"])
        assert rows(hudi_rs_read(location(spark, schema, "orders")), ["id", "amount"]) == [(1, 11), (2, 21)]
