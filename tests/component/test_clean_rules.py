"""Cleaner rules (issue 15 items 3 and 8): the NUM_COMMITS clean trigger (hoodie.clean.max.commits),
hoodie.clean.async, KEEP_LATEST_BY_HOURS and which partitions incremental cleaning lists."""

from __future__ import annotations

import threading
import warnings
from datetime import timedelta
from pathlib import Path

import pytest

import pyhudi
from pyhudi import timeline as tl
from pyhudi.errors import ConfigError
from pyhudi.file_group.naming import parse_base_file_name
from pyhudi.services.clean import background as async_clean
from pyhudi.services.clean import run as clean_service
from pyhudi.services.clean import plan as clean_planner
from pyhudi.table import HudiTable
from pyhudi.timeline import CLEAN
from support import hudi_rs_read, rows


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, part string")


def _options(name, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.parquet.small.file.limit": "0", "hoodie.clean.automatic": "false", **extra}


def _base_instants(path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for file in Path(path).rglob("*.parquet"):
        parsed = parse_base_file_name(file.name)
        if parsed and ".hoodie" not in file.parts:
            out.setdefault(file.parent.name, set()).add(parsed[2])
    return out


def _cleans(path) -> list[str]:
    return [i.time for i in HudiTable.load(str(path)).timeline().completed([CLEAN])]


# --- hoodie.clean.trigger.strategy = NUM_COMMITS, hoodie.clean.max.commits ------------------------------------
def test_clean_is_scheduled_every_max_commits(spark, tmp_path):
    path = tmp_path / "trigger"
    opts = _options("trigger", **{"hoodie.clean.automatic": "true", "hoodie.cleaner.commits.retained": "1",
                                  "hoodie.clean.max.commits": "3"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the trigger's keys are Hudi's: no "unknown option" warning
        commits = [str(pyhudi.write(_df(spark, [(1, f"a{i}", i, "p1")]), path, opts)) for i in range(6)]
    # cleans after the 3rd and the 6th commit only (with max.commits=1: after the 3rd, 4th, 5th and 6th)
    cleans = _cleans(path)
    assert len(cleans) == 2, cleans
    assert commits[2] < cleans[0] < commits[3] and cleans[1] > commits[5]
    assert _base_instants(path) == {"p1": {commits[4], commits[5]}}
    # as HoodieCleaner (pyhudi services): no commit since the last clean, nothing is scheduled even when due
    c7 = str(pyhudi.write(_df(spark, [(1, "a6", 6, "p1")]), path, {**opts, "hoodie.clean.automatic": "false"}))
    assert clean_service.clean(spark, path, {"hoodie.cleaner.commits.retained": "1", "hoodie.clean.max.commits": "2"},
                               respect_trigger=True) is None
    # an explicit clean plans what is due (as an explicit compaction schedule ignores the inline trigger)
    assert pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "1",
                                      "hoodie.clean.max.commits": "2"}).earliest_commit_to_retain == str(c7)
    with pytest.raises(ConfigError, match="hoodie.clean.max.commits"):
        pyhudi.write(_df(spark, [(1, "x", 9, "p1")]), path, {**opts, "hoodie.clean.max.commits": "-1"})
    with pytest.raises(ConfigError, match="hoodie.clean.trigger.strategy"):
        pyhudi.write(_df(spark, [(1, "x", 9, "p1")]), path, {**opts, "hoodie.clean.trigger.strategy": "TIME"})


# --- hoodie.clean.async -----------------------------------------------------------------------------------------
def test_async_clean_runs_beside_the_write_and_is_joined(spark, tmp_path, monkeypatch):
    path = tmp_path / "async"
    opts = _options("async", **{"hoodie.cleaner.commits.retained": "1"})
    commits = [str(pyhudi.write(_df(spark, [(1, f"a{i}", i, "p1")]), path, opts)) for i in range(3)]
    threads = []
    real = clean_service.clean_after_commit

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(clean_service, "clean_after_commit", spy)
    async_opts = {**opts, "hoodie.clean.automatic": "true", "hoodie.clean.async": "true"}
    result = pyhudi.write(_df(spark, [(1, "a3", 3, "p1")]), path, async_opts)
    assert result.failed_services == []
    assert threads and threads[0].startswith("pyhudi-async-clean")         # not the writer's thread
    assert not async_clean.is_running(Path(path).as_uri()) and not async_clean.is_running(str(path))
    # the clean planned before this write: retained 1 of the 3 earlier commits
    assert len(_cleans(path)) == 1
    assert _base_instants(path)["p1"] == {commits[1], commits[2], str(result)}

    # an error of the background clean is reported by the write (a warning and failed_services), not lost
    def broken(*args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr(clean_service, "clean_after_commit", broken)
    with pytest.warns(UserWarning, match="clean after commit .* failed: OSError: disk gone"):
        result = pyhudi.write(_df(spark, [(1, "a4", 4, "p1")]), path, async_opts)
    assert result.failed_services == ["clean"]
    assert rows(pyhudi.read(spark, str(path)), ["id", "name"]) == [(1, "a4")]


def test_background_clean_is_joined_at_process_exit(tmp_path):
    """A background clean nobody joined is waited for when the process ends, and its error printed."""
    import subprocess
    import sys
    script = tmp_path / "exit.py"
    done = tmp_path / "done"
    script.write_text(
        "import time\n"
        "from pyhudi.services.clean import background as async_clean\n"
        f"def slow():\n    time.sleep(1.5)\n    open({str(done)!r}, 'w').write('ok')\n"
        "def bad():\n    raise RuntimeError('clean broke')\n"
        "async_clean.start('file:///t1', slow)\n"
        "async_clean.start('file:///t2', bad)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert done.read_text() == "ok"
    assert "background clean (hoodie.clean.async) of the table at file:///t2 failed: RuntimeError: clean broke" \
        in out.stderr


# --- KEEP_LATEST_BY_HOURS --------------------------------------------------------------------------------------
def _write_at(spark, monkeypatch, path, opts, hours_ago: list[float], zone_now):
    """One commit per entry, each with its instant time `hours ago` on the table's clock."""
    monkeypatch.setattr(tl.instant_time, "_last_instant", ["0"])     # this process's floor would push the times to now
    commits = []
    for i, hours in enumerate(hours_ago):
        monkeypatch.setattr(tl.instant_time, "now_in_zone", lambda zone, h=hours: zone_now(zone) - timedelta(hours=h))
        commits.append(str(pyhudi.write(_df(spark, [(1, f"a{i}", i, "p1")]), path, opts)))
    monkeypatch.setattr(tl.instant_time, "now_in_zone", zone_now)
    return commits


def test_keep_latest_by_hours(spark, tmp_path, monkeypatch):
    path = tmp_path / "hours"
    opts = _options("hours", **{"hoodie.table.timeline.timezone": "UTC"})
    commits = _write_at(spark, monkeypatch, path, opts, [30, 20, 10, 1], tl.now_in_zone)
    by_hours = {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS"}
    # 25 hours: the earliest commit to retain is the one 20 h ago; the slice before it (30 h) is still read
    assert pyhudi.clean(spark, path, {**by_hours, "hoodie.cleaner.hours.retained": "25"}) is None
    # 15 hours: retain the commit 10 h ago and the slice before it (20 h); the 30 h slice goes
    meta = pyhudi.clean(spark, path, {**by_hours, "hoodie.cleaner.hours.retained": "15"})
    assert meta.metadata["earliestCommitToRetain"] == commits[2] and meta.metadata["totalFilesDeleted"] == 1
    assert _base_instants(path) == {"p1": set(commits[1:])}
    assert rows(pyhudi.read(spark, str(path), {"as.of.instant": commits[1]}), ["id", "name"]) == [(1, "a1")]
    assert rows(hudi_rs_read(path), ["id", "name"]) == [(1, "a3")]


# --- incremental cleaning (hoodie.cleaner.incremental.mode) -----------------------------------------------------
def test_incremental_cleaning_lists_only_partitions_written_since_the_last_clean(spark, tmp_path, monkeypatch):
    """Hudi's incremental mode (CleanPlanner.getPartitionPathsForIncrementalCleaning) lists the partitions written
    by the commits in [last clean's earliest commit to retain, the new one): the first bound included, the second
    not; without an earlier clean, or with hoodie.cleaner.incremental.mode=false, every partition."""
    listed = []
    real = clean_planner._list_data_files

    def spy(table, timeline, partitions):
        listed.append(None if partitions is None else set(partitions))
        return real(table, timeline, partitions)

    monkeypatch.setattr(clean_planner, "_list_data_files", spy)
    path = tmp_path / "incr"
    opts = _options("incr")
    retained = {"hoodie.cleaner.commits.retained": "1"}

    def write(*parts):
        return str(pyhudi.write(_df(spark, [(i, f"{p}{len(listed)}", 1, p) for i, p in enumerate(parts)]),
                                path, opts))

    _, _, c3 = write("A", "B"), write("A"), write("E")
    first = pyhudi.clean(spark, path, retained)
    assert first.metadata["earliestCommitToRetain"] == c3 and listed == [None]        # no earlier clean: everything
    c4, _, c6 = write("A"), write("C"), write("D")
    second = pyhudi.clean(spark, path, retained)
    assert second.metadata["earliestCommitToRetain"] == c6
    assert listed[1] == {"E", "A", "C"}          # c3 (the last clean's retained commit), c4, c5; not B, not D (c6)
    assert set(second.metadata["partitionMetadata"]) == {"A"} and _base_instants(path)["A"] == {c4}
    write("A")
    write("A")
    pyhudi.clean(spark, path, {**retained, "hoodie.cleaner.incremental.mode": "false"})
    assert listed[2] is None
    assert rows(pyhudi.read(spark, str(path)), ["part"]) == [("A",), ("B",), ("C",), ("D",), ("E",)]
