"""The example dbt project (integration/example) end to end, as integration/run_example.py runs it, with hudi-rs
reading the tables it leaves: a MOR fact table upserted by two batches and compacted, a day-partitioned
insert_overwrite table, a COW dimension rebuilt on its own timeline, and a snapshot with history."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from support import check_example_tables

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

    check_example_tables(lambda table: _location(spark, schema, table))
