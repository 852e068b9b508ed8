"""The upsert benchmark's harness (integration/bench) runs end to end on a tiny table: base table, one timed
upsert from the restored base, the row count after it, and the measurements the report prints."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "integration" / "bench"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCH))


@pytest.mark.spark
def test_harness_times_a_pyhudi_upsert_and_reports_its_work(spark, bench, tmp_path):
    data = bench.bench_data.generate(str(tmp_path), 2000, 2000, "time")
    info = bench.bench_data.info(data)
    assert (info["updates"], info["inserts"]) == (20, 2)

    result = bench.run_system("cow-bloom", data, str(tmp_path / "work"), runs=1, spark=spark)

    assert result["rows_after"] == 2000 + 2          # updates replaced rows, the new keys were added
    (run,) = result["runs"]
    assert run["seconds"] > 0 and run["bytes_written"] > 0
    assert run["rows_updated"] == 20 and run["rows_inserted"] == 2
    assert 1 <= run["files_rewritten"] <= 20         # one base file per date partition at most
    assert run["spark"]["jobs"] >= 1 and run["spark"]["wall"] >= run["spark"]["in_jobs"]
    stats = run["index_stats"]
    assert stats["index_type"] == "BLOOM" and stats["candidate_files"] >= stats["confirmed_files"] >= 1
    report = bench.table([{**result, "alias": "cow-bloom"}], "smoke")
    assert "pyhudi COW+BLOOM" in report


def test_peers_run_when_installed(bench, tmp_path):
    pytest.importorskip("deltalake")
    data = bench.bench_data.generate(str(tmp_path), 2000, 2000, "uuid")
    result = bench.run_system("delta", data, str(tmp_path / "work"), runs=1)
    assert result["rows_after"] == 2002
    assert result["runs"][0]["rows_updated"] == 20 and result["runs"][0]["rows_inserted"] == 2
