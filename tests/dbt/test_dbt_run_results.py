"""What a dbt run shows (issue 16 item 4): each Hudi model's run result carries its commit in
`adapter_response` (instant, operation, rows inserted / updated / deleted, files and bytes written), and the log
line says it; a model that commits nothing reports plain OK."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from pyhudi.table import HudiTable

pytestmark = pytest.mark.spark

SOURCE_1 = """id,ts,amount
1,1,10
2,1,20
3,1,30
"""
SOURCE_2 = """id,ts,amount
2,2,21
4,2,40
"""

MERGE = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge',
          options={'type': 'mor', 'preCombineField': 'ts'}) }}
select id, ts, amount from {{ ref('source_' ~ var('batch', 1)) }}
"""
TABLE = """
{{ config(materialized='table', unique_key='id') }}
select id, amount from {{ ref('source_1') }}
"""
VIEW = """
{{ config(materialized='view') }}
select id from {{ ref('source_1') }}
"""


def responses(results) -> dict:
    return {r.node.name: r.adapter_response for r in results}


class TestRunResultsCarryHudiCommits:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"source_1.csv": SOURCE_1, "source_2.csv": SOURCE_2}

    @pytest.fixture(scope="class")
    def models(self):
        return {"merged.sql": MERGE, "full.sql": TABLE, "plain_view.sql": VIEW}

    def test_adapter_response_has_the_commit(self, project, spark):
        run_dbt(["seed"])
        first = responses(run_dbt(["run", "--vars", "{batch: 1}"]))
        assert first["merged"]["rows_inserted"] == 3 and first["merged"]["rows_updated"] == 0
        assert first["full"]["rows_inserted"] == 3 and first["full"]["rows_affected"] == 3
        assert "hudi_instant" not in first["plain_view"] and first["plain_view"]["_message"] == "OK"

        second = responses(run_dbt(["run", "--vars", "{batch: 2}", "--select", "merged"]))
        got = second["merged"]
        assert (got["rows_inserted"], got["rows_updated"], got["rows_deleted"]) == (1, 1, 0)
        assert got["rows_affected"] == 2 and got["hudi_operation"] == "upsert"
        assert got["files_written"] >= 1 and got["bytes_written"] > 0
        # the instant is the table's latest completed commit, and the message names it
        from pyhudi.sqlext import catalog
        location = catalog.lookup(spark, None, project.test_schema, "merged").location
        latest = HudiTable.load(location).timeline().latest_completed_write().time
        assert got["hudi_instant"] == latest and latest in got["_message"]
        assert got["_message"].startswith("OK upsert ")


class TestDocsGenerateShowsHudiStats:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"source_1.csv": SOURCE_1}

    @pytest.fixture(scope="class")
    def models(self):
        return {"merged.sql": MERGE, "plain_view.sql": VIEW}

    def test_catalog_has_hudi_stats(self, project, spark):
        import json
        import os
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["docs", "generate"])
        with open(os.path.join(project.project_root, "target", "catalog.json")) as f:
            nodes = json.load(f)["nodes"]
        merged = next(n for key, n in nodes.items() if key.endswith(".merged"))
        stats = merged["stats"]
        assert stats["hudi_table_type"]["value"] == "MERGE_ON_READ"
        assert stats["hudi_record_key"]["value"] == "id"
        assert stats["hudi_files"]["value"] >= 1 and stats["bytes"]["value"] > 0
        from pyhudi.sqlext import catalog
        location = catalog.lookup(spark, None, project.test_schema, "merged").location
        latest = HudiTable.load(location).timeline().latest_completed_write()
        assert stats["hudi_last_commit"]["value"] == f"{latest.time} deltacommit"
        assert [c for c in merged["columns"]] and not any(c.startswith("_hoodie") for c in merged["columns"])
        view = next(n for key, n in nodes.items() if key.endswith(".plain_view"))
        assert "hudi_table_type" not in view["stats"]
