"""The archiver: old instants move to `.hoodie/archived` (Hudi 0.x archive log files of HoodieArchivedMetaEntry
records) down to hoodie.keep.min.commits, never past a savepoint, a pending instant or the cleaner's retained
commit; files of archived commits stay readable (pyhudi and hudi-rs) and archived instants stay listable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pyhudi
from pyhudi import errors
from pyhudi.file_group.log_block import BlockType
from pyhudi.file_group.log_file import read_log_bytes
from pyhudi.services.archive import archived_instants, read_archived_entries
from pyhudi.table import HudiTable
from pyhudi.timeline import COMMIT, State, create_requested
from support import hudi_rs_read, rows, times

COLUMNS = ["_hoodie_record_key", "_hoodie_commit_time", "id", "name", "ts", "part"]


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, part string")


def _options(name, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
            **extra}


def _same_as_hudi_rs(spark, path, as_of=None):
    options = {"as.of.instant": as_of} if as_of else None
    ours = rows(pyhudi.read(spark, path, options), COLUMNS)
    assert ours == rows(hudi_rs_read(path, as_of=as_of), COLUMNS)
    return ours


def _active_commits(path) -> list[str]:
    return [i.time for i in HudiTable.load(str(path)).timeline().completed_writes()]


def test_automatic_archive_keeps_reads_and_lists_archived_instants(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("t")
    commits = [str(pyhudi.write(_df(spark, [(0, "old", 0, "p0"), (1, "a0", 0, "p1")]), path, opts))]
    commits += [str(pyhudi.write(_df(spark, [(1, f"a{i}", i, "p1")]), path, opts)) for i in range(1, 6)]
    # each commit: clean (retained 1), then archive down to 2 when more than 3 commits are active
    assert _active_commits(path) == commits[-2:]
    archived = archived_instants(HudiTable.load(str(path)).storage)
    assert sorted({i.time for i in archived if i.action == COMMIT}) == commits[:4]
    assert {i.state for i in archived if i.time == commits[0]} == {State.REQUESTED, State.INFLIGHT, State.COMPLETED}
    assert not [f for f in (path / ".hoodie").iterdir() if f.name.startswith(commits[0])]
    # the file group written only by the archived first commit is still read (before the timeline start)
    snapshot = _same_as_hudi_rs(spark, path)
    assert snapshot == [("0", commits[0], 0, "old", 0, "p0"), ("1", commits[5], 1, "a5", 5, "p1")]
    assert _same_as_hudi_rs(spark, path, commits[4]) == [("0", commits[0], 0, "old", 0, "p0"),
                                                         ("1", commits[4], 1, "a4", 4, "p1")]
    # the cleaner's retained commit bounds archival
    clean_ecr = [e["hoodieCleanMetadata"]["earliestCommitToRetain"] for e in read_archived_entries(
        HudiTable.load(str(path)).storage) if e.get("hoodieCleanMetadata")]
    assert all(t < commits[4] for t in clean_ecr)


def test_archive_file_is_a_hudi_log_of_archived_meta_entries(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("t", **{"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"})
    commits = [str(pyhudi.write(_df(spark, [(i, f"n{i}", i, "p1")]), path, opts)) for i in range(5)]
    assert times(pyhudi.archive(spark, path, opts)) == times(commits[:3])
    files = sorted((path / ".hoodie" / "archived").glob(".commits_.archive.*"))
    assert [f.name for f in files] == [".commits_.archive.1_1-0-1"]
    (block,) = list(read_log_bytes(files[0].read_bytes(), files[0].name, decode=False))
    assert block.block_type == BlockType.AVRO_DATA_BLOCK and list(block.header) == ["SCHEMA"]
    assert json.loads(block.header["SCHEMA"])["name"] == "HoodieArchivedMetaEntry"
    entries = read_archived_entries(HudiTable.load(str(path)).storage)
    completed = [e for e in entries if e["actionState"] == "COMPLETED"]
    assert [e["commitTime"] for e in completed] == commits[:3]
    # stateTransitionTime: each state file's modification time (Hudi 0.14+), at or after the instant started,
    # and the completed file's after the requested one's (an upgrade to version 8 takes it as completion time).
    # File times come from the kernel's coarse clock, which can lag the clock the instant time was read from by
    # a tick (a few ms: CI once saw a requested file 3 ms "before" its instant)
    from datetime import datetime, timedelta

    def moment(instant: str) -> datetime:
        return datetime.strptime(instant, "%Y%m%d%H%M%S%f")

    for entry in completed:
        requested = next(e for e in entries if e["commitTime"] == entry["commitTime"]
                         and e["actionState"] == "REQUESTED")
        assert moment(requested["stateTransitionTime"]) >= moment(entry["commitTime"]) - timedelta(milliseconds=50)
        assert requested["stateTransitionTime"] <= entry["stateTransitionTime"]
        assert len(entry["stateTransitionTime"]) == 17 and entry["stateTransitionTime"].isdigit()
    stats = completed[0]["hoodieCommitMetadata"]["partitionToWriteStats"]["p1"]
    assert stats[0]["numInserts"] == 1 and stats[0]["path"].startswith("p1/")
    assert completed[0]["hoodieCommitMetadata"]["operationType"] == "UPSERT"
    assert _active_commits(path) == commits[3:]
    assert len(_same_as_hudi_rs(spark, path)) == 5
    assert pyhudi.archive(spark, path, opts) == []       # 2 active commits: nothing due


def test_archive_stops_at_savepoints_and_pending_instants(spark, tmp_path):
    path = tmp_path / "t"
    # KEEP_LATEST_FILE_VERSIONS: no earliest commit to retain widens hoodie.keep.min.commits here
    opts = _options("t", **{"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false",
                            "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"})
    commits = [str(pyhudi.write(_df(spark, [(i, f"n{i}", i, "p1")]), path, opts)) for i in range(6)]
    expected = _same_as_hudi_rs(spark, path)
    pyhudi.create_savepoint(spark, path, commits[2])
    assert times(pyhudi.archive(spark, path, opts)) == times(commits[:2])           # never the savepoint or after it
    pyhudi.delete_savepoint(spark, path, commits[2])
    table = HudiTable.load(str(path))
    pending = str(int(commits[3]) + 1)
    assert pending < commits[4]
    create_requested(table.storage, pending, COMMIT)                   # a write still running
    assert times(pyhudi.archive(spark, path, opts)) == times(commits[2:3])           # up to the last commit before it
    (path / ".hoodie" / f"{pending}.commit.requested").unlink()
    assert pyhudi.archive(spark, path, opts) == []                     # 3 active, max 3: nothing due
    assert _same_as_hudi_rs(spark, path) == expected


def test_archive_options_are_checked(spark, tmp_path):
    with pytest.raises(errors.ConfigError, match="hoodie.keep.min.commits=10.*hoodie.cleaner.commits.retained=10"):
        pyhudi.archive(spark, tmp_path, {"hoodie.keep.min.commits": "10", "hoodie.cleaner.commits.retained": "10"})
    assert not Path(tmp_path / ".hoodie").exists()
