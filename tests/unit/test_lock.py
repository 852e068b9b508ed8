"""The table lock (Hudi's FileSystemBasedLockProvider) is owner-checked and refreshed: contenders (threads and
processes) are never inside together, an expired lock is taken over exactly once, a release never deletes a new
owner's lock, and a long holder's lock does not expire while held."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from pyhudi.transaction.lock import FileSystemLock, LockLostError
from pyhudi.storage import Storage


def _table(tmp_path) -> Storage:
    (tmp_path / "t" / ".hoodie").mkdir(parents=True)
    return Storage(str(tmp_path / "t"))


def _lock(storage, expire_ms=0, **options) -> FileSystemLock:
    lock = FileSystemLock(storage, {"hoodie.write.lock.wait_time_ms": "20000",
                                    "hoodie.write.lock.wait_time_ms_between_retry": "5", **options})
    lock.expire_ms = expire_ms
    return lock


def _owner(storage) -> str | None:
    path = Path(storage.base_path) / ".hoodie" / "lock"
    return json.loads(path.read_text()).get("lockOwner") if path.exists() else None


def _age(storage, seconds: float) -> None:
    path = Path(storage.base_path) / ".hoodie" / "lock"
    old = time.time() - seconds
    os.utime(path, (old, old))


def test_expired_lock_is_taken_over_exactly_once(tmp_path, monkeypatch):
    storage = _table(tmp_path)
    # Every contender first sees the lock expired before any of them acts on it (the race of two waiters).
    seen = threading.local()
    original = FileSystemLock._expired

    def expired_then_wait(self):
        result = original(self)
        if result and not getattr(seen, "waited", False):
            seen.waited = True
            try:
                time.sleep(0.05 * gate.wait(timeout=2))    # then they act one after the other
            except threading.BrokenBarrierError:
                pass
        return result

    monkeypatch.setattr(FileSystemLock, "_expired", expired_then_wait)
    for round_ in range(5):
        dead = _lock(storage)
        assert dead.try_lock()
        _age(storage, 3600)                        # its writer died an hour ago
        contenders = [_lock(storage, expire_ms=60_000) for _ in range(4)]
        start, gate = threading.Barrier(len(contenders)), threading.Barrier(len(contenders))
        won = []

        def attempt(lock):
            start.wait()
            seen.waited = False
            if lock.try_lock():
                won.append(lock)

        threads = [threading.Thread(target=attempt, args=(c,)) for c in contenders]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert len(won) == 1, f"round {round_}: {len(won)} writers took the expired lock"
        assert _owner(storage) == won[0].token
        won[0].release()
        assert not (Path(storage.base_path) / ".hoodie" / "lock").exists()


def test_release_of_a_lock_taken_over_keeps_the_new_owner(tmp_path):
    storage = _table(tmp_path)
    old = _lock(storage)                           # no expiry on its side: it never refreshes
    old.acquire()
    _age(storage, 3600)
    new = _lock(storage, expire_ms=60_000)
    assert new.try_lock()
    old.release()
    assert old.lost
    assert _owner(storage) == new.token            # the new owner's lock file is still there
    with pytest.raises(LockLostError):
        old.held = True
        old.check_held()
    new.check_held()
    new.release()
    assert not (Path(storage.base_path) / ".hoodie" / "lock").exists()


def test_refresh_keeps_a_long_holders_lock(tmp_path):
    storage = _table(tmp_path)
    holder = _lock(storage, expire_ms=400)
    holder.acquire()
    waiter = _lock(storage, expire_ms=400)
    deadline = time.monotonic() + 2.0              # five expiry periods of a long action under the lock
    while time.monotonic() < deadline:
        assert not waiter.try_lock(), "the holder's lock expired while it was held"
        time.sleep(0.05)
    holder.check_held()
    holder.release()
    assert waiter.try_lock()
    waiter.release()


def test_threads_are_never_inside_together(tmp_path):
    storage = _table(tmp_path)
    inside, overlaps, done, count = [0], [], [], threading.Lock()

    def worker(n):
        for _ in range(5):
            lock = _lock(storage, expire_ms=300)   # short expiry: holders must keep refreshing
            lock.acquire()
            with count:
                inside[0] += 1
                if inside[0] != 1:
                    overlaps.append(n)
            time.sleep(0.5)                        # longer than the expiry
            with count:
                inside[0] -= 1
            lock.release()
        done.append(n)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(done) == 4 and overlaps == []


WORKER = textwrap.dedent("""
    import os, sys, time
    from pyhudi.transaction.lock import FileSystemLock
    from pyhudi.storage import Storage

    base, sentinel, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    overlaps = 0
    for _ in range(rounds):
        lock = FileSystemLock(Storage(base), {"hoodie.write.lock.wait_time_ms": "60000",
                                              "hoodie.write.lock.wait_time_ms_between_retry": "5"})
        lock.expire_ms = 300
        lock.acquire()
        try:
            fd = os.open(sentinel, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            overlaps += 1
        else:
            os.close(fd)
            time.sleep(0.5)         # longer than the expiry
            os.unlink(sentinel)
        lock.release()
    print(overlaps)
""")


def test_processes_are_never_inside_together(tmp_path):
    storage = _table(tmp_path)
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    sentinel = tmp_path / "inside"
    procs = [subprocess.Popen([sys.executable, str(script), storage.base_path, str(sentinel), "4"],
                              stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    assert outputs == ["0", "0", "0"]
