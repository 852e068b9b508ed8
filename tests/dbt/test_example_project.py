"""The example dbt project (integration/example) end to end, as integration/run_example.py runs it, with hudi-rs
reading the tables it leaves: a MOR fact table upserted by two batches and compacted, a day-partitioned
insert_overwrite table, a COW dimension rebuilt on its own timeline, and a snapshot with history."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


def _runner():
    spec = importlib.util.spec_from_file_location("run_example", ROOT / "integration" / "run_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _location(spark, schema, table):
    from pyhudi.sqlext import catalog
    return catalog.lookup(spark, None, schema, table).location


def test_example_project(spark, tmp_path, monkeypatch):
    project = tmp_path / "example"
    shutil.copytree(ROOT / "integration" / "example", project,
                    ignore=shutil.ignore_patterns("target", "logs"))
    schema = f"example_{os.getpid()}"
    monkeypatch.setenv("PYHUDI_EXAMPLE_SCHEMA", schema)
    monkeypatch.setenv("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

    assert _runner().run(str(project)) == schema

    fct = _location(spark, schema, "fct_orders")
    props = (Path(fct) / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.type=MERGE_ON_READ" in props and "hoodie.table.precombine.field=updated_at" in props
    # batch 2 upserted 102 and 104 and inserted 105 and 106
    assert rows(hudi_rs_read(fct), ["order_id", "status"]) == [
        (101, "placed"), (102, "shipped"), (103, "shipped"), (104, "cancelled"), (105, "placed"), (106, "placed")]
    # run-operation compact committed a compaction on the fact table's timeline
    assert any(f.endswith(".commit") for f in os.listdir(Path(fct) / ".hoodie"))

    revenue = {str(day): (orders, float(amount)) for day, orders, amount in
               rows(hudi_rs_read(_location(spark, schema, "daily_revenue")), ["order_date", "orders", "revenue"])}
    assert revenue == {"2024-01-01": (3, 42.75), "2024-01-02": (2, 42.0), "2024-01-03": (1, 5.0)}

    dim = _location(spark, schema, "dim_customers")
    assert rows(hudi_rs_read(dim), ["customer_id", "country", "orders"]) == [
        (1, "BE", 2), (2, "DE", 2), (3, "IN", 1), (4, "PL", 1)]
    assert any(f.endswith(".replacecommit") for f in os.listdir(Path(dim) / ".hoodie"))

    history = rows(hudi_rs_read(_location(spark, schema, "customers_snapshot")), ["customer_id", "country"])
    assert history == [(1, "BE"), (1, "NL"), (2, "DE"), (3, "IN"), (4, "PL")]
