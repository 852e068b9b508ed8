"""Services delete only what is theirs (issue 13): plans naming paths outside the table are refused, a clean of a
dropped partition leaves a nested live partition alone, a rollback the cleaner made unsafe is refused, and an
unreadable log file is never deleted on a guess. Each time the table is left as it was and hudi-rs agrees."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import pyhudi
from pyhudi.timeline import avro_record as avro
from pyhudi.timeline.avro_record import CLEANER_PLAN_SCHEMA
from pyhudi.errors import CorruptFileError, TimelineError
from pyhudi.services.rollback import plan_rollback
from pyhudi.table import HudiTable
from pyhudi.timeline import CLEAN, ROLLBACK, Instant, State, create_requested, new_instant_time
from support import assert_same_rows_as_hudi_rs, hudi_rs_read, rows

NO_AUTO = {"hoodie.clean.automatic": "false"}


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, part string")


def _options(name, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.parquet.small.file.limit": "0", **NO_AUTO, **extra}


def _hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _same_latest_as_hudi_rs(spark, path):
    """The latest snapshot reads the same in pyhudi and hudi-rs (history before a clean is gone by design)."""
    columns = ["_hoodie_record_key", "_hoodie_commit_time", "id", "name", "ts", "part"]
    assert rows(pyhudi.read(spark, path), columns) == rows(hudi_rs_read(path), columns)


def _ids(spark, path):
    return sorted(r["id"] for r in pyhudi.read(spark, path).select("id").collect())


def _victim(tmp_path) -> Path:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("not the table's")
    (victim / "f0_0-1-0_001.parquet").write_bytes(b"not the table's either")
    return victim


def _next_time(path) -> str:
    return new_instant_time(after=HudiTable.load(str(path)).timeline().latest_time())


# --- 13.1: plans followed outside the table -------------------------------------------------------------------
@pytest.mark.parametrize("where", ["partitionsToBeDeleted", "filePath"])
def test_clean_plan_naming_a_sibling_folder_is_refused(spark, tmp_path, where):
    path = tmp_path / "t"
    victim = _victim(tmp_path)
    pyhudi.write(_df(spark, [(1, "a", 1, "p1")]), path, _options("t"))
    base = HudiTable.load(str(path)).storage.base_path
    files = {"p1": [{"filePath": f"file://{base}/../victim/f0_0-1-0_001.parquet", "isBootstrapBaseFile": False}]}
    plan = {"earliestInstantToRetain": None, "policy": "KEEP_LATEST_FILE_VERSIONS",
            "filesToBeDeletedPerPartition": None, "version": 2,
            "filePathsToBeDeletedPerPartition": files if where == "filePath" else {},
            "partitionsToBeDeleted": ["../victim"] if where == "partitionsToBeDeleted" else [],
            "extraMetadata": {}}
    t = _next_time(path)
    create_requested(HudiTable.load(str(path)).storage, t, CLEAN, avro.to_bytes(CLEANER_PLAN_SCHEMA, plan))
    before, victim_before = _hashes(path), _hashes(victim)
    with pytest.raises(CorruptFileError) as raised:
        pyhudi.clean(spark, path, NO_AUTO)
    assert f".hoodie/{t}.clean.requested" in str(raised.value) and "victim" in str(raised.value)
    assert _hashes(victim) == victim_before and _hashes(path) == before
    assert _ids(spark, path) == [1]


def test_rollback_plan_naming_a_sibling_folder_is_refused_by_the_next_writer(spark, tmp_path):
    path = tmp_path / "t"
    victim = _victim(tmp_path)
    opts = _options("t")
    c1 = str(pyhudi.write(_df(spark, [(1, "a", 1, "p1")]), path, opts))
    table = HudiTable.load(str(path))
    base = table.storage.base_path
    plan = {"instantToRollback": {"commitTime": c1, "action": "commit"}, "version": 1,
            "RollbackRequests": [{"partitionPath": "p1", "fileId": "f0", "latestBaseInstant": c1,
                                  "filesToBeDeleted": [f"{base}/../victim/precious.txt"],
                                  "logBlocksToBeDeleted": None}]}
    t = _next_time(path)
    table.storage.create_if_absent(f".hoodie/{Instant(t, ROLLBACK, State.REQUESTED).file_name}",
                                   avro.to_bytes(avro.ROLLBACK_PLAN, plan))
    before, victim_before = _hashes(path), _hashes(victim)
    with pytest.raises(CorruptFileError) as raised:
        pyhudi.write(_df(spark, [(2, "b", 2, "p1")]), path, opts)
    assert f".hoodie/{t}.rollback.requested" in str(raised.value) and "victim/precious.txt" in str(raised.value)
    assert _hashes(victim) == victim_before
    assert {k: v for k, v in _hashes(path).items() if not k.startswith(".hoodie/")} == \
        {k: v for k, v in before.items() if not k.startswith(".hoodie/")}
    assert (path / ".hoodie" / f"{c1}.commit").exists()          # the committed instant is still there


def test_commit_metadata_path_outside_the_table_is_not_rolled_back(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("t")
    pyhudi.write(_df(spark, [(1, "a", 1, "p1")]), path, opts)
    c2 = str(pyhudi.write(_df(spark, [(2, "b", 2, "p1")]), path, opts))
    commit = path / ".hoodie" / f"{c2}.commit"
    commit.write_text(commit.read_text().replace('"path" : "p1/', '"path" : "../victim/')
                      .replace('"path": "p1/', '"path": "../victim/'))
    assert "../victim/" in commit.read_text()
    table = HudiTable.load(str(path))
    with pytest.raises(CorruptFileError, match=f"{c2}.commit"):
        plan_rollback(table, table.timeline().completed_writes()[-1])


# --- 13.2: the cleaner and nested partitions ----------------------------------------------------------------
def test_clean_of_a_dropped_partition_keeps_a_nested_live_partition(spark, tmp_path):
    path = tmp_path / "nested"
    opts = _options("nested", **{"hoodie.datasource.write.partitionpath.urlencode": "false"})
    pyhudi.write(_df(spark, [(1, "a", 1, "a"), (2, "b", 1, "a/b"), (3, "c", 1, "z")]), path, opts)
    assert (path / "a" / "b").is_dir()
    pyhudi.delete_partitions(spark, path, ["a"], opts)
    pyhudi.write(_df(spark, [(4, "d", 2, "z")]), path, opts)
    expected = rows(pyhudi.read(spark, path), ["id", "name", "part"])
    assert [r[0] for r in expected] == [2, 3, 4]
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                        "hoodie.cleaner.fileversions.retained": "1"})
    assert result.metadata["partitionMetadata"]["a"]["isPartitionDeleted"] is True
    assert not list((path / "a").glob("*.parquet")) and not (path / "a" / ".hoodie_partition_metadata").exists()
    assert list((path / "a" / "b").glob("*.parquet")) and (path / "a" / "b" / ".hoodie_partition_metadata").exists()
    assert rows(pyhudi.read(spark, path), ["id", "name", "part"]) == expected
    assert_same_rows_as_hudi_rs(spark, path, 4)


def test_clean_removes_the_folder_of_a_dropped_partition_once_empty(spark, tmp_path):
    path = tmp_path / "flat"
    opts = _options("flat")
    pyhudi.write(_df(spark, [(1, "a", 1, "x/y"), (2, "b", 1, "z")]), path, opts)
    pyhudi.delete_partitions(spark, path, ["x/y"], opts)
    pyhudi.clean(spark, path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                               "hoodie.cleaner.fileversions.retained": "1"})
    assert not (path / "x").exists()          # x/y emptied, then x (no partition of its own) too
    assert _ids(spark, path) == [2]


# --- 13.6: rollback after a clean ---------------------------------------------------------------------------
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rollback_after_the_cleaner_removed_the_previous_version_is_refused(spark, tmp_path, table_type):
    path = tmp_path / "rb"
    opts = _options("rb", **{"hoodie.clean.automatic": "true", "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                             "hoodie.cleaner.fileversions.retained": "1",
                             "hoodie.datasource.write.table.type": table_type})
    pyhudi.write(_df(spark, [(i, f"n{i}", 1, "p1") for i in range(10)]), path, opts)
    if table_type == "MERGE_ON_READ":     # a compaction replaces the slice the cleaner then removes
        pyhudi.write(_df(spark, [(1, "u", 2, "p1")]), path, opts)
        latest = pyhudi.compact(spark, path, options=opts)[0].time
        pyhudi.clean(spark, path, opts)
    else:
        latest = str(pyhudi.write(_df(spark, [(1, "u", 2, "p1")]), path, opts))
    assert HudiTable.load(str(path)).timeline().completed([CLEAN])
    before = _hashes(path)
    with pytest.raises(TimelineError, match="cannot roll back .* gone"):
        pyhudi.rollback_to_instant(spark, path, latest)
    assert _hashes(path) == before
    assert _ids(spark, path) == list(range(10))
    _same_latest_as_hudi_rs(spark, path)


def test_rollback_without_a_clean_still_works(spark, tmp_path):
    path = tmp_path / "ok"
    opts = _options("ok")
    pyhudi.write(_df(spark, [(i, f"n{i}", 1, "p1") for i in range(10)]), path, opts)
    latest = str(pyhudi.write(_df(spark, [(1, "u", 2, "p1"), (10, "new", 2, "p2")]), path, opts))
    assert pyhudi.rollback_to_instant(spark, path, latest)
    assert _ids(spark, path) == list(range(10))
    assert_same_rows_as_hudi_rs(spark, path, 4)


# --- 13.11: an unreadable log file is not deleted on a guess ----------------------------------------------------
def test_unreadable_log_file_is_not_deleted_by_a_rollback(spark, tmp_path, monkeypatch):
    from pyhudi.services import rollback as rollback_module

    path = tmp_path / "mor"
    opts = _options("mor", **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    pyhudi.write(_df(spark, [(1, "a", 1, "p1")]), path, opts)
    pyhudi.write(_df(spark, [(1, "b", 2, "p1")]), path, opts)
    latest = str(pyhudi.write(_df(spark, [(1, "c", 3, "p1")]), path, opts))
    logs = sorted((path / "p1").glob(".*.log.*"))
    assert logs

    def failing_read(*args, **kwargs):
        raise OSError("Input/output error")

    monkeypatch.setattr("pyhudi.file_group.log_file.read_log_file", failing_read)
    before = _hashes(path)
    with pytest.raises(CorruptFileError, match=r"cannot read the log file .*\.log\."):
        rollback_module.rollback(HudiTable.load(str(path)), HudiTable.load(str(path)).timeline().find(latest))
    assert _hashes(path) == before


def test_rollback_of_a_writer_that_lost_a_log_files_create_leaves_the_winners_file(spark, tmp_path):
    """Two writers of one file group may name the same new log file (v6: same base instant, version and write
    token). The first creates it (a conditional create on object stores, an exclusive one on disks); the other's
    marker names it too, and its rollback must leave the file alone: it holds only the winner's blocks."""
    from pyhudi.commit.markers import create_marker
    from pyhudi.file_group.naming import parse_log_file_name

    path = tmp_path / "mor"
    opts = _options("mor", **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    pyhudi.write(_df(spark, [(1, "a", 1, "p1"), (2, "a", 1, "p1")]), path, opts)
    pyhudi.write(_df(spark, [(1, "b", 2, "p1")]), path, opts)
    (log,) = sorted((path / "p1").glob(".*.log.*"))
    assert parse_log_file_name(log.name)
    table = HudiTable.load(str(path))
    loser = create_requested(table.storage, _next_time(path), "deltacommit")
    create_marker(table.storage, loser.time, f"p1/{log.name}", "APPEND")
    before = _hashes(path / "p1")
    plan = plan_rollback(table, loser)
    assert all(not r.files_to_delete and not r.log_blocks_to_delete for r in plan.requests or ())
    pyhudi.write(_df(spark, [(3, "c", 3, "p1")]), path, opts)   # rolls the loser back first
    assert {k: v for k, v in _hashes(path / "p1").items() if k in before} == before
    assert _ids(spark, path) == [1, 2, 3]
    _same_latest_as_hudi_rs(spark, path)


@pytest.mark.parametrize("undo", ["abort", "reconcile"])
def test_a_writer_whose_marker_names_another_writers_log_file_never_deletes_it(spark, tmp_path, undo):
    """The loser of a log file's create (its marker names the winner's file) aborts, or commits its rolled-over
    file and reconciles its markers: either way the winner's committed log file stays (both deleted it)."""
    from pyhudi.commit.instant_commit import InstantCommit
    from pyhudi.commit.markers import create_marker
    from pyhudi.timeline import CommitMetadata

    path = tmp_path / "mor"
    opts = _options("mor", **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    pyhudi.write(_df(spark, [(1, "a", 1, "p1"), (2, "a", 1, "p1")]), path, opts)
    pyhudi.write(_df(spark, [(1, "b", 2, "p1")]), path, opts)
    (log,) = sorted((path / "p1").glob(".*.log.*"))
    table = HudiTable.load(str(path))
    loser = InstantCommit.begin(table.storage, _next_time(path), "deltacommit")
    loser.start()
    create_marker(table.storage, loser.instant_time, f"p1/{log.name}", "APPEND")
    before = log.read_bytes()
    if undo == "abort":
        assert loser.abort()
    else:
        assert loser.reconcile(CommitMetadata(operation_type="UPSERT")) == []
        loser.abort()
    assert log.read_bytes() == before
    assert sorted(r["name"] for r in pyhudi.read(spark, path).select("name").collect()) == ["a", "b"]
    _same_latest_as_hudi_rs(spark, path)
