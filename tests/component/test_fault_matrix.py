"""Fault matrix: every crash point x copy-on-write/merge-on-read x each action that passes it.

Each case builds a small table in this process, runs one action in a child process (fault_worker.py, its own JVM)
with PYHUDI_CRASH_AT naming the point, and then checks, in this process:
- the crash happened where asked (exit 137; a point inside a Spark task fails the job and the driver aborts);
- the last completed snapshot reads the expected rows in pyhudi and hudi-rs (the state before the action, or after
  it when the crash came after completion; a restore may stop between its rollbacks), with no duplicate keys, and
  every file the timeline still references exists;
- the next writer recovers: an upsert succeeds (an interrupted compaction is executed again, a crashed savepoint
  retried) and its rows are right in both readers;
- then no stray file (every data file on disk is named by a completed instant's write stats), no missing file, no
  marker folder of a finished instant and no pending instant remain.

Spark task failures with retries: with PYHUDI_FAIL_FIRST_ATTEMPT naming a task failure point, the first attempt of
each task reaching it fails and the child's master (`local[1,3]`) retries it; the write must then succeed with its
rows, and the failed attempts' files must be reconciled away before the commit.

A child costs one JVM start (~15 s), so CI runs a representative subset; PYHUDI_LONG_TESTS=1 runs the full matrix.
A case that fails because of a known engine bug is listed in KNOWN_BROKEN with its reason (a strict xfail).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import pyhudi
import pyhudi.testing as pyhudi_testing
from file_audit import CLEAN, leftovers, missing_files
from pyhudi.table import HudiTable
from pyhudi.commit.archived_timeline import archived_instants
from support import (add_stand_in_metadata_table, assert_metadata_table_agrees, has_metadata_table, hudi_rs_read,
                     rows)

WORKER = Path(__file__).with_name("fault_worker.py")
ENGINE = Path(pyhudi.__file__).parent
LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"
COLUMNS = ["id", "name", "ts", "part"]
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.filesystem.expire": "1", "hoodie.client.heartbeat.interval_in_ms": "1000",
       "hoodie.write.lock.wait_time_ms": "20000"}

WRITE_POINTS = ["write.after_requested", "write.after_inflight", "write.executor.after_file",
                "write.before_complete", "write.after_complete"]
# action -> crash points it passes, and the table types it applies to
ACTIONS = {
    "upsert": (WRITE_POINTS, ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "insert": (WRITE_POINTS, ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "bulk_insert": (WRITE_POINTS, ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "delete": (WRITE_POINTS, ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "insert_overwrite": (WRITE_POINTS, ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "delete_partition": ([p for p in WRITE_POINTS if p != "write.executor.after_file"],
                         ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "upsert_occ": (["occ.holding_lock", "write.after_inflight", "write.before_complete"],
                   ("COPY_ON_WRITE", "MERGE_ON_READ")),
    # the next write after a failed one rolls it back first (EAGER failed-writes policy)
    "upsert_after_failed": (["rollback.after_plan", "rollback.after_instant_deleted", "rollback.before_complete"],
                            ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "compact": (["compaction.after_inflight", "compaction.before_commit"], ("MERGE_ON_READ",)),
    # clustering (scheduleAndExecute): a crashed run stays pending; the next execute re-runs it
    "cluster": (["clustering.after_inflight", "clustering.executor.after_file", "clustering.before_commit"],
                ("COPY_ON_WRITE", "MERGE_ON_READ")),
    # COW: two upserts leave old file versions to clean (a MOR table's upserts add log files to one slice)
    "clean": (["clean.after_inflight", "clean.before_complete"], ("COPY_ON_WRITE",)),
    "rollback": (["rollback.after_plan", "rollback.after_instant_deleted", "rollback.before_complete"],
                 ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "restore": (["rollback.after_instant_deleted", "restore.after_first_rollback"],
                ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "savepoint": (["savepoint.after_inflight"], ("COPY_ON_WRITE", "MERGE_ON_READ")),
    # an upsert on a table a Java writer left with a metadata table: dropped before the commit completes
    "upsert_mdt": (["properties.update.after_backup", "metadata_table.drop.after_properties",
                    "write.before_complete"], ("COPY_ON_WRITE", "MERGE_ON_READ")),
    # version 8 tables whose metadata table pyhudi keeps (hoodie.metadata.enable=true): its delta commit before
    # the data instant completes; the files partition built on a table without one; the other metadata partitions
    # unnamed and dropped; the files partition compacted after its tenth delta commit
    "upsert_mdt_v8": (["metadata_table.deltacommit.after_log", "metadata_table.after_deltacommit",
                       "write.before_complete"], ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "upsert_mdt_v8_init": (["metadata_table.initialize.before_ready"], ("COPY_ON_WRITE", "MERGE_ON_READ")),
    "upsert_mdt_v8_indexes": (["metadata_table.after_unnaming_indexes"], ("COPY_ON_WRITE",)),
    "upsert_mdt_v8_compact": (["metadata_table.compaction.after_base_file", "metadata_table.after_compaction"],
                              ("COPY_ON_WRITE", "MERGE_ON_READ")),
    # archiving a version 8 table into its LSM timeline history: its fourth run (batch size 2) writes a layer-0
    # file, compacts layers 0 and 1, and cleans old manifests and files, then removes the instants it archived
    "archive_v8": (["lsm_history.write.after_data_file", "lsm_history.write.after_manifest",
                    "lsm_history.write.after_version", "lsm_history.compaction.after_data_file",
                    "lsm_history.compaction.after_manifest", "lsm_history.compaction.after_version",
                    "lsm_history.clean.after_manifests", "archive.after_history"], ("COPY_ON_WRITE", "MERGE_ON_READ")),
    # upgrading a version 6 table (with an archived timeline) to version 8: a merge-on-read table is compacted
    # first; the timeline and the archive are copied into layout 2, hoodie.properties flips, the old files go, the
    # metadata table is built
    "upgrade_v8": (["upgrade.after_timeline_copy", "upgrade.after_history", "upgrade.after_properties",
                    "metadata_table.initialize.before_ready"], ("COPY_ON_WRITE", "MERGE_ON_READ")),
    # the metadata table's own clean of old file slices of its files partition
    "upsert_mdt_v8_clean": (["metadata_table.clean.after_inflight", "metadata_table.after_clean"],
                            ("COPY_ON_WRITE",)),
}
MDT_V8 = {"hoodie.write.table.version": "8", "hoodie.metadata.enable": "true"}
ARCHIVE_V8 = {"hoodie.write.table.version": "8", "hoodie.metadata.enable": "false", "hoodie.keep.min.commits": "2",
              "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1",
              "hoodie.timeline.compaction.batch.size": "2", "hoodie.archive.automatic": "false",
              "hoodie.compact.inline": "true"}
UPGRADE_V8 = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1",
              "hoodie.archive.automatic": "false", "hoodie.compact.inline": "true",
              "hoodie.compact.inline.max.delta.commits": "2"}
# CI runs one case per kind of step (a write's publication, a rollback, a compaction, the OCC lock, the metadata table's delta
# commit, the upgrade's copy); PYHUDI_LONG_TESTS=1 runs the whole matrix
CI_CASES = {
    ("MERGE_ON_READ", "upsert", "write.before_complete"),
    ("COPY_ON_WRITE", "rollback", "rollback.after_instant_deleted"),
    ("MERGE_ON_READ", "compact", "compaction.before_commit"),
    ("COPY_ON_WRITE", "upsert_occ", "occ.holding_lock"),
    ("MERGE_ON_READ", "upsert_mdt_v8", "metadata_table.after_deltacommit"),
    ("MERGE_ON_READ", "upgrade_v8", "upgrade.after_history"),
}
# task failure points (first attempt fails, Spark retries) x the actions that pass them
TASK_FAILURE_ACTIONS = {"write.executor.after_file": ["upsert", "insert", "bulk_insert", "delete", "insert_overwrite"],
                        "clustering.executor.after_file": ["cluster"]}
CI_TASK_FAILURES = {("MERGE_ON_READ", "upsert", "write.executor.after_file")}
# (table type, action, point) -> why the case fails today (engine bug, reported; remove when fixed)
KNOWN_BROKEN: dict[tuple[str, str, str], str] = {}
# (action, point) pairs that cannot happen: the action does not pass the point
NOT_PASSED: dict[tuple[str, str], str] = {}


def _cases():
    """One case per (table type, action, point), in a fixed shuffled order so a partial run covers a bit of
    everything."""
    combos = [(action, table_type, point) for action, (points, types) in ACTIONS.items()
              for point in points for table_type in types if (action, point) not in NOT_PASSED]
    random.Random(13).shuffle(combos)
    out = []
    for action, table_type, point in combos:
        key = (table_type, action, point)
        marks = []
        if key not in CI_CASES and not LONG:
            marks.append(pytest.mark.skip(reason="full fault matrix: PYHUDI_LONG_TESTS=1"))
        if key in KNOWN_BROKEN:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[key]))
        ident = f"{'mor' if table_type == 'MERGE_ON_READ' else 'cow'}-{action}-{point}"
        out.append(pytest.param(table_type, action, point, marks=marks, id=ident))
    return out


def _task_failure_cases():
    out = []
    for point, actions in TASK_FAILURE_ACTIONS.items():
        for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
            for action in actions:
                key = (table_type, action, point)
                marks = []
                if key not in CI_TASK_FAILURES and not LONG:
                    marks.append(pytest.mark.skip(reason="full fault matrix: PYHUDI_LONG_TESTS=1"))
                if not hasattr(pyhudi_testing, "task_failure_point"):
                    marks.append(pytest.mark.skip(reason="the engine has no task_failure_point yet"))
                if key in KNOWN_BROKEN:
                    marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[key]))
                ident = f"{'mor' if table_type == 'MERGE_ON_READ' else 'cow'}-{action}-{point}"
                out.append(pytest.param(table_type, action, point, marks=marks, id=ident))
    return out


def _engine_points(function: str) -> set[str]:
    found = set()
    for source in ENGINE.rglob("*.py"):
        found.update(re.findall(function + r"\(\s*[\"']([^\"']+)[\"']", source.read_text()))
    return found


def test_every_crash_point_is_in_the_matrix():
    """A crash or task failure point added to the engine must get its cases here."""
    found = _engine_points("crash_point")
    covered = {p for points, _ in ACTIONS.values() for p in points}
    assert found - covered == set(), f"crash points without a fault-matrix case: {sorted(found - covered)}"
    assert covered - found == set(), f"matrix names points the engine no longer has: {sorted(covered - found)}"
    failures = _engine_points("task_failure_point")
    assert failures <= set(TASK_FAILURE_ACTIONS), f"task failure points without a case: {failures}"


# --- the table before the action and the model of its rows ----------------------------------------------------
def _part(key: int) -> str:
    return f"p{key % 2}"


@dataclass
class Case:
    spark: object
    path: str
    options: dict
    model: dict = field(default_factory=dict)      # id -> (id, name, ts, part)
    clock: int = 0

    def records(self, keys, tag: str) -> list[list]:
        self.clock += 1
        return [[k, f"{tag}{k}_{self.clock}", self.clock, _part(k)] for k in sorted(keys)]

    def write(self, operation: str, records, options=None) -> str:
        df = self.spark.createDataFrame([tuple(r) for r in records], "id long, name string, ts long, part string")
        instant = str(pyhudi.write(df, self.path, {**self.options, **(options or {}),
                                                   "hoodie.datasource.write.operation": operation}))
        return instant

    def upsert(self, keys, tag="u", options=None) -> str:
        records = self.records(keys, tag)
        instant = self.write("upsert", records, options)
        self.model.update({r[0]: tuple(r) for r in records})
        return instant


def _apply(model: dict, operation: str, records, partitions=()) -> dict:
    out = dict(model)
    if operation == "delete":
        for r in records:
            out.pop(r[0], None)
        return out
    if operation == "delete_partition":
        return {k: v for k, v in out.items() if v[3] not in partitions}
    if operation == "insert_overwrite":
        touched = {r[3] for r in records}
        out = {k: v for k, v in out.items() if v[3] not in touched}
    out.update({r[0]: tuple(r) for r in records})
    return out


def _upsert_until_the_next_one_cleans_the_metadata_table(case: Case, tmp_path) -> None:
    """Upsert until the next upsert would run the metadata table's first clean (when depends on its compaction
    cadence, which follows Java's counting): each upsert is tried on the table, and the one that cleaned is undone
    by restoring the copy taken before it."""
    import shutil

    from pyhudi.commit.metadata_table import metadata_storage
    from pyhudi.timeline import CLEAN as CLEAN_ACTION, Timeline

    saved = tmp_path / "before_upsert"
    for _ in range(60):
        shutil.rmtree(saved, ignore_errors=True)
        shutil.copytree(case.path, saved)
        clock, model = case.clock, dict(case.model)
        case.upsert([6, 7])
        if Timeline.load(metadata_storage(HudiTable.load(case.path).storage)).completed([CLEAN_ACTION]):
            shutil.rmtree(case.path)
            shutil.copytree(saved, case.path)
            case.clock, case.model = clock, model
            return
    raise AssertionError("the metadata table never cleaned in 60 upserts")


def _prepare(case: Case, action: str, tmp_path):
    """Set the table up for `action`; returns (worker action, model after the action, model part-way through
    a restore, whether the worker uses OCC)."""
    if action == "upsert_mdt_v8_init":   # a version 8 table without a metadata table; the action builds one
        case.options = {**case.options, "hoodie.write.table.version": "8", "hoodie.metadata.enable": "false"}
    elif action.startswith("upsert_mdt_v8"):
        case.options = {**case.options, **MDT_V8}
    elif action == "archive_v8":
        case.options = {**case.options, **ARCHIVE_V8}
    case.write("insert", case.records(range(8), "i"))
    case.model = {r[0]: r for r in [(k, f"i{k}_1", 1, _part(k)) for k in range(8)]}
    case.upsert([0, 1, 2, 3])
    if action == "upsert_mdt_v8_compact":   # the action's delta commit is the files partition's eleventh
        for _ in range(7):
            case.upsert([6, 7])
    if action == "upsert_mdt_v8_clean":   # up to the write whose metadata sync runs the files partition's first clean
        _upsert_until_the_next_one_cleans_the_metadata_table(case, tmp_path)
    if action == "archive_v8":            # three archive runs: layer 0 holds one file, layer 1 one
        for _ in range(3):
            case.upsert([6, 7])
            case.upsert([6, 7])
            assert pyhudi.archive(case.spark, case.path, case.options)
        case.upsert([6, 7])
        case.upsert([6, 7])
        return ["archive"], dict(case.model), None
    if action == "upgrade_v8":            # archived instants to carry into the history; log files to compact
        case.options = {**case.options, **UPGRADE_V8}
        for _ in range(5):
            case.upsert([6, 7])
        assert pyhudi.archive(case.spark, case.path, case.options)
        case.upsert([0, 5], options={"hoodie.compact.inline": "false"})
        return ["upgrade", "8"], dict(case.model), None
    before = dict(case.model)
    partial = None
    if action == "upsert_mdt":
        add_stand_in_metadata_table(case.path)
    if action == "upsert_mdt_v8_indexes":
        _name_stand_in_index(case.path)
    if action == "upsert_mdt_v8_init":
        case.options = {**case.options, **MDT_V8}
    if action in ("upsert", "upsert_occ", "upsert_after_failed", "insert", "bulk_insert") or \
            action.startswith("upsert_mdt"):
        keys = {"insert": [8, 9, 10], "bulk_insert": [11, 12, 13]}.get(action, [0, 2, 5, 8])
        operation = "upsert" if action.startswith("upsert") else action
        records = case.records(keys, "a")
        if action == "upsert_after_failed":   # a failed write left pending, rolled back by the action's write
            result = _run_worker(case, ["write", {"operation": "upsert", "rows": case.records([1, 4], "x")}],
                                 "write.before_complete", tmp_path)
            assert result.returncode == 137, result.stderr[-3000:]
        spec = ["write", {"operation": operation, "rows": records}]
        return spec, _apply(before, operation, records), partial
    if action == "delete":
        records = [list(case.model[k]) for k in (1, 3, 6)]
        return ["write", {"operation": "delete", "rows": records}], _apply(before, "delete", records), partial
    if action == "insert_overwrite":
        records = case.records([0, 4, 14], "o")
        spec = ["write", {"operation": "insert_overwrite", "rows": records}]
        return spec, _apply(before, "insert_overwrite", records), partial
    if action == "delete_partition":
        return ["delete_partition", ["p1"]], _apply(before, "delete_partition", [], ["p1"]), partial
    if action == "compact":
        return ["compact"], before, partial
    if action == "cluster":
        return ["cluster"], before, partial
    if action == "clean":
        case.upsert([0, 1])
        case.upsert([0, 1])
        return ["clean", {"hoodie.cleaner.commits.retained": "1"}], dict(case.model), partial
    if action == "rollback":
        latest = case.upsert([2, 5, 9])
        return ["rollback", latest], before, partial
    if action == "savepoint":
        latest = HudiTable.load(case.path).timeline().latest_completed_write().time
        return ["savepoint", latest], before, partial
    if action == "restore":
        target = HudiTable.load(case.path).timeline().latest_completed_write().time
        assert pyhudi.create_savepoint(case.spark, case.path, target).time == str(target)
        case.upsert([4, 5, 10])
        partial = dict(case.model)
        case.upsert([0, 6, 11])
        return ["restore", target], before, partial
    raise AssertionError(action)


def _name_stand_in_index(path: str) -> None:
    """A metadata index beside the files partition, as a Java writer with the record index leaves one: named in
    hoodie.properties, with a folder in the metadata table."""
    from pyhudi.table import update_table_properties

    (Path(path) / ".hoodie" / "metadata" / "record_index").mkdir()
    (Path(path) / ".hoodie" / "metadata" / "record_index" / ".hoodie_partition_metadata").write_text("x")
    update_table_properties(HudiTable.load(path).storage, {"hoodie.table.metadata.partitions": "files,record_index"})


def _expected(action: str, point: str, before: dict, after: dict, partial: dict | None) -> tuple[dict, dict]:
    """(rows right after the crash, rows once the next writer recovered, before its own upsert)."""
    if action == "rollback":
        return (before if point == "rollback.after_plan" else after), after
    if action == "restore":
        return partial, after
    if point == "write.after_complete" or action in ("compact", "clean", "savepoint", "cluster", "archive_v8",
                                                     "upgrade_v8"):
        return after, after
    return before, before


# --- running and checking --------------------------------------------------------------------------------------
def _run_worker(case: Case, action, crash: str, tmp_path, options=None, master="local[1]", env=None):
    env = {**os.environ, "PYHUDI_CRASH_AT": crash, **(env or {})}
    spec = json.dumps({"path": case.path, "options": {**case.options, **(options or {})}, "action": action,
                       "master": master})
    return subprocess.run([sys.executable, str(WORKER), spec], env=env, capture_output=True, text=True,
                          timeout=900, cwd=tmp_path)


def _read_checks(spark, path: str, expected: dict, where: str, with_hudi_rs: bool = True) -> None:
    want = sorted(expected.values(), key=repr)
    ours = pyhudi.read(spark, path)
    assert rows(ours, COLUMNS) == want, where
    keys = [r[0] for r in rows(ours, ["_hoodie_record_key"])]
    assert len(keys) == len(set(keys)), f"duplicate keys {where}"
    if with_hudi_rs:
        theirs = rows(hudi_rs_read(path), COLUMNS) if want else []
        assert theirs == want, f"hudi-rs {where}"


def _expire_crashed_writer(path: str) -> None:
    """Time passes for a writer killed under OCC: its lock file and heartbeats age past their expiry."""
    old = time.time() - 180
    for leftover in [Path(path) / ".hoodie" / "lock", *(Path(path) / ".hoodie" / ".heartbeat").glob("*")]:
        if leftover.exists():
            os.utime(leftover, (old, old))


@pytest.mark.parametrize("table_type,action,point", _cases())
def test_crash_point(spark, tmp_path, table_type, action, point):
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "faults", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
               "hoodie.datasource.write.table.type": table_type, "hoodie.keep.min.commits": "20",
               "hoodie.keep.max.commits": "30", "hoodie.compact.inline.max.delta.commits": "1"}
    case = Case(spark, path, options)
    spec, after, partial = _prepare(case, action, tmp_path)
    before = dict(case.model)
    occ = OCC if action == "upsert_occ" else {}

    written_before = {i.time for i in HudiTable.load(path).timeline().completed_writes()}
    if action == "upgrade_v8":   # and those of the archived timeline, which the upgrade carries into the history
        written_before |= {i.time for i in archived_instants(HudiTable.load(path).storage)
                           if i.is_completed and i.action in ("commit", "deltacommit", "replacecommit")}
    result = _run_worker(case, spec, point, tmp_path, occ)
    where = f"after a crash at {point} in {action} ({table_type})"
    if point.endswith("executor.after_file"):   # the task died, the driver aborted the write and raised
        assert result.returncode == 3 and '"error"' in result.stdout, (where, result.returncode,
                                                                       result.stdout, result.stderr[-3000:])
    else:
        assert result.returncode == 137, (where, "the crash point was not reached", result.returncode,
                                          result.stdout, result.stderr[-3000:])
    now, recovered = _expected(action, point, before, after, partial)
    pending_compaction = HudiTable.load(path).timeline().pending(["compaction"])
    # hudi-rs 0.5 skips the log files of slices under a pending compaction: compared after recovery
    _read_checks(spark, path, now, where, with_hudi_rs=not pending_compaction)
    assert missing_files(path) == [], where

    # the next writer recovers
    if occ:
        _expire_crashed_writer(path)
    case.model = dict(recovered)
    if action == "upgrade_v8":
        case.options = {**case.options, "hoodie.write.table.version": "8"}
    if action == "cluster" and HudiTable.load(path).timeline().pending(["replacecommit"]):
        # Hudi leaves a failed clustering pending (failed-write rollback skips clustering) and rejects updates
        # to its file groups: the operator runs it again first
        pyhudi.cluster(spark, path, op="execute")
    case.upsert([1, 7, 15], "r", occ)
    if table_type == "MERGE_ON_READ" and HudiTable.load(path).timeline().pending(["compaction"]):
        pyhudi.compact(spark, path, op="execute")
    if action == "savepoint":
        assert pyhudi.create_savepoint(spark, path, spec[1]).time == str(spec[1])
    _read_checks(spark, path, case.model, f"{where}, then recovered")
    assert leftovers(path) == CLEAN, where
    if action == "upsert_mdt":   # the recovering write finished the drop
        assert not has_metadata_table(path) and not (Path(path) / ".hoodie" / "hoodie.properties.backup").exists()
    if action.startswith("upsert_mdt_v8"):   # the metadata table lists exactly the table's files
        assert_metadata_table_agrees(path, True)
    if action == "upgrade_v8":   # the recovering write (asking for version 8) finished the upgrade
        upgraded = HudiTable.load(path)
        assert (upgraded.properties.version, upgraded.properties.timeline_layout_version) == ("8", "2"), where
        assert not [p.name for p in Path(path, ".hoodie").iterdir() if p.is_file() and p.name[:1].isdigit()], where
        assert_metadata_table_agrees(path, True)
    if action in ("archive_v8", "upgrade_v8"):   # every completed write is active or in the history, readable
        from pyhudi.timeline.lsm_history import read_history
        timeline = HudiTable.load(path).timeline()
        history = {i.time for i in read_history(HudiTable.load(path).storage, timeline.layout.history_folder)}
        assert written_before <= history | {i.time for i in timeline.completed_writes()}, where


@pytest.mark.parametrize("table_type,action,point", _task_failure_cases())
def test_task_failure_with_retry(spark, tmp_path, table_type, action, point):
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "retries", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
               "hoodie.datasource.write.table.type": table_type, "hoodie.keep.min.commits": "20",
               "hoodie.keep.max.commits": "30"}
    case = Case(spark, path, options)
    spec, after, _ = _prepare(case, action, tmp_path)
    log = tmp_path / "injected.log"
    result = _run_worker(case, spec, "", tmp_path, master="local[1,3]",
                         env={"PYHUDI_FAIL_FIRST_ATTEMPT": point, "PYHUDI_FAIL_FIRST_ATTEMPT_LOG": str(log)})
    where = f"after a failed first task attempt at {point} in {action} ({table_type})"
    assert result.returncode == 0 and '"done"' in result.stdout, (where, result.returncode, result.stdout,
                                                                   result.stderr[-3000:])
    assert log.exists() and log.read_text().strip(), f"{where}: no task attempt failed (point not passed)"
    _read_checks(spark, path, after, where)
    assert leftovers(path) == CLEAN, where
    case.model = dict(after)
    case.upsert([1, 7, 15], "r")
    _read_checks(spark, path, case.model, f"{where}, then one more upsert")
    assert leftovers(path) == CLEAN, where
