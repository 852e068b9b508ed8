"""The cleaner: Hudi's documented examples (KEEP_LATEST_COMMITS with 2 retained, KEEP_LATEST_FILE_VERSIONS with 1),
queries within the retention surviving a clean, savepoints, pending compactions, replaced file groups, interrupted
cleans, the automatic clean after commits, the Avro timeline files, and hudi-rs reading the cleaned tables."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import fastavro
import pytest

import pyhudi
from pyhudi import errors
from pyhudi.file_group.naming import parse_base_file_name, parse_log_file_name
from pyhudi.services.archive import archive_after_commit
from pyhudi.transaction.lock import table_lock
from pyhudi.services.clean.run import _schedule, CleanOptions, clean_after_commit, read_cleaner_plan
from pyhudi.table import HudiTable
from pyhudi.timeline import CLEAN, Instant, State, transition_to_inflight
from support import hudi_rs_read, rows, times

COLUMNS = ["_hoodie_record_key", "_hoodie_commit_time", "id", "name", "ts", "part"]
NO_AUTO = {"hoodie.clean.automatic": "false"}


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, part string")


def _options(name, **extra):
    options = {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
               "hoodie.parquet.small.file.limit": "0", **NO_AUTO}
    options.update(extra)
    return options


def _slices(path) -> dict[str, set[str]]:
    """partition -> base instants of the base files on storage."""
    out: dict[str, set[str]] = {}
    for file in Path(path).rglob("*.parquet"):
        parsed = parse_base_file_name(file.name)
        if parsed and ".hoodie" not in file.parts:
            out.setdefault(file.parent.name, set()).add(parsed[2])
    return out


def _same_as_hudi_rs(spark, path, as_of=None):
    options = {"as.of.instant": as_of} if as_of else None
    ours = rows(pyhudi.read(spark, path, options), COLUMNS)
    assert ours == rows(hudi_rs_read(path, as_of=as_of), COLUMNS)
    return ours


# --- the docs' example: five commits, four file groups (one per partition here) -----------------------------
@pytest.fixture(scope="module")
def docs_table(spark, tmp_path_factory):
    """c1: fg1, fg2, fg3 created; c2: fg2; c3: fg1, fg2; c4: fg2, fg3, fg4 created; c5: fg2, fg4 (fg2 has all
    five commits, fg4 only the latest two, as in the blog post's figure). Returns (path, commits, reads as of
    every commit)."""
    path = tmp_path_factory.mktemp("docs") / "t"
    opts = _options("docs")
    batches = [[(1, "a1", 1, "p1"), (2, "b1", 1, "p2"), (3, "c1", 1, "p3")],
               [(2, "b2", 2, "p2")],
               [(1, "a3", 3, "p1"), (2, "b3", 3, "p2")],
               [(2, "b4", 4, "p2"), (3, "c4", 4, "p3"), (4, "d4", 4, "p4")],
               [(2, "b5", 5, "p2"), (4, "d5", 5, "p4")]]
    commits = [str(pyhudi.write(_df(spark, batch), path, opts)) for batch in batches]
    reads = {c: _same_as_hudi_rs(spark, path, c) for c in commits}
    return path, commits, reads


def _copy(docs_table, tmp_path) -> Path:
    target = tmp_path / "t"
    shutil.copytree(docs_table[0], target)
    return target


def test_keep_latest_commits_two_retained_as_in_hudi_docs(spark, docs_table, tmp_path):
    path = _copy(docs_table, tmp_path)
    _, (c1, c2, c3, c4, c5), reads = docs_table
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.policy": "KEEP_LATEST_COMMITS",
                                        "hoodie.cleaner.commits.retained": "2"})
    # earliest commit to retain = the 2nd latest (c4); per file group the latest slice, slices at/after c4 and
    # the newest slice before c4 stay (what a query started after c3 reads).
    assert result.metadata["earliestCommitToRetain"] == c4
    assert _slices(path) == {"p1": {c3}, "p2": {c3, c4, c5}, "p3": {c1, c4}, "p4": {c4, c5}}
    assert result.metadata["totalFilesDeleted"] == 3
    assert sorted(result.metadata["partitionMetadata"]) == ["p1", "p2"]
    assert len(result.metadata["partitionMetadata"]["p2"]["successDeleteFiles"]) == 2
    for instant in (c3, c4, c5):     # every query a retained commit could start still reads the same rows
        assert _same_as_hudi_rs(spark, path, instant) == reads[instant]
    assert _same_as_hudi_rs(spark, path) == reads[c5]
    assert pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "2"}) is None   # nothing left to do


def test_keep_latest_file_versions_one_retained_as_in_hudi_docs(spark, docs_table, tmp_path):
    path = _copy(docs_table, tmp_path)
    _, (c1, c2, c3, c4, c5), reads = docs_table
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                        "hoodie.cleaner.fileversions.retained": "1"})
    assert _slices(path) == {"p1": {c3}, "p2": {c5}, "p3": {c4}, "p4": {c5}}
    assert result.metadata["totalFilesDeleted"] == 7 and result.metadata["earliestCommitToRetain"] == ""
    assert _same_as_hudi_rs(spark, path) == reads[c5]


def test_query_planned_before_a_clean_reads_within_the_retention(spark, docs_table, tmp_path):
    path = _copy(docs_table, tmp_path)
    _, (c1, c2, c3, c4, c5), reads = docs_table
    retained = pyhudi.read(spark, path, {"as.of.instant": c3})      # planned now, collected after the clean
    too_old = pyhudi.read(spark, path, {"as.of.instant": c2})
    pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "2"})
    assert rows(retained, COLUMNS) == reads[c3]
    with pytest.raises(Exception, match="(?i)not exist|FileNotFound|no such file"):
        too_old.collect()     # outside the retention: its file slice (fg2 at c2) is gone, as Hudi warns


def test_savepointed_slices_are_kept(spark, docs_table, tmp_path):
    path = _copy(docs_table, tmp_path)
    _, (c1, c2, c3, c4, c5), reads = docs_table
    pyhudi.create_savepoint(spark, path, c2)
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "2"})
    # the savepoint pins the latest slices as of c2: fg1@c1, fg2@c2, fg3@c1
    assert _slices(path) == {"p1": {c1, c3}, "p2": {c2, c3, c4, c5}, "p3": {c1, c4}, "p4": {c4, c5}}
    assert result.metadata["totalFilesDeleted"] == 1
    assert result.metadata["extraMetadata"] == {"savepointed_timestamps": c2}
    assert _same_as_hudi_rs(spark, path, c2) == reads[c2]


def test_clean_timeline_files_are_hudi_avro(spark, docs_table, tmp_path):
    path = _copy(docs_table, tmp_path)
    _, (c1, c2, c3, c4, c5), _ = docs_table
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "2"})
    t = result.metadata["startCleanTime"]
    meta = path / ".hoodie"
    with open(meta / f"{t}.clean.requested", "rb") as f:
        reader = fastavro.reader(f)
        assert reader.writer_schema["name"] == "org.apache.hudi.avro.model.HoodieCleanerPlan"
        (plan,) = list(reader)
    assert plan["policy"] == "KEEP_LATEST_COMMITS" and plan["version"] == 2
    assert plan["earliestInstantToRetain"] == {"timestamp": c4, "action": "commit", "state": "COMPLETED"}
    planned = sorted(Path(f["filePath"]).name for files in plan["filePathsToBeDeletedPerPartition"].values()
                     for f in files)
    assert len(planned) == 3 and all(parse_base_file_name(n) for n in planned)
    assert (meta / f"{t}.clean.inflight").read_bytes() == (meta / f"{t}.clean.requested").read_bytes()
    with open(meta / f"{t}.clean", "rb") as f:
        reader = fastavro.reader(f)
        assert reader.writer_schema["name"] == "org.apache.hudi.avro.model.HoodieCleanMetadata"
        (done,) = list(reader)
    assert done["earliestCommitToRetain"] == c4 and done["lastCompletedCommitTimestamp"] == c5
    assert sorted(n for m in done["partitionMetadata"].values() for n in m["successDeleteFiles"]) == planned
    assert done["version"] == 2


def test_interrupted_clean_is_finished_by_the_next_one(spark, docs_table, tmp_path):
    path = _copy(docs_table, tmp_path)
    _, (c1, c2, c3, c4, c5), reads = docs_table
    table = HudiTable.load(str(path))
    opts = CleanOptions.of({"hoodie.cleaner.commits.retained": "2"})
    t = _schedule(table, table.timeline(), opts)                  # crashed right after planning
    transition_to_inflight(table.storage, Instant(t, CLEAN, State.REQUESTED), b"")   # ... and after inflight
    planned = read_cleaner_plan(table.storage, t).file_paths or {}
    assert _slices(path)["p2"] == {c1, c2, c3, c4, c5}
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "2"})
    assert result.metadata["startCleanTime"] == t and result.metadata["totalFilesDeleted"] == 3
    assert sum(len(v) for v in planned.values()) == 3
    assert _slices(path)["p2"] == {c3, c4, c5}
    assert (path / ".hoodie" / f"{t}.clean").exists()
    assert _same_as_hudi_rs(spark, path) == reads[c5]


def test_archival_constraint_is_validated_before_writing(spark, tmp_path):
    path = tmp_path / "t"
    with pytest.raises(errors.ConfigError, match="hoodie.keep.min.commits=5.*hoodie.cleaner.commits.retained=5"):
        pyhudi.write(_df(spark, [(1, "a", 1, "p1")]), path, _options("t", **{
            "hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "6", "hoodie.cleaner.commits.retained": "5"}))
    assert not path.exists()
    with pytest.raises(errors.ConfigError, match="hoodie.keep.max.commits=4.*hoodie.keep.min.commits=4"):
        pyhudi.clean(spark, path, {"hoodie.keep.min.commits": "4", "hoodie.keep.max.commits": "4"})
    with pytest.raises(errors.ConfigError, match="hoodie.cleaner.policy"):
        CleanOptions.of({"hoodie.cleaner.policy": "KEEP_EVERYTHING"})


# --- merge-on-read: base + logs go together; pending compactions keep their slices ---------------------------
def _files(path) -> tuple[set[str], set[str]]:
    """(base instants of base files, base instants of log files) in partition p1."""
    bases, logs = set(), set()
    for file in (Path(path) / "p1").iterdir():
        if parse_base_file_name(file.name):
            bases.add(parse_base_file_name(file.name)[2])
        elif parse_log_file_name(file.name):
            logs.add(parse_log_file_name(file.name)[1])
    return bases, logs


def test_merge_on_read_slices_and_pending_compaction(spark, tmp_path):
    path = tmp_path / "mor"
    opts = _options("mor", **{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    d1 = str(pyhudi.write(_df(spark, [(1, "a", 1, "p1"), (2, "b", 1, "p1")]), path, opts))
    pyhudi.write(_df(spark, [(1, "a2", 2, "p1")]), path, opts)                       # log on slice d1
    (t3,) = times(pyhudi.compact(spark, path))                                              # base at t3
    d4 = str(pyhudi.write(_df(spark, [(2, "b4", 4, "p1")]), path, opts))             # logs on slice t3
    pyhudi.write(_df(spark, [(1, "a5", 5, "p1")]), path, opts)
    assert _files(path) == ({d1, t3}, {d1, t3})
    expected = _same_as_hudi_rs(spark, path)
    as_of_d4 = _same_as_hudi_rs(spark, path, d4)
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "2"})
    assert result.metadata["earliestCommitToRetain"] == d4
    assert _files(path) == ({t3}, {t3})                # slice d1: its base file and its log file, together
    assert result.metadata["totalFilesDeleted"] == 2
    assert _same_as_hudi_rs(spark, path) == expected
    assert _same_as_hudi_rs(spark, path, d4) == as_of_d4

    (t6,) = times(pyhudi.compact(spark, path, op="schedule"))                               # pending: reads slice t3
    pyhudi.write(_df(spark, [(2, "b7", 7, "p1")]), path, opts)                      # log-only slice t6
    assert pyhudi.clean(spark, path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                      "hoodie.cleaner.fileversions.retained": "1"}) is None
    assert _files(path) == ({t3}, {t3, t6})
    pyhudi.compact(spark, path, op="execute")
    assert {r[2:5] for r in _same_as_hudi_rs(spark, path)} == {(1, "a5", 5), (2, "b7", 7)}


# --- replaced file groups and deleted partitions ------------------------------------------------------------
def test_replaced_file_groups_and_deleted_partitions_are_cleaned(spark, tmp_path):
    path = tmp_path / "rep"
    opts = _options("rep")
    c1 = str(pyhudi.write(_df(spark, [(1, "a", 1, "p1"), (2, "b", 1, "p2")]), path, opts))
    c2 = str(pyhudi.write(_df(spark, [(3, "c", 2, "p1")]), path,
                          {**opts, "hoodie.datasource.write.operation": "insert_overwrite"}))
    c3 = pyhudi.delete_partitions(spark, path, ["p2"], opts).instant_time
    c4 = str(pyhudi.write(_df(spark, [(4, "d", 4, "p3")]), path, opts))
    assert _slices(path) == {"p1": {c1, c2}, "p2": {c1}, "p3": {c4}}
    expected = _same_as_hudi_rs(spark, path)
    # retained=2 -> earliest commit to retain c3: only the group replaced at c2 is due
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "2"})
    assert result.metadata["earliestCommitToRetain"] == c3
    assert _slices(path) == {"p1": {c2}, "p2": {c1}, "p3": {c4}}
    # retained=1 -> c4: the partition dropped at c3 goes, folder included
    result = pyhudi.clean(spark, path, {"hoodie.cleaner.commits.retained": "1"})
    assert result.metadata["partitionMetadata"]["p2"]["isPartitionDeleted"] is True
    assert not (path / "p2").exists()
    assert _slices(path) == {"p1": {c2}, "p3": {c4}}
    assert _same_as_hudi_rs(spark, path) == expected


# --- automatic clean after commits --------------------------------------------------------------------------
def test_automatic_clean_after_commits_and_its_cost(spark, tmp_path):
    path = tmp_path / "auto"
    opts = _options("auto", **{"hoodie.clean.automatic": "true", "hoodie.cleaner.commits.retained": "1"})
    commits = [str(pyhudi.write(_df(spark, [(1, f"a{i}", i, "p1")]), path, opts)) for i in range(3)]
    timeline = HudiTable.load(str(path)).timeline()
    cleans = timeline.completed([CLEAN])
    assert len(cleans) == 1       # after the 3rd commit (after the 2nd, the slice before c2 is still retained)
    assert _slices(path) == {"p1": {commits[1], commits[2]}}
    assert _same_as_hudi_rs(spark, path) == [("1", commits[2], 1, "a2", 2, "p1")]
    # nothing due: the check after a commit is metadata only (timeline listing, last clean metadata)
    started = time.perf_counter()
    for _ in range(5):
        clean_after_commit(spark, path, opts)          # the client's post-commit hooks: cleaner, then archiver
        archive_after_commit(spark, path, opts, table_lock)
    per_call = (time.perf_counter() - started) / 5
    assert len(HudiTable.load(str(path)).timeline().completed([CLEAN])) == 1
    assert per_call < 1.0, per_call
    print(f"automatic clean+archive check, nothing due: {per_call * 1000:.1f} ms")
