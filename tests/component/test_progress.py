"""Progress of long work (issue 16 item 5): a progress line drawn from Spark's status tracker while a write,
compaction or clean runs (where enabled), and one summary line per commit on the `pyhudi` logger."""

from __future__ import annotations

import logging
import re

import pyhudi
from pyhudi.spark import progress
from pyhudi.timeline import WriteStat
def _options(table_type="MERGE_ON_READ", **extra):
    return {"hoodie.table.name": "progress", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.table.type": table_type, **extra}


def _batch(spark, ids, ts):
    return spark.createDataFrame([(i, ts, f"p{i % 2}") for i in ids], "id long, ts long, p string")


def test_render_and_summary_lines():
    assert progress.render("upsert t", None, 3.2) == "[pyhudi] upsert t: planning (3 s)"
    line = progress.render("upsert t", (5, 10, 2), 1.0)
    assert "[##########..........] 5/10 tasks, 2 stage(s)" in line
    stats = [WriteStat(num_inserts=3, num_update_writes=2, num_deletes=1, total_write_bytes=2_500_000)] * 2
    summary = progress.commit_summary("upsert", "/t", "20260101000000000", 1.25, stats)
    assert summary == ("upsert 20260101000000000 on /t: 6 inserted, 4 updated, 2 deleted, 2 files, 5.0 MB "
                       "in 1.2 s")


def test_setting_and_environment_choose(spark, monkeypatch):
    monkeypatch.delenv("PYHUDI_PROGRESS", raising=False)
    assert not progress.progress_enabled(spark)          # not a notebook, nothing set
    spark.conf.set(progress.PROGRESS_SETTING, "true")
    try:
        assert progress.progress_enabled(spark)
        monkeypatch.setenv("PYHUDI_PROGRESS", "0")
        assert not progress.progress_enabled(spark)
    finally:
        spark.conf.unset(progress.PROGRESS_SETTING)


def test_write_compaction_and_clean_draw_progress_and_log_a_summary(spark, tmp_path, capsys, caplog, monkeypatch):
    monkeypatch.setenv("PYHUDI_PROGRESS", "1")
    monkeypatch.setattr(progress, "_INTERVAL_SECONDS", 0.02)
    caplog.set_level(logging.INFO, logger="pyhudi")
    path = str(tmp_path / "t")
    first = pyhudi.write(_batch(spark, range(40), 1), path, _options())
    second = pyhudi.write(_batch(spark, range(10), 2), path, _options())
    drawn = capsys.readouterr().err
    assert re.search(r"\[pyhudi\] (upsert|bulk_insert|insert) progress: (planning|\[[#.]{20}\] \d+/\d+ tasks)", drawn)
    summaries = [r.getMessage() for r in caplog.records if r.name == "pyhudi"]
    assert f"upsert {first.instant_time} on " in summaries[0] and ": 40 inserted, 0 updated" in summaries[0]
    assert any(f"upsert {second.instant_time} on " in s and "0 inserted, 10 updated" in s for s in summaries)

    caplog.clear()
    compacted = pyhudi.compact(spark, path)
    assert compacted
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("compaction "))
    assert f"compaction {compacted[0].time} on " in line and "2 files" in line
    assert "[pyhudi] compaction progress" in capsys.readouterr().err

    caplog.clear()
    pyhudi.write(_batch(spark, range(10), 3), path, _options(table_type="MERGE_ON_READ"))
    pyhudi.compact(spark, path)
    caplog.clear()
    cleaned = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "1"})
    assert cleaned and cleaned.metadata["totalFilesDeleted"] > 0
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("clean "))
    assert f"{cleaned.metadata['totalFilesDeleted']} files deleted, 0 failed" in line


def test_progress_is_off_by_default_outside_notebooks(spark, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PYHUDI_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "_INTERVAL_SECONDS", 0.02)
    pyhudi.write(_batch(spark, range(5), 1), str(tmp_path / "quiet"), _options("COPY_ON_WRITE"))
    assert "[pyhudi]" not in capsys.readouterr().err


def test_cli_compaction_run_prints_the_summary(spark, tmp_path, capsys):
    from pyhudi import cli
    path = str(tmp_path / "cli")
    pyhudi.write(_batch(spark, range(6), 1), path, _options())
    pyhudi.write(_batch(spark, range(6), 2), path, _options())
    pyhudi.compact(spark, path, "schedule")     # hudi-cli's `compaction run` executes pending plans
    log = logging.getLogger("pyhudi")
    level = log.level
    try:
        assert cli.main(["compaction", "run", "--path", path, "--master", "local[2]"]) == 0
    finally:
        log.handlers.clear()
        log.setLevel(level)
    err = capsys.readouterr().err
    assert re.search(r"compaction \d{17} on .*: 0 inserted, 6 updated", err), err
