"""Optimistic concurrency control: writers on different file groups both commit, a writer whose file groups
changed under it fails with WriteConflictError and leaves nothing behind, live writers' instants survive (LAZY
rollback with heartbeats), and concurrent writer processes lose no update."""

from __future__ import annotations

import json
import os
import threading
import time


import pyhudi
from pyhudi.errors import WriteConflictError
from pyhudi.table import HudiTable
from pyhudi.timeline import new_instant_time
from pyhudi.transaction import WriteTransaction
from support import hudi_rs_read, rows
from test_crash_recovery import _leftovers, _run_worker

LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
       "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"}


def _options(name, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            **OCC, **extra}


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, region string")


def _state(spark, path):
    return {r["id"]: r["name"] for r in pyhudi.read(spark, path).select("id", "name").collect()}


def _both_before_either_commits(monkeypatch):
    """Make two concurrent writes both start (and write their files) before either commits."""
    barrier = threading.Barrier(2, timeout=300)
    original = WriteTransaction.complete

    def complete(self, commit, metadata):
        barrier.wait()
        if threading.current_thread().name == "second":
            time.sleep(0.5)   # the first one commits first
        return original(self, commit, metadata)

    monkeypatch.setattr(WriteTransaction, "complete", complete)


def _concurrently(first, second):
    errors = {}

    def run(name, fn):
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - collected for the assertions
            errors[name] = exc

    threads = [threading.Thread(target=run, args=(n, f), name=n) for n, f in (("first", first), ("second", second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_disjoint_file_groups_both_commit_overlap_conflicts(spark, tmp_path, monkeypatch):
    path = tmp_path / "t"
    options = _options("occ")
    pyhudi.write(_df(spark, [(i, "v0", 0, "eu" if i % 2 else "us") for i in range(6)]), path, options)
    _both_before_either_commits(monkeypatch)

    # different partitions = different file groups; new inserts into a new partition get new file ids
    errors = _concurrently(lambda: pyhudi.write(_df(spark, [(1, "a", 1, "eu"), (20, "a", 1, "asia")]), path, options),
                           lambda: pyhudi.write(_df(spark, [(2, "b", 1, "us"), (21, "b", 1, "asia")]), path, options))
    assert errors == {}
    assert _state(spark, path) == {0: "v0", 1: "a", 2: "b", 3: "v0", 4: "v0", 5: "v0", 20: "a", 21: "b"}

    before = sorted(p.name for p in (path / ".hoodie").iterdir())
    errors = _concurrently(lambda: pyhudi.write(_df(spark, [(3, "c", 2, "eu")]), path, options),
                           lambda: pyhudi.write(_df(spark, [(5, "d", 2, "eu")]), path, options))
    assert list(errors) == ["second"] and isinstance(errors["second"], WriteConflictError)
    assert "conflicts with commit" in str(errors["second"])
    assert _state(spark, path)[3] == "c" and _state(spark, path)[5] == "v0"
    # the loser left nothing: one new commit on the timeline, no files of its instant, no heartbeat, no lock
    after = sorted(p.name for p in (path / ".hoodie").iterdir())
    assert len(set(after) - set(before)) == 3      # the winner's requested, inflight, completed
    assert _leftovers(path) == []
    assert not list((path / ".hoodie" / ".heartbeat").iterdir()) and not (path / ".hoodie" / "lock").exists()
    assert rows(hudi_rs_read(path), ["id", "name"]) == sorted(_state(spark, path).items(), key=repr)


def test_lazy_rollback_spares_live_writers(spark, tmp_path):
    path = tmp_path / "t"
    options = _options("lazy", **{"hoodie.client.heartbeat.interval_in_ms": "30000"})
    pyhudi.write(_df(spark, [(1, "a", 1, "eu")]), path, options)
    hoodie = path / ".hoodie"
    live, dead = new_instant_time(), new_instant_time()
    for instant in (live, dead):
        (hoodie / f"{instant}.commit.requested").write_bytes(b"")
    (hoodie / ".heartbeat").mkdir(exist_ok=True)
    (hoodie / ".heartbeat" / live).write_text("1")       # fresh heartbeat: a live writer
    pyhudi.write(_df(spark, [(2, "b", 2, "us")]), path, options)
    assert (hoodie / f"{live}.commit.requested").exists()
    assert not (hoodie / f"{dead}.commit.requested").exists()   # no heartbeat: rolled back
    old = time.time() - 300
    os.utime(hoodie / ".heartbeat" / live, (old, old))        # the live writer died
    pyhudi.write(_df(spark, [(3, "c", 3, "us")]), path, options)
    assert not (hoodie / f"{live}.commit.requested").exists()
    assert len(list(hoodie.glob("*.rollback"))) == 2
    assert _state(spark, path) == {1: "a", 2: "b", 3: "c"}


def test_writer_processes_lose_no_update(spark, tmp_path):
    """N processes x M commits; each commit upserts the worker's own keys, every other one also a shared key."""
    workers, commits = (4, 25) if LONG else (2, 5)
    path = tmp_path / "t"
    options = _options("procs")
    pyhudi.write(_df(spark, [(0, "init", 0, "us")]), path, options)
    specs = [["writes", f"w{w}", commits, [0, 1000 * w + 1, 1000 * w + 2]] for w in range(workers)]
    started = time.monotonic()
    results = {}
    threads = [threading.Thread(target=lambda w=w: results.__setitem__(
        w, _run_worker(path, options, [specs[w]], "", timeout=7200 if LONG else 900))) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    events = []
    for w in range(workers):
        assert results[w].returncode == 0, results[w].stderr[-3000:]
        events += [json.loads(line) for line in results[w].stdout.splitlines() if line.startswith("{")]
    assert len(events) == workers * commits          # every commit either completed or conflicted
    committed = [e for e in events if e["action"] == "commit"]
    conflicts = [e for e in events if e["action"] == "conflict"]
    timeline = HudiTable.load(str(path)).timeline()
    active = {i.time for i in timeline.completed_writes()}
    # reported commits are on the timeline (older ones may have been archived by the automatic archiver)
    assert all(e["instant"] in active or e["instant"] < min(active) for e in committed)
    # no lost update: every key holds the value of the latest commit that wrote it
    expected = {0: "init"}
    for event in sorted(committed, key=lambda e: e["instant"]):
        worker, n = event["tag"].split("-")
        ids = [0, 1000 * int(worker[1:]) + 1, 1000 * int(worker[1:]) + 2]
        for key in (ids if int(n) % 2 == 0 else ids[1:]):
            expected[key] = event["tag"]
    assert _state(spark, path) == expected
    assert rows(hudi_rs_read(path), ["id", "name"]) == sorted(expected.items(), key=repr)
    assert _leftovers(path) == []
    print(f"{workers} writers x {commits} commits: {len(committed)} committed, {len(conflicts)} conflicts, "
          f"{elapsed:.0f} s")
    assert committed
