"""Incremental strategies are macros dbt finds by name (adapter.get_incremental_strategy_macro): a project's own
`get_incremental_<name>_sql(arg_dict)` is a strategy `<name>` (dbt's custom incremental strategies); a name that is
neither pyhudi's nor a project macro fails before anything runs, naming the model and the strategies it may use."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

# a custom strategy, written as a dbt user would: insert only the rows whose id the table does not hold yet,
# in the target's columns (dbt's arg_dict: target_relation, temp_relation, dest_columns, ...)
APPEND_ONLY_NEW = """
{% macro get_incremental_append_only_new_sql(arg_dict) %}
  {%- set target = arg_dict['target_relation'] -%}
  {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
  insert into {{ target }} ({{ columns }})
  select {{ columns }} from {{ arg_dict['temp_relation'] }}
  where id not in (select id from {{ target }})
{% endmacro %}
"""

EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append_only_new') }}
select id, name, amount from {{ ref('src') }} where batch = {{ 2 if is_incremental() else 1 }}
"""

# a keyless table: append keeps both versions of a key, merge would replace them; the custom one keeps the first
APPENDED = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id, name, amount from {{ ref('src') }} where batch = {{ 2 if is_incremental() else 1 }}
"""

NO_SUCH_STRATEGY = """
{{ config(materialized='incremental', incremental_strategy='upsert_new') }}
select 1 as id
"""

SNOWFLAKE_STRATEGY = """
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='id') }}
select 1 as id
"""

SRC = """batch,id,name,amount
1,1,a,10
1,2,b,20
1,3,c,30
2,2,b2,21
2,3,c2,31
2,4,d,40
2,5,e,50
"""


def location(spark, schema, table):
    from pyhudi.sqlext import catalog
    return catalog.lookup(spark, None, schema, table).location


class TestCustomIncrementalStrategy:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"src.csv": SRC}

    @pytest.fixture(scope="class")
    def macros(self):
        return {"append_only_new.sql": APPEND_ONLY_NEW}

    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS, "appended.sql": APPENDED, "no_such_strategy.sql": NO_SUCH_STRATEGY,
                "snowflake_strategy.sql": SNOWFLAKE_STRATEGY}

    def test_project_macro_is_a_strategy(self, project, spark):
        schema = project.test_schema
        run_dbt(["seed"])
        run_dbt(["run", "--select", "events", "appended"])
        run_dbt(["run", "--select", "events", "appended"])

        # reference by plain Spark: batch 1, then the rows of batch 2 whose id batch 1 lacks
        src = spark.table(f"{schema}.src")
        first = src.where("batch = 1").select("id", "name", "amount")
        second = src.where("batch = 2").select("id", "name", "amount")
        expected = rows(first.unionByName(second.join(first.select("id"), "id", "left_anti")))
        assert len(expected) == 5
        path = location(spark, schema, "events")
        assert rows(hudi_rs_read(path), ["id", "name", "amount"]) == expected
        assert rows(spark.table(f"{schema}.events").select("id", "name", "amount")) == expected
        # the built-in append on the same input keeps the second versions too: the custom macro is what ran
        assert rows(hudi_rs_read(location(spark, schema, "appended")), ["id", "name", "amount"]) == \
            rows(first.unionByName(second))

    def test_unknown_strategy_names_model_and_strategies(self, project, spark):
        schema = project.test_schema
        for model, strategy, macro in (("no_such_strategy", "upsert_new", "get_incremental_upsert_new_sql"),
                                       ("snowflake_strategy", "delete+insert", "get_incremental_delete_insert_sql")):
            _, log = run_dbt_and_capture(["run", "--select", model], expect_pass=False)
            assert f"pyhudi: model {model}: unknown incremental_strategy '{strategy}'" in log
            assert "append, merge, insert_overwrite, microbatch" in log and macro in log
            # checked before anything ran: no table
            assert spark.sql(f"show tables in {schema} like '{model}'").count() == 0
