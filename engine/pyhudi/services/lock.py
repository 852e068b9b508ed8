"""Hudi's FileSystemBasedLockProvider: a table-wide lock for optimistic concurrency control.

The lock is the file `<hoodie.write.lock.filesystem.path or .hoodie>/lock`, created atomically with
`Storage.create_if_absent` (a hard link on local disks) and deleted on release. A lock older than
`hoodie.write.lock.filesystem.expire` minutes (0 = never) belongs to a dead writer and is taken over.
Acquisition polls every `hoodie.write.lock.wait_time_ms_between_retry` ms, up to `hoodie.write.lock.num_retries`
retries or `hoodie.write.lock.wait_time_ms` in all, whichever ends first.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from contextlib import contextmanager
from typing import Mapping

from pyhudi.errors import ConfigError, PyHudiError
from pyhudi.storage import Storage
from pyhudi.timeline import METAFOLDER

FILESYSTEM_LOCK_PROVIDER = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
LOCK_PROVIDER_KEY = "hoodie.write.lock.provider"
LOCK_PATH_KEY = "hoodie.write.lock.filesystem.path"
LOCK_EXPIRE_KEY = "hoodie.write.lock.filesystem.expire"            # minutes, 0 = never
LOCK_WAIT_KEY = "hoodie.write.lock.wait_time_ms"                   # Hudi default 60 s
LOCK_RETRY_WAIT_KEY = "hoodie.write.lock.wait_time_ms_between_retry"  # Hudi default 1 s
LOCK_RETRIES_KEY = "hoodie.write.lock.num_retries"                 # Hudi default 15
LOCK_FILE_NAME = "lock"


class LockAcquireError(PyHudiError):
    """The table lock could not be taken in time (another writer holds it)."""


def _int(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None or str(raw).strip() == "":
        return default
    try:
        return int(str(raw).strip())
    except ValueError:
        raise ConfigError(f"option {key}={raw!r} is not an integer") from None


class FileSystemLock:
    """One writer's handle on the table lock (re-entrant within a thread is not needed and not supported)."""

    def __init__(self, storage: Storage, options: Mapping[str, str] | None = None):
        options = options or {}
        provider = options.get(LOCK_PROVIDER_KEY) or FILESYSTEM_LOCK_PROVIDER
        if provider != FILESYSTEM_LOCK_PROVIDER:
            raise ConfigError(f"{LOCK_PROVIDER_KEY}={provider} is not supported by pyhudi; use "
                              f"{FILESYSTEM_LOCK_PROVIDER} (a lock file next to the table)")
        folder = options.get(LOCK_PATH_KEY)
        if folder:
            self.storage = Storage(str(folder).rstrip("/"))
            self.relative = LOCK_FILE_NAME
        else:
            self.storage = storage
            self.relative = f"{METAFOLDER}/{LOCK_FILE_NAME}"
        self.expire_ms = _int(options, LOCK_EXPIRE_KEY, 0) * 60_000
        self.wait_ms = _int(options, LOCK_WAIT_KEY, 60_000)
        self.retry_wait_ms = _int(options, LOCK_RETRY_WAIT_KEY, 1_000)
        self.retries = _int(options, LOCK_RETRIES_KEY, 15)
        self.held = False

    def _content(self) -> bytes:
        return json.dumps({"lockCreateTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "lockThreadName": f"{socket.gethostname()}:{os.getpid()}:{threading.current_thread().name}",
                           "lockStacksInfo": []}).encode("utf-8")

    def _expired(self) -> bool:
        if self.expire_ms <= 0:
            return False
        info = self.storage.fs.get_file_info(self.storage.full(self.relative))
        if info.mtime_ns is None:
            return False
        return (time.time_ns() - info.mtime_ns) / 1e6 > self.expire_ms

    def try_lock(self) -> bool:
        """One attempt; an expired lock (of a dead writer) is removed and taken."""
        if self.storage.create_if_absent(self.relative, self._content()):
            self.held = True
        elif self._expired():
            self.storage.delete_file(self.relative)
            self.held = self.storage.create_if_absent(self.relative, self._content())
        return self.held

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_ms / 1000.0
        attempts = 0
        while True:
            if self.try_lock():
                return
            attempts += 1
            # Polling is a cheap file check, so wait for the whole budget rather than stopping at num_retries
            # short polls (Hudi bounds by the wait time; retries only pace the polling).
            if time.monotonic() >= deadline:
                raise LockAcquireError(
                    f"could not take the table lock {self.storage.full(self.relative)} within {self.wait_ms} ms "
                    f"({attempts} attempts): another writer holds it. Retry later; if no writer is running, the "
                    f"lock file is a leftover of a killed writer: delete it or set {LOCK_EXPIRE_KEY} (minutes)")
            time.sleep(min(self.retry_wait_ms, 200) / 1000.0 if attempts < 5 else self.retry_wait_ms / 1000.0)

    def release(self) -> None:
        if self.held:
            self.storage.delete_file(self.relative)
            self.held = False


@contextmanager
def table_lock(storage: Storage, options: Mapping[str, str] | None = None):
    """Hold the table lock for the duration of a `with` block."""
    lock = FileSystemLock(storage, options)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()
