"""The benchmark's harness (integration/bench) runs every case end to end on a tiny table: base table, timed
upserts of the small and the big batch from the restored base, snapshot scans checked against the expected sum,
the measurements the report prints, and the summary table of issue 14."""

from __future__ import annotations

import importlib.util
import json
import subprocess
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


@pytest.fixture(scope="module")
def data(bench, tmp_path_factory):
    folder = bench.bench_data.generate(str(tmp_path_factory.mktemp("bench-data")), 2000, 2000, "time")
    info = bench.bench_data.info(folder)
    assert (info["updates"], info["inserts"]) == (20, 2)
    return folder


def _check_upsert_run(run, updated, inserted):
    assert run["seconds"] > 0 and run["bytes_written"] > 0
    assert run["rows_updated"] == updated and run["rows_inserted"] == inserted
    assert run["write_amplification"] == pytest.approx(run["bytes_written"] / run["batch_bytes"], rel=0.01)


@pytest.mark.spark
@pytest.mark.parametrize("alias", ["cow-bloom", "mor-bloom"])
def test_harness_times_pyhudi_upserts_and_scans(spark, bench, data, tmp_path, alias):
    result = bench.run_system(alias, data, str(tmp_path / "work"), runs=1, spark=spark, small_batch=22)

    assert result["rows_after"] == 2000 + 2          # the big batch: updates replaced rows, new keys were added
    (run,) = result["runs"]
    _check_upsert_run(run, 20, 2)
    (small,) = result["small"]["runs"]
    _check_upsert_run(small, 20, 2)                  # 22 rows: 20 updates + 2 inserts, the big batch's shape
    assert result["small"]["batch"] == "batch-22.parquet"
    if alias == "cow-bloom":
        assert 1 <= run["files_rewritten"] <= 20     # one base file per date partition at most
    else:
        assert run["log_files"] >= 1 and run["log_rows"] >= 1   # small files take inserts and updates as merges
    assert run["spark"]["jobs"] >= 1 and run["spark"]["wall"] >= run["spark"]["in_jobs"]
    stats = run["index_stats"]
    assert stats["index_type"] == "BLOOM" and stats["candidate_files"] >= stats["confirmed_files"] >= 1

    scan = result["scan"]                            # after the big batch; the sum is checked, not just timed
    assert scan["correct"], scan
    assert scan["peer"]["correct"] is (True if alias == "cow-bloom" else None)   # MOR: base files lack the logs
    assert scan["median_seconds"] > 0 and scan["peer"]["median_seconds"] > 0
    assert scan["peer"]["label"].startswith("spark.read.parquet of the 20 base files")
    if alias == "mor-bloom":
        assert scan["log_rows"] == run["log_rows"]

    for text in (bench.table([result], "smoke"), bench.report_tables.upsert_table([result], "s", case="small"),
                 bench.report_tables.scan_table([result], "scan")):
        assert f"pyhudi {alias.upper().replace('-', '+')}" in text and "error" not in text


def test_peers_run_every_case_and_the_summary_compares(bench, data, tmp_path):
    pytest.importorskip("deltalake")
    delta = bench.run_system("delta", data, str(tmp_path / "work"), runs=1, small_batch=22)
    assert delta["rows_after"] == 2002
    _check_upsert_run(delta["runs"][0], 20, 2)
    assert delta["small"]["runs"][0]["rows_updated"] == 20
    assert delta["scan"]["correct"] and "peer" not in delta["scan"]

    # the summary's arithmetic on a made-up pyhudi result next to the measured delta-rs one
    mine = {"system": "pyhudi MOR+BLOOM", "alias": "mor-bloom", "median_seconds": 2 * delta["median_seconds"],
            "runs": [{"peak_rss_py": 100}],
            "small": {"median_seconds": 2 * delta["small"]["median_seconds"], "runs": []},
            "scan": {"median_seconds": 4.0, "correct": True, "log_rows": 20, "rows": 2002,
                     "peer": {"label": "spark.read.parquet of the 20 base files", "median_seconds": 1.0,
                              "correct": True}}}
    big = {**mine, "rows": 20000, "median_seconds": 3 * delta["median_seconds"], "runs": [{"peak_rss_py": 110}]}
    rows = bench.report_tables.summary_rows([delta, {**mine, "rows": 2000}], [big],
                                            {"updates": 20, "inserts": 2}, {"rows": 10})
    by_work = {row["work"]: row for row in rows}
    for work in ("MOR+BLOOM upsert, 22-row batch", "MOR+BLOOM upsert, 10-row batch"):   # big, small
        assert by_work[work]["ratio"] == "2.00×" and by_work[work]["peer"].startswith("delta-rs MERGE ")
        assert by_work[work]["goal"] == "≤ 1.0×" and by_work[work]["met"] is False
    scan = next(row for work, row in by_work.items() if "snapshot scan" in work)
    assert scan["ratio"] == "0.25× speed" and scan["met"] is False            # goal >= 0.5x parquet speed
    assert "(1.0% of rows in logs)" in scan["work"]
    scale = next(row for work, row in by_work.items() if "upsert at 20,000 rows" in work)
    assert scale["ratio"] == "1.50×" and scale["met"] is False                # goal <= 1.2x its small-table time
    rss = next(row for work, row in by_work.items() if "peak RSS" in work)
    assert rss["ratio"] == "1.10×" and rss["met"] is True and rss["values"] == [110, 100, pytest.approx(1.1)]
    text = bench.report_tables.summary_table(rows, "summary")
    assert "| work | pyhudi | peer | ratio | goal | met? |" in text and "**no**" in text


def test_command_line_runs_both_codecs_and_saves_the_summary(tmp_path):
    """The orchestrating process: a peer-only run (no Spark) through subprocess workers, both codecs accepted,
    a skipped part left out, the JSON report written."""
    pytest.importorskip("deltalake")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick", "--systems", "delta",
                           "--codec", "gzip,snappy", "--skip", "scan", "--small-batch", "22", "--warm", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Summary: time keys, 5,000 rows, pyhudi gzip (the targets' codec)" in proc.stdout
    (saved,) = out.glob("results-*.json")
    report = json.loads(saved.read_text())
    assert report["codecs"] == ["gzip", "snappy"] and report["cases"] == ["big", "small"] and report["warm"]
    (delta,) = report["results"]["time"]["systems"]
    assert delta["median_seconds"] > 0 and delta["small"]["median_seconds"] > 0 and "scan" not in delta
    assert set(report["results"]["time"]["summary"]) == {"gzip", "snappy"}
    bad = subprocess.run([sys.executable, str(BENCH / "run.py"), "--codec", "zstd", "--out", str(out)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown codecs ['zstd']" in bad.stderr
