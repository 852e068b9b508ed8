"""`dbt run-operation cluster` (CALL run_clustering) on an incremental Hudi model with many small files: the
model's file groups are rewritten sorted by the `order` column, hudi-rs reads the same rows, and
`run-operation show_clustering` lists the completed clustering."""

from __future__ import annotations

import os

import pytest
from dbt.tests.util import run_dbt

from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

# every run inserts new ids into new file groups (small.file.limit 0): small files in every partition
EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append', partition_by=['region'],
          options={'hoodie.parquet.small.file.limit': '0'}) }}
select id, value, region from (
  select {{ var('batch', 1) }} * 10 + 1 as id, 100 - {{ var('batch', 1) }} as value, 'eu' as region
  union all select {{ var('batch', 1) }} * 10 + 2, {{ var('batch', 1) }}, 'eu'
  union all select {{ var('batch', 1) }} * 10 + 3, {{ var('batch', 1) }} * 3, 'us')
"""


class TestClusterOperation:
    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS}

    def test_cluster_run_operation(self, project, spark):
        from pyhudi.sqlext import catalog
        from pyhudi.table import HudiTable

        for batch in range(1, 4):
            run_dbt(["run", "--vars", f"{{batch: {batch}}}"])
        path = catalog.lookup(spark, None, project.test_schema, "events").location
        before = rows(hudi_rs_read(path), ["id", "value", "region"])
        assert len(before) == 9
        # at least one small file per run and partition (the first run's CTAS is a bulk_insert under Hudi's sort
        # mode NONE: one file per write task and partition)
        assert len(HudiTable.load(path).view().latest_base_files()) >= 6

        run_dbt(["run-operation", "cluster", "--args", "{table: events, order: value}"])
        files = HudiTable.load(path).view().latest_base_files()
        assert len(files) == 2
        assert rows(hudi_rs_read(path), ["id", "value", "region"]) == before
        done = [f for f in os.listdir(os.path.join(path, ".hoodie")) if f.endswith(".replacecommit")]
        assert len(done) == 1

        run_dbt(["run-operation", "show_clustering", "--args", "{table: events}"])   # run_dbt checks success
