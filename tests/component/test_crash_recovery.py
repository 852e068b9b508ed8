"""Crash injection: writer processes killed (os._exit, like kill -9) at named points of writes, compaction,
rollback, restore and savepoint. After every kill the last completed snapshot reads intact in pyhudi and hudi-rs;
the next writer rolls the leftovers back; at the end no row is lost and no file of an undone instant is left.

Each kill costs one process with its own JVM, so the chain of kill points runs in order, each run first recovering
from the previous one. CI runs a representative four (two per write path); PYHUDI_LONG_TESTS=1 runs all of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pyhudi
from pyhudi.file_group.naming import parse_base_file_name, parse_log_file_name
from pyhudi.table import HudiTable
from support import hudi_rs_read, rows

WORKER = Path(__file__).with_name("crash_worker.py")
LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"

# (crash point, actions of the run; the crash hits in the last action). A crash inside a rollback leaves it pending
# and the next run's first write finishes it, so a rollback point is never followed by another rollback point.
STEPS = {
    "write.after_requested": [["write", {"0": "a1"}]],
    "write.after_inflight": [["write", {"1": "a2"}]],
    "write.executor.after_file": [["write", {"2": "a3", "10": "a3"}]],
    "write.before_complete": [["write", {"3": "a4"}]],
    "write.after_complete": [["write", {"4": "a5", "11": "a5"}]],
    "compaction.after_inflight": [["write", {"5": "a6"}], ["compact"]],
    "rollback.after_plan": [["write", {"8": "a9"}], ["rollback_latest"]],
    "compaction.before_commit": [["write", {"6": "a7"}], ["compact"]],
    "rollback.after_instant_deleted": [["write", {"9": "a10"}], ["rollback_latest"]],
    "savepoint.after_inflight": [["write", {"7": "a8"}], ["savepoint"]],
    "rollback.before_complete": [["write", {"12": "a11"}], ["savepoint"], ["write", {"13": "a11b"}],
                                 ["rollback_latest"]],
    "restore.after_first_rollback": [["write", {"0": "a12"}], ["savepoint"], ["write", {"1": "a12b"}],
                                     ["write", {"2": "a12c"}], ["restore"]],
}
CI_STEPS = ["write.executor.after_file", "write.before_complete", "compaction.before_commit",
            "rollback.after_instant_deleted"]


class Model:
    """Expected rows: the base rows plus every write that counts, in order."""

    def __init__(self, base: dict):
        self.writes: list[dict] = [dict(base)]
        self.savepoint = None      # number of writes the newest savepoint keeps
        self.pending = None        # what an interrupted rollback/restore will do when the next writer finishes it

    def state(self) -> dict:
        out = {}
        for write in self.writes:
            out.update({int(k): v for k, v in write.items()})
        return out

    def recover(self):
        if self.pending:
            self.pending()
            self.pending = None

    def apply(self, action, crash: str | None):
        kind = action[0]
        if kind == "write" and crash in (None, "write.after_complete"):
            self.writes.append(action[1])
        elif kind == "savepoint" and crash is None:
            self.savepoint = len(self.writes)
        elif kind == "rollback_latest":
            if crash == "rollback.after_plan":
                self.pending = self.writes.pop   # still visible until the next writer finishes the rollback
            else:
                self.writes.pop()
        elif kind == "restore":
            keep = self.savepoint
            if crash == "restore.after_first_rollback":
                self.writes.pop()
                self.pending = lambda: self.writes.__delitem__(slice(keep, None))
            else:
                del self.writes[keep:]


def _run_worker(path, options, actions, crash, timeout=600, master="local[1]", env=None, sized=False):
    env = {**os.environ, "PYHUDI_CRASH_AT": crash, **(env or {})}
    spec = json.dumps({"path": str(path), "options": options, "actions": actions, "master": master,
                       "sized": sized})
    return subprocess.run([sys.executable, str(WORKER), spec], env=env, capture_output=True, text=True,
                          timeout=timeout)


def _check(spark, path, expected: dict, where: str):
    ours = {r["id"]: r["name"] for r in pyhudi.read(spark, path).select("id", "name").collect()}
    assert ours == expected, where
    if HudiTable.load(str(path)).timeline().pending(["compaction"]):
        return   # hudi-rs 0.5 skips the log files of slices under a pending compaction; checked after recovery
    theirs = hudi_rs_read(path)
    assert rows(theirs, ["id", "name"]) == sorted(expected.items(), key=repr), where


def _leftovers(path) -> list[str]:
    """Data files no completed instant wrote (files of undone writes), and marker folders of finished instants."""
    table = HudiTable.load(str(path))
    timeline = table.timeline()
    completed = {i.time for i in timeline.completed_writes()}
    logged = set()
    for instant in timeline.completed_writes():
        for stats in (timeline.read_metadata(instant).get("partitionToWriteStats") or {}).values():
            logged.update(s["path"] for s in stats)
    bad = []
    for file in path.rglob("*"):
        relative = str(file.relative_to(path))
        if ".hoodie" in file.parts or not file.is_file():
            continue
        base = parse_base_file_name(file.name)
        if base and base[2] not in completed:
            bad.append(relative)
        if parse_log_file_name(file.name) and relative not in logged:
            bad.append(relative)
    pending = {i.time for i in timeline.pending()}
    bad += [f".temp/{d.name}" for d in (path / ".hoodie" / ".temp").iterdir() if d.name not in pending]
    return bad


@pytest.mark.parametrize("sized", [False, True], ids=["stages", "one-task"])
def test_crash_points_recover(spark, tmp_path, sized):
    """A crash at each point, then recovery: the writes that count are visible, nothing else. `sized` batches
    take the one-task write, whose executor crash hits inside one of its writer threads."""
    path = tmp_path / "crash"
    options = {"hoodie.table.name": "crash", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "region",
               "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    base = {str(i): "v0" for i in range(10)}
    pyhudi.write(spark.createDataFrame([(int(k), v, 0, "eu" if int(k) % 2 else "us") for k, v in base.items()],
                                       "id long, name string, ts long, region string"), path, options)
    model = Model(base)
    started = time.monotonic()
    # CI: the one-task write crashes at the first two of CI_STEPS, the staged write at the other two
    steps = list(STEPS) if LONG else CI_STEPS[:2] if sized else CI_STEPS[2:]
    for crash in steps:
        actions = STEPS[crash]
        result = _run_worker(path, options, actions, crash, sized=sized)
        model.recover()
        if crash == "write.executor.after_file":   # an executor died: the driver aborts the write and fails
            assert result.returncode not in (0, 137), result.stderr[-2000:]
        else:
            assert result.returncode == 137, (crash, result.returncode, result.stderr[-3000:])
        done = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        finished = len([d for d in done if d["action"] != "rollback_started"])
        for index, action in enumerate(actions):
            if index < len(actions) - 1:
                assert index < finished, (crash, done)
                model.apply(action, None)
            else:
                model.apply(action, crash)
        _check(spark, path, model.state(), f"after a crash at {crash}")
    print(f"crash chain: {time.monotonic() - started:.0f} s")

    # the next writer (in this process) recovers; a compaction finishes the interrupted one
    pyhudi.write(spark.createDataFrame([(99, "final", 10**13, "eu")], "id long, name string, ts long, region string"),
                 path, options)
    model.recover()
    model.writes.append({"99": "final"})
    pyhudi.compact(spark, path, op="execute")   # re-runs interrupted compactions, oldest first
    _check(spark, path, model.state(), "after recovery")
    assert _leftovers(path) == []
    timeline = HudiTable.load(str(path)).timeline()
    assert not timeline.pending(["commit", "deltacommit", "rollback", "restore", "compaction"]), timeline.pending()


def test_stale_lock_of_a_killed_writer_expires(spark, tmp_path):
    from pyhudi.transaction.lock import FileSystemLock, LockAcquireError

    path = tmp_path / "t"
    options = {"hoodie.table.name": "lk", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
    pyhudi.write(spark.createDataFrame([(1, "a")], "id long, name string"), path, options)
    table = HudiTable.load(str(path))
    lock_file = path / ".hoodie" / "lock"
    lock_file.write_text("{}")   # left by a writer killed while holding the lock
    with pytest.raises(LockAcquireError, match="lock"):
        FileSystemLock(table.storage, {"hoodie.write.lock.wait_time_ms": "300"}).acquire()
    old = time.time() - 120
    os.utime(lock_file, (old, old))
    lock = FileSystemLock(table.storage, {"hoodie.write.lock.filesystem.expire": "1",
                                          "hoodie.write.lock.wait_time_ms": "300"})
    lock.acquire()
    assert lock.held and json.loads(lock_file.read_text())["lockThreadName"]
    lock.release()
    assert not lock_file.exists()
