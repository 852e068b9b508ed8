"""rollback_to_instant, savepoints and restore on copy-on-write and merge-on-read tables: Hudi's instants
(Avro plans/metadata), the rows afterwards, and hudi-rs agreeing after each step."""

from __future__ import annotations

import io

import fastavro
import pytest

import pyhudi
from pyhudi.errors import TimelineError
from pyhudi.commit.timeline_metadata import savepointed_files
from pyhudi.table import HudiTable
from support import assert_same_rows_as_hudi_rs, hudi_rs_read, rows, times


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, region string")


def _options(name, table_type):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.table.type": table_type}


def _state(spark, path):
    return sorted((r["id"], r["name"]) for r in pyhudi.read(spark, path).select("id", "name").collect())


def _avro(path):
    return list(fastavro.reader(io.BytesIO(path.read_bytes())))[0]


def _timeline_files(path):
    return sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file())


def _data_files(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and ".hoodie" not in p.parts
                  and not p.name.startswith(".hoodie_partition"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rollback_savepoint_restore(spark, tmp_path, table_type):
    path = tmp_path / "t"
    options = _options("rb", table_type)
    hoodie = path / ".hoodie"
    w1 = pyhudi.write(_df(spark, [(i, "v1", 1, "eu" if i % 2 else "us") for i in range(6)]), path, options).instant_time
    w2 = pyhudi.write(_df(spark, [(0, "v2", 2, "us"), (1, "v2", 2, "eu")]), path, options).instant_time
    after_w2 = _state(spark, path)
    files_after_w2 = _data_files(path)

    assert pyhudi.create_savepoint(spark, path, w2, "alice", "before w3").time == str(w2)
    meta = _avro(hoodie / f"{w2}.savepoint")
    assert meta["savepointedBy"] == "alice" and meta["comments"] == "before w3"
    assert set(meta["partitionMetadata"]) == {"eu", "us"}
    table = HudiTable.load(str(path))
    pinned = savepointed_files(table.storage, table.timeline())
    latest = {f.path for s in table.view().latest_slices() for f in ([s.base_file] if s.base_file else [])
              + s.log_files}
    assert pinned == latest and pinned <= set(files_after_w2)
    assert (hoodie / f"{w2}.savepoint.inflight").exists()

    w3 = pyhudi.write(_df(spark, [(2, "v3", 3, "us"), (7, "v3", 3, "eu")]), path, options).instant_time
    assert pyhudi.rollback_to_instant(spark, path, w3).rolled_back == [str(w3)]
    assert _state(spark, path) == after_w2
    assert _data_files(path) == files_after_w2
    rollbacks = [n for n in _timeline_files(path) if n.endswith(".rollback")]
    assert len(rollbacks) == 1 and not any(n.startswith(w3) for n in _timeline_files(path))
    rb_meta = _avro(hoodie / rollbacks[0])
    assert rb_meta["commitsRollback"] == [w3] and rb_meta["totalFilesDeleted"] >= 2
    assert rb_meta["instantsRollback"][0]["commitTime"] == w3
    plan = _avro(hoodie / rollbacks[0].replace(".rollback", ".rollback.requested"))
    assert plan["instantToRollback"]["commitTime"] == w3 and plan["RollbackRequests"]
    assert_same_rows_as_hudi_rs(spark, path, min_columns=6)

    # later writes (and, on MOR, a compaction), then back to the savepoint
    pyhudi.write(_df(spark, [(3, "v4", 4, "eu"), (8, "v4", 4, "us")]), path, options)
    if table_type == "MERGE_ON_READ":
        assert pyhudi.compact(spark, path)
    pyhudi.write(_df(spark, [(4, "v5", 5, "us")]), path, options)
    assert times(pyhudi.show_savepoints(spark, path)) == times([w2])
    assert pyhudi.restore_to_savepoint(spark, path, w2).instant.action == "restore"
    assert _state(spark, path) == after_w2
    assert _data_files(path) == files_after_w2
    restores = [n for n in _timeline_files(path) if n.endswith(".restore")]
    assert len(restores) == 1
    restore_meta = _avro(hoodie / restores[0])
    assert len(restore_meta["instantsToRollback"]) == (3 if table_type == "MERGE_ON_READ" else 2)
    assert _avro(hoodie / restores[0].replace(".restore", ".restore.requested"))["savepointToRestoreTimestamp"] == w2
    assert HudiTable.load(str(path)).timeline().latest_completed_write().time == w2
    assert_same_rows_as_hudi_rs(spark, path, min_columns=6)

    # the table keeps working after a restore; the savepoint can be removed
    pyhudi.write(_df(spark, [(9, "v6", 6, "eu")]), path, options)
    assert (9, "v6") in _state(spark, path)
    assert pyhudi.delete_savepoint(spark, path, w2) is None
    assert pyhudi.show_savepoints(spark, path) == []
    assert not (hoodie / f"{w2}.savepoint").exists() and not (hoodie / f"{w2}.savepoint.inflight").exists()
    assert rows(hudi_rs_read(path), ["id"]) == sorted((i,) for i, _ in _state(spark, path))
    assert w1 < w2


def test_bad_rollback_and_savepoint_requests_leave_table_untouched(spark, tmp_path):
    path = tmp_path / "t"
    options = _options("bad", "COPY_ON_WRITE")
    w1 = pyhudi.write(_df(spark, [(1, "a", 1, "eu")]), path, options).instant_time
    w2 = pyhudi.write(_df(spark, [(1, "b", 2, "eu")]), path, options).instant_time
    pyhudi.create_savepoint(spark, path)   # the latest commit by default
    before = _timeline_files(path)
    with pytest.raises(TimelineError, match=f"latest completed commit is {w2}"):
        pyhudi.rollback_to_instant(spark, path, w1)
    with pytest.raises(TimelineError, match="does not exist"):
        pyhudi.rollback_to_instant(spark, path, "20000101000000000")
    with pytest.raises(TimelineError, match="savepointed commit"):
        pyhudi.rollback_to_instant(spark, path, w2)
    with pytest.raises(TimelineError, match="no savepoint at that instant"):
        pyhudi.restore_to_savepoint(spark, path, w1)
    with pytest.raises(TimelineError, match="no savepoint"):
        pyhudi.delete_savepoint(spark, path, w1)
    with pytest.raises(TimelineError, match="already savepointed"):
        pyhudi.create_savepoint(spark, path, w2)
    assert _timeline_files(path) == before
    pending = "29990101000000000"
    (path / ".hoodie" / f"{pending}.commit.requested").write_bytes(b"")
    with pytest.raises(TimelineError, match="state REQUESTED"):
        pyhudi.create_savepoint(spark, path, pending)
    (path / ".hoodie" / f"{pending}.commit.requested").unlink()
    assert _timeline_files(path) == before
    assert _state(spark, path) == [(1, "b")]


class _Crash(Exception):
    pass


def test_restore_interrupted_mid_rollback_is_finished_by_the_next_writer(spark, tmp_path, monkeypatch):
    """A restore killed right after it unpublished a commit (its completed file, holding the write stats, is gone)
    was re-planned from that missing file and every later write failed (FileNotFoundError). The markers it leaves
    before unpublishing name the files, so the next writer finishes the restore."""
    from file_audit import CLEAN, leftovers
    from pyhudi.services import rollback as rollback_module

    path = tmp_path / "mor"
    opts = {**_options("restore_crash", "MERGE_ON_READ"), "hoodie.parquet.small.file.limit": "0"}  # updates: logs
    pyhudi.write(_df(spark, [(1, "a", 1, "p1"), (2, "b", 1, "p2")]), path, opts)
    saved = pyhudi.create_savepoint(spark, path)
    at_savepoint = set(_data_files(path))
    pyhudi.write(_df(spark, [(1, "c", 2, "p1"), (3, "d", 2, "p1")]), path, opts)      # log files of a delta commit
    pyhudi.write(_df(spark, [(2, "e", 3, "p2"), (4, "f", 3, "p2")]), path, opts)

    def crash(name):
        if name == "rollback.after_instant_deleted":
            raise _Crash(name)

    monkeypatch.setattr(rollback_module, "crash_point", crash)
    with pytest.raises(_Crash):
        pyhudi.restore_to_savepoint(spark, path, saved)
    monkeypatch.undo()
    last = str(pyhudi.write(_df(spark, [(5, "g", 4, "p1")]), path, opts))   # it finishes the restore first
    assert _state(spark, path) == [(1, "a"), (2, "b"), (5, "g")]
    # every file of the rolled-back commits is gone (their log files too, which no file name ties to them)
    table = HudiTable.load(str(path))
    stats = table.timeline().read_metadata(table.timeline().find(last))["partitionToWriteStats"]
    assert set(_data_files(path)) == at_savepoint | {s["path"] for ss in stats.values() for s in ss}
    assert_same_rows_as_hudi_rs(spark, path, 3)
    assert leftovers(str(path)) == CLEAN
    timeline = HudiTable.load(str(path)).timeline()
    assert [i.action for i in timeline.completed(["restore"])] == ["restore"]


# Every write cleans (1 commit retained) and archives (2..3 commits kept): the rollbacks below reach back past
# cleaned file versions and archived commits.
_SHORT_HISTORY = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
                  "hoodie.keep.max.commits": "3"}


def _write(spark, path, options, keys, ts, operation="insert"):
    records = [(k, f"n{k}_{ts}", ts, f"p{k % 2}") for k in sorted(keys)]
    return str(pyhudi.write(_df(spark, records), path,
                            {**options, "hoodie.datasource.write.operation": operation}))


def test_rollback_refused_when_clean_removed_what_it_falls_back_to_past_archived_commits(spark, tmp_path):
    """Rolling back the second insert would fall back to file versions of archived commits that the cleaner
    deleted: refused, table unchanged (it used to roll back and leave the table empty; long model-based
    profile)."""
    from pyhudi.services.rollback import RollbackError

    path = str(tmp_path / "t")
    options = {**_options("rbc", "COPY_ON_WRITE"), **_SHORT_HISTORY}
    _write(spark, path, options, {0, 3}, 1)
    _write(spark, path, options, {1}, 2)
    merged = _write(spark, path, options, {2, 4, 7}, 3)     # merged into both partitions' small files
    deleted = _write(spark, path, options, {2, 3, 7}, 4, "delete")
    assert pyhudi.rollback_to_instant(spark, path, deleted)
    timeline = HudiTable.load(path).timeline()
    assert [i.time for i in timeline.completed_writes()] == [merged]   # the first two are archived
    before = _state(spark, path)
    assert [k for k, _ in before] == [0, 1, 2, 3, 4, 7]
    with pytest.raises(RollbackError, match=r"(?s)file slices the table would fall back to are gone.*clean"):
        pyhudi.rollback_to_instant(spark, path, merged)
    assert _state(spark, path) == before
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_rollback_of_the_last_commit_on_the_active_timeline_is_refused(spark, tmp_path):
    """Readers count archived commits' files as committed because they are older than the first write on the
    active timeline; rolling back the only write left there would make the table read empty: refused. (Copy-on-
    write: a merge-on-read table keeps its delta commits since the last compaction on the active timeline.)"""
    from pyhudi.services.rollback import RollbackError

    path = str(tmp_path / "t")
    options = {**_options("rbl", "COPY_ON_WRITE"), **_SHORT_HISTORY,
               "hoodie.datasource.write.partitionpath.field": "region"}
    instants = [str(pyhudi.write(_df(spark, [(n, f"v{n}", n, f"r{n}")]), path, options)) for n in range(5)]
    active = [i.time for i in HudiTable.load(path).timeline().completed_writes()]
    assert active == instants[-len(active):] and len(active) < 5   # the first commits are archived
    for instant in reversed(active[1:]):
        assert pyhudi.rollback_to_instant(spark, path, instant)
    before = _state(spark, path)
    assert before == [(n, f"v{n}") for n in range(5 - len(active) + 1)]
    with pytest.raises(RollbackError, match="only commit left on the active timeline"):
        pyhudi.rollback_to_instant(spark, path, active[0])
    assert _state(spark, path) == before
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_rollback_of_blocks_inside_a_shared_log_file_records_it_as_java_does(spark, tmp_path):
    """A failed delta commit whose blocks went into a log file that holds a committed commit's blocks too (Java
    0.x appends to a file slice's open log): the rollback appends a ROLLBACK block there, and its metadata names the
    file in rollbackLogFiles (size after) and logFilesFromFailedCommit (size before), maps Java always writes, and
    the rolled-back delete is undone."""
    from pyhudi.commit.instant_commit import InstantCommit
    from pyhudi.commit.markers import create_marker
    from pyhudi.file_group.log_block.blocks import delete_block
    from pyhudi.file_group.log_file import append_log_blocks
    from pyhudi.services.rollback import rollback
    from pyhudi.timeline import new_instant_time

    path = tmp_path / "t"
    options = {**_options("shared", "MERGE_ON_READ"), "hoodie.parquet.small.file.limit": "0"}
    pyhudi.write(_df(spark, [(1, "a", 1, "eu"), (2, "a", 1, "eu")]), path, options)
    pyhudi.write(_df(spark, [(1, "b", 2, "eu")]), path, options)
    (log,) = sorted((path / "eu").glob(".*.log.*"))
    table = HudiTable.load(str(path))
    failed = InstantCommit.begin(table.storage, new_instant_time(after=table.timeline().instants[-1].time),
                                 "deltacommit")
    failed.start()
    create_marker(table.storage, failed.instant_time, f"eu/{log.name}", "APPEND")
    size_before = append_log_blocks(table.storage.fs, str(log), [delete_block([("2", "eu", 0)],
                                                                              failed.instant_time)])
    assert size_before > 0

    table = HudiTable.load(str(path))
    metadata = rollback(table, table.timeline().find(failed.instant_time))
    partition = metadata.partition_metadata["eu"]
    assert partition.success_delete_files == [] and partition.failed_delete_files == []
    assert partition.rollback_log_files == {str(log): log.stat().st_size}
    assert partition.log_files_from_failed_commit == {str(log): size_before}
    assert log.stat().st_size > size_before
    (rollback_file,) = (path / ".hoodie").glob("*.rollback")
    stored = _avro(rollback_file)["partitionMetadata"]["eu"]
    assert list(stored) == ["partitionPath", "successDeleteFiles", "failedDeleteFiles", "rollbackLogFiles",
                            "logFilesFromFailedCommit"]
    assert _state(spark, path) == [(1, "b"), (2, "a")]
    assert rows(hudi_rs_read(path), ["id", "name"]) == [(1, "b"), (2, "a")]
