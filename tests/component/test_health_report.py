"""Table health report (issue 16 item 1): the model, the findings with their fix, `CALL show_table_health`, and
the HTML page rendered by a real browser (headless Chromium) with its charts."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import pyhudi
from pyhudi import report
from pyhudi.report.charts import CHARTS
from pyhudi.table import HudiTable
from support import fixture_table

pytestmark = pytest.mark.spark


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, region string")


def _options(name, table_type, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.table.type": table_type, "hoodie.clean.automatic": "false", **extra}


@pytest.fixture(scope="module")
def mor_table(spark, tmp_path_factory):
    """Two partitions, one file group each, then three upserts: three log files per file group."""
    path = tmp_path_factory.mktemp("health") / "mor"
    options = _options("mor_health", "MERGE_ON_READ")
    pyhudi.write(_df(spark, [(i, f"n{i}", 1, "us" if i % 2 else "eu") for i in range(20)]), path, options)
    for ts in (2, 3, 4):
        pyhudi.write(_df(spark, [(1, f"u{ts}", ts, "us"), (2, f"u{ts}", ts, "eu")]), path, options)
    return path


def test_model_counts_what_the_view_holds(mor_table):
    health = report.table_health(mor_table)
    view = HudiTable.load(str(mor_table)).view()
    latest = view.latest_slices()
    assert health.is_mor and health.partitions == ["eu", "us"]
    assert len(health.groups) == len(latest) == 2
    assert sorted(g.log_files for g in health.groups) == [3, 3]
    assert health.bytes_latest == sum(s.total_size for s in latest)
    assert health.partition_records == {"eu": 10, "us": 10}
    assert [c.action for c in health.commits] == ["deltacommit"] * 4
    assert [c.records_changed for c in health.commits] == [20, 2, 2, 2]
    assert health.commits[1].write_amplification == 1.0          # an update into a log writes only that record


def test_compaction_due_follows_the_threshold(mor_table):
    due = report.findings(report.table_health(mor_table, {"hoodie.compact.inline.max.delta.commits": "3"}), "t")
    assert any("compaction is due: 2 file group(s) have 3+ log files" in f.what and "run_compaction" in f.fix
               for f in due)
    calm = report.findings(report.table_health(mor_table), "t")     # Hudi's default threshold is 5
    assert not any("compaction" in f.what for f in calm)


def test_reclaimable_is_what_a_clean_then_deletes(spark, tmp_path):
    path = tmp_path / "cow"
    options = _options("cow_health", "COPY_ON_WRITE")
    pyhudi.write(_df(spark, [(i, f"n{i}", 1, "us") for i in range(10)]), path, options)
    for ts in (2, 3, 4):
        pyhudi.write(_df(spark, [(1, f"u{ts}", ts, "us")]), path, options)
    retain = {"hoodie.cleaner.commits.retained": "1"}
    before = report.table_health(path, retain)
    assert before.reclaimable_files > 0 and before.bytes_old_versions >= before.reclaimable_bytes > 0
    assert before.commits[-1].write_amplification == 10.0          # a COW update rewrites the 10-record file
    assert any("run_clean" in f.fix for f in report.findings(before, "t"))
    cleaned = pyhudi.clean(spark, path, {**options, **retain})
    assert cleaned.metadata["totalFilesDeleted"] == before.reclaimable_files
    after = report.table_health(path, retain)
    assert after.bytes_on_disk == before.bytes_on_disk - before.reclaimable_bytes
    assert after.reclaimable_files == 0 and after.bytes_latest == before.bytes_latest


def test_call_show_table_health(spark, tmp_path):
    spark.sql("DROP TABLE IF EXISTS health_sql")
    pyhudi.sql(spark, f"CREATE TABLE health_sql (id INT, v STRING, ts INT, p STRING) USING hudi PARTITIONED BY (p) "
                      f"LOCATION '{tmp_path / 'sql'}' TBLPROPERTIES (primaryKey='id', preCombineField='ts', "
                      "type='mor', hoodie.compact.inline.max.delta.commits='2', hoodie.clean.automatic='false')")
    for ts in (1, 2, 3):
        pyhudi.sql(spark, f"INSERT INTO health_sql VALUES (1, 'a{ts}', {ts}, 'x'), (2, 'b', {ts}, 'x')")
    page = tmp_path / "health.html"
    result = {(r["kind"], r["name"]): r for r in
              pyhudi.sql(spark, f"CALL show_table_health(table => 'health_sql', html_path => '{page}')").collect()}
    assert result[("metric", "partitions")]["value"] == "1"
    assert result[("metric", "active instants")]["value"].startswith("3 completed")
    compaction = [r for (kind, _), r in result.items() if kind == "finding:warn" and "compaction is due" in r["name"]]
    assert compaction and "table => 'health_sql'" in compaction[0]["fix"]
    assert page.read_text().count("<svg") >= len(CHARTS)
    spark.sql("DROP TABLE health_sql")


def test_report_on_a_java_written_fixture(tmp_path_factory):
    path = fixture_table("qs_mor_avro_v6_trips_8i3d", tmp_path_factory)
    health = report.table_health(path)
    assert health.table_type == "MERGE_ON_READ" and len(health.partitions) == 3 and len(health.groups) == 3
    assert sum(g.log_files for g in health.groups) == 1 and health.record_key == "uuid"
    assert report.render_html(health).count('<div class="chart"') == len(CHARTS)


BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(BROWSER is None, reason="headless Chromium is not installed (.ci/run installs Debian's chromium)")
def test_page_renders_in_a_real_browser(mor_table, tmp_path):
    """Chromium lays the page out and paints it: the DOM has every chart's SVG, and the screenshot holds the
    charts' blue (#1f77b4) in quantity — a page whose SVG failed to render would be text only."""
    import numpy as np
    from PIL import Image
    page = tmp_path / "report.html"
    page.write_text(report.render_html(report.table_health(mor_table), "mor_health"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([BROWSER, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    for name, _ in CHARTS:
        assert f'id="chart-{name}"' in dom and dom.count("<svg") >= len(CHARTS), name
    shot = tmp_path / "report.png"
    subprocess.run([BROWSER, *flags, f"--screenshot={shot}", "--window-size=1000,3000", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    image = Image.open(shot).convert("RGB")
    assert image.size == (1000, 3000)
    pixels = np.asarray(image).astype(int)
    blue = int((np.abs(pixels - np.array([0x1f, 0x77, 0xb4])) < 30).all(axis=2).sum())
    assert blue > 2000, f"only {blue} chart-blue pixels in the screenshot"
