"""A CDC table's `-cdc` log files (`.<fileId>_<instant>.log.1_<token>-cdc`, one per copy-on-write merge) under the
cleaner, rollback and restore (issue 15.2): Hudi's file system view counts them as log files of the file slice of
the commit that wrote them, so the cleaner deletes them with that slice (CleanPlanner.getCleanFileInfoForSlice),
a savepoint pins them with it, and a rollback or restore deletes the ones the rolled-back commits wrote. The CDC
query over what stays returns the same rows as before (and hudi-rs reads the same snapshot)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pyhudi
from pyhudi.commit.timeline_metadata import savepoint_metadata
from pyhudi.errors import TimelineError
from support import hudi_rs_read, rows

SCHEMA = "id long, name string, ts long, region string"
CDC_READ = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc"}


def _options(name: str) -> dict:
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.table.cdc.enabled": "true", "hoodie.clean.automatic": "false"}


def _history(spark, path: Path, name: str, commits: int) -> list[str]:
    """An insert of three keys, then `commits - 1` upserts of one existing key each: every upsert merges the one
    file group and writes one -cdc log."""
    options = _options(name)
    instants = [pyhudi.write(spark.createDataFrame([(k, "v0", 0, "us") for k in (1, 2, 3)], SCHEMA), path,
                             options).instant_time]
    for n in range(1, commits):
        batch = spark.createDataFrame([(n % 3 + 1, f"v{n}", n, "us")], SCHEMA)
        instants.append(pyhudi.write(batch, path, options).instant_time)
    return instants


def _cdc_logs(path: Path) -> dict[str, str]:
    """instant -> name of the -cdc log it wrote (one file group, so one per merging commit)."""
    out = {}
    for file in path.rglob("*-cdc"):
        if ".hoodie" not in file.parts:
            instant = file.name.split("_", 1)[1].split(".log.", 1)[0]
            assert instant not in out, f"two -cdc logs of {instant}"
            out[instant] = file.name
    return out


def _changes(spark, path: Path, begin: str = "000", end: str | None = None) -> list[tuple]:
    options = {**CDC_READ, "hoodie.datasource.read.begin.instanttime": begin}
    if end is not None:
        options["hoodie.datasource.read.end.instanttime"] = end
    return rows(pyhudi.read(spark, path, options), ["op", "ts_ms", "before", "after"])


def _assert_hudi_rs_agrees(spark, path: Path) -> None:
    columns = ["id", "name", "ts"]
    assert rows(hudi_rs_read(path), columns) == rows(pyhudi.read(spark, path), columns)


def test_clean_deletes_cdc_logs_with_their_slice(spark, tmp_path):
    path = tmp_path / "cleaned"
    t1, t2, t3, t4 = _history(spark, path, "cdc_cleaned", 4)
    logs = _cdc_logs(path)
    assert sorted(logs) == [t2, t3, t4]          # the insert into a new file group logs nothing (Hudi infers it)
    before = _changes(spark, path, begin=t3)     # the changes of t4, the retained commit: read from its -cdc log
    assert {r[1] for r in before} == {t4}

    result = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "1"})
    # KEEP_LATEST_COMMITS, 1 retained: t4 is the earliest commit to retain; its slice and the newest before it
    # (t3) stay, the slices of t1 and t2 go -- t2's with its -cdc log
    assert result and result.metadata["earliestCommitToRetain"] == t4
    after_logs = _cdc_logs(path)
    assert after_logs == {t3: logs[t3], t4: logs[t4]}
    deleted = [Path(f).name for p in result.metadata["partitionMetadata"].values() for f in p["successDeleteFiles"]]
    assert logs[t2] in deleted and not {logs[t3], logs[t4]} & set(deleted)
    assert not list(path.rglob(f"*_{t2}.parquet")) and list(path.rglob(f"*_{t3}.parquet"))
    assert _changes(spark, path, begin=t3) == before
    # t3's changes need the slice before it (t2's), which is gone: refused, not silently short
    with pytest.raises(TimelineError, match="cleaned or archived"):
        _changes(spark, path, begin=t2)
    _assert_hudi_rs_agrees(spark, path)


def test_rollback_deletes_the_cdc_logs_of_the_commit(spark, tmp_path):
    path = tmp_path / "rolled"
    t1, t2, t3 = _history(spark, path, "cdc_rolled", 3)
    logs = _cdc_logs(path)
    assert sorted(logs) == [t2, t3]
    until_t2 = _changes(spark, path, end=t2)
    assert pyhudi.rollback_to_instant(spark, path, t3)
    assert _cdc_logs(path) == {t2: logs[t2]}
    assert _changes(spark, path) == until_t2
    # a new commit after the rollback logs its own changes next to t2's
    t4 = pyhudi.write(spark.createDataFrame([(1, "again", 9, "us")], SCHEMA), path, _options("cdc_rolled")).instant_time
    assert sorted(_cdc_logs(path)) == [t2, t4]
    _assert_hudi_rs_agrees(spark, path)


def test_restore_deletes_and_savepoint_pins_cdc_logs(spark, tmp_path):
    path = tmp_path / "restored"
    t1, t2, t3, t4 = _history(spark, path, "cdc_restored", 4)
    logs = _cdc_logs(path)
    pyhudi.create_savepoint(spark, path, t2)
    from pyhudi.table import HudiTable
    pinned = savepoint_metadata(HudiTable.load(str(path)).storage, t2).partition_metadata["us"]
    assert logs[t2] in pinned.data_files            # listed with the slice it belongs to, as Hudi does
    until_t2 = _changes(spark, path, end=t2)
    assert pyhudi.restore_to_savepoint(spark, path, t2)
    assert _cdc_logs(path) == {t2: logs[t2]}                   # t3's and t4's went with their commits
    assert _changes(spark, path) == until_t2

    # two more merges, then a clean retaining 1 commit: t5's and t6's slices stay (the newest before the retained
    # commit, and the latest), t2's is savepointed and stays with its -cdc log, t1's goes (it has no -cdc log)
    options = _options("cdc_restored")
    t5 = pyhudi.write(spark.createDataFrame([(2, "v5", 5, "us")], SCHEMA), path, options).instant_time
    t6 = pyhudi.write(spark.createDataFrame([(3, "v6", 6, "us")], SCHEMA), path, options).instant_time
    logs = _cdc_logs(path)
    assert sorted(logs) == [t2, t5, t6]
    latest = _changes(spark, path, begin=t5)
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "1"})
    assert result and result.metadata["earliestCommitToRetain"] == t6
    assert not list(path.rglob(f"*_{t1}.parquet")) and list(path.rglob(f"*_{t2}.parquet"))
    assert _cdc_logs(path) == logs
    assert _changes(spark, path, begin=t5) == latest
    _assert_hudi_rs_agrees(spark, path)


@pytest.mark.skipif(os.environ.get("PYHUDI_LONG_TESTS") != "1", reason="a writer process costs a JVM start (~15 s); "
                    "PYHUDI_LONG_TESTS=1 runs it (test_crash_recovery covers failed writes in CI)")
def test_failed_write_is_rolled_back_with_its_cdc_log(spark, tmp_path):
    """A writer process dies after its merge wrote the base file and the -cdc log (both announced by markers),
    before the commit: the next writer rolls the failed write back, -cdc log included."""
    path = tmp_path / "failed"
    t1, t2 = _history(spark, path, "cdc_failed", 2)
    changes = _changes(spark, path)
    spec = json.dumps({"path": str(path), "options": _options("cdc_failed"), "actions": [["write", {"2": "lost"}]]})
    worker = Path(__file__).with_name("crash_worker.py")
    out = subprocess.run([sys.executable, str(worker), spec], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYHUDI_CRASH_AT": "write.before_complete"})
    assert out.returncode != 0 and '"action": "write"' not in out.stdout, out.stderr[-2000:]
    failed = [i for i in _cdc_logs(path) if i not in (t1, t2)]
    assert len(failed) == 1                                    # the dead writer's -cdc log is on storage
    t3 = pyhudi.write(spark.createDataFrame([(3, "next", 7, "us")], SCHEMA), path, _options("cdc_failed")).instant_time
    logs = _cdc_logs(path)
    assert sorted(logs) == [t2, t3]                            # the failed write's went with its rollback
    assert [r for r in _changes(spark, path) if r[1] != t3] == changes
    _assert_hudi_rs_agrees(spark, path)
