"""The adapter's Python parts without Spark: profile, SQL literals for bindings, Hudi options of a model,
CALL rendering, Hudi detection in catalog listings."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.pyhudi.credentials import PyhudiCredentials, resolve_warehouse
from dbt.adapters.pyhudi.cursor import bind, sql_literal
from dbt.adapters.pyhudi.impl import PyhudiAdapter, _call_literal
from dbt.adapters.pyhudi.relation import is_hudi_information, provider_of


class Config(dict):
    """The `config` object models see: .get(name, default)."""


def options(config, record_key=None, defaults=None):
    return PyhudiAdapter.hudi_table_options(None, Config(config), record_key, defaults or {})


def test_profile_defaults_and_type():
    creds = PyhudiCredentials(schema="analytics")
    assert creds.type == "pyhudi"
    assert creds.master == "local[*]" and creds.method == "session"
    assert creds.server_side_parameters["spark.sql.ansi.enabled"] == "false"
    creds = PyhudiCredentials(schema="s", master="local-cluster[2,1,1024]", spark_conf={"spark.x": 1},
                              hudi_options={"hoodie.cleaner.commits.retained": 2})
    assert creds.spark_conf == {"spark.x": "1"} and creds.hudi_options == {"hoodie.cleaner.commits.retained": "2"}


def test_profile_rejects_thrift_and_hoodie_keys_in_spark_conf():
    with pytest.raises(DbtRuntimeError, match="method"):
        PyhudiCredentials(schema="s", method="thrift", host="h")
    with pytest.raises(DbtRuntimeError, match="hudi_options"):
        PyhudiCredentials(schema="s", spark_conf={"hoodie.index.type": "BLOOM"})


def test_warehouse_defaults_to_the_project_target(tmp_path):
    assert resolve_warehouse(None, str(tmp_path), "target") == str(tmp_path / "target" / "pyhudi")
    assert resolve_warehouse("wh", str(tmp_path), "target") == str(tmp_path / "wh")
    assert resolve_warehouse("/abs/wh", str(tmp_path), "target") == "/abs/wh"
    assert resolve_warehouse("s3a://b/wh", str(tmp_path), "target") == "s3a://b/wh"


def test_bindings_become_sql_literals():
    assert sql_literal(None) == "NULL"                       # dbt-spark's session mode sends 'None'
    assert sql_literal(True) == "true" and sql_literal(3) == "3" and sql_literal(2.5) == "2.5"
    assert sql_literal(decimal.Decimal("1.10")) == "1.10"
    assert sql_literal("it's a \\ test") == "'it\\'s a \\\\ test'"
    assert sql_literal(dt.date(2024, 1, 31)) == "'2024-01-31'"
    assert sql_literal(dt.datetime(2024, 1, 31, 8, 0, 1, 5)) == "'2024-01-31 08:00:01.000005'"
    assert bind("insert into t values (cast(%s as int), cast(%s as string), '100%%')", [None, "a"]) == \
        "insert into t values (cast(NULL as int), cast('a' as string), '100%')"
    assert bind("select '%'", None) == "select '%'"


def test_dbt_spark_hudi_options_are_understood():
    props = options({"unique_key": "id", "options": {"type": "MOR", "primaryKey": "id", "precombineKey": "ts"}})
    assert props == {"type": "mor", "primaryKey": "id", "preCombineField": "ts"}


def test_first_class_configs_win_over_options_and_profile_defaults():
    props = options({"unique_key": ["id", "region"], "table_type": "cow", "precombine_key": "updated_at",
                     "index_type": "bloom", "options": {"type": "mor"},
                     "hudi_options": {"hoodie.cleaner.commits.retained": 3}},
                    defaults={"hoodie.cleaner.commits.retained": 10, "hoodie.parquet.small.file.limit": 0})
    assert props == {"hoodie.cleaner.commits.retained": "3", "hoodie.parquet.small.file.limit": "0",
                     "type": "cow", "primaryKey": "id,region", "preCombineField": "updated_at",
                     "hoodie.index.type": "BLOOM"}


def test_snapshot_record_key_overrides_the_source_key():
    assert options({"unique_key": "id"}, record_key="dbt_scd_id")["primaryKey"] == "dbt_scd_id"


def test_bad_hudi_configs_fail_with_the_fix():
    with pytest.raises(CompilationError, match="name different columns"):
        options({"unique_key": "id", "options": {"primaryKey": "other"}})
    with pytest.raises(CompilationError, match="'cow' or 'mor'"):
        options({"table_type": "merge"})


def test_call_sql_uses_hudi_argument_names():
    adapter = PyhudiAdapter.__new__(PyhudiAdapter)
    sql = adapter.hudi_call_sql("run_clean", {"table": "s.orders", "clean_policy": "KEEP_LATEST_COMMITS",
                                              "retain_commits": 2, "schedule_in_line": True, "path": None})
    assert sql == ("call run_clean(table => 's.orders', clean_policy => 'KEEP_LATEST_COMMITS', "
                   "retain_commits => 2, schedule_in_line => true)")
    assert _call_literal("o'k") == "'o\\'k'"
    assert adapter.hudi_table_name("orders", "analytics") == "analytics.orders"
    assert adapter.hudi_table_name("other.orders", "analytics") == "other.orders"


def test_hudi_tables_are_recognised_in_catalog_text():
    text = "Database: s\nTable: t\nType: MANAGED\nProvider: hudi\nLocation: file:/w/s.db/t\n"
    assert provider_of(text) == "hudi" and is_hudi_information(text)
    assert not is_hudi_information("Type: MANAGED\nProvider: parquet\n")
    assert is_hudi_information("Provider: parquet\nTable Properties: [hoodie.table.name=t]\n")


# ---------------------------------------------------------------- model columns and statement options

def test_partition_columns_go_last_in_partition_by_order():
    from dbt.adapters.pyhudi.model_config import column_list, partition_last
    assert column_list("dt") == ["dt"] and column_list("a, b") == ["a", "b"] and column_list(["a", "b"]) == ["a", "b"]
    assert partition_last(["id", "ts", "dt", "amount"], ["dt"]) == ["id", "ts", "amount", "dt"]
    assert partition_last(["id", "DT", "region", "amount"], ["region", "dt"]) == ["id", "amount", "region", "DT"]
    assert partition_last(["id", "v"], None) == ["id", "v"]


def test_missing_partition_or_key_column_names_model_column_and_fix():
    from dbt.adapters.pyhudi.model_config import check_columns
    check_columns("m", ["id", "dt"], ["DT"], "id")
    with pytest.raises(CompilationError, match=r"model orders: partition_by column\(s\) dt not in the model's "
                                               r"select \(it returns id, amount\); select the column"):
        check_columns("orders", ["id", "amount"], ["dt"], "id")
    with pytest.raises(CompilationError, match=r"model orders: unique_key column\(s\) nope"):
        check_columns("orders", ["id", "dt"], "dt", ["id", "nope"])


def test_overwrite_mode_is_static_or_dynamic():
    assert options({"options": {"hoodie.datasource.overwrite.mode": "DYNAMIC"}})
    with pytest.raises(CompilationError, match="model m: hoodie.datasource.overwrite.mode is 'sometimes'"):
        PyhudiAdapter.hudi_table_options(None, Config({"tblproperties": {
            "hoodie.datasource.overwrite.mode": "sometimes"}}), None, {}, "m")


def test_statement_options_travel_in_the_leading_comments():
    from dbt.adapters.pyhudi.model_config import options_comment
    from dbt.adapters.pyhudi.session import statement_options
    comment = options_comment({"hoodie.datasource.overwrite.mode": "dynamic"})
    dbt_comment = '/* {"app": "dbt", "node_id": "model.p.m"} */\n'
    text, opts = statement_options(dbt_comment + comment + "\ninsert overwrite table t select 1")
    assert opts == {"hoodie.datasource.overwrite.mode": "dynamic"}
    assert text == dbt_comment.strip() + "\n\ninsert overwrite table t select 1"
    # only leading comments count: a string literal in the statement is data
    sql = "select '" + comment + "' as x"
    assert statement_options(sql) == (sql, None)


def test_merge_without_a_key_appends():
    """dbt-spark's merge without unique_key matches nothing (`on false`): every row is appended."""
    adapter = PyhudiAdapter.__new__(PyhudiAdapter)
    adapter.config = None
    assert adapter.hudi_merge_key(Config({})) == []
    assert adapter.hudi_merge_key(Config({"unique_key": ["id", "region"]})) == ["id", "region"]
    assert adapter.hudi_merge_key(Config({"options": {"primaryKey": "k"}})) == ["k"]
