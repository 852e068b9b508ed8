"""Hudi's FileSystemBasedLockProvider: a table-wide lock for optimistic concurrency control.

The lock is the file `<hoodie.write.lock.filesystem.path or .hoodie>/lock`, created atomically with
`Storage.create_if_absent` (a hard link on local disks). Its JSON names a unique owner token, so only the owner
refreshes or releases it. A lock not refreshed for `hoodie.write.lock.filesystem.expire` minutes (0 = never)
belongs to a dead writer and is taken over: the check "still the same expired file" and the atomic replace run
under an advisory lock on the lock's folder (flock; released by the OS if the process dies), as do refresh and
release, so a takeover never removes a lock another writer has just taken. While held, a background thread
touches the file every quarter of the expiry, so a long action under the lock never looks dead.
Acquisition polls every `hoodie.write.lock.wait_time_ms_between_retry` ms, up to `hoodie.write.lock.wait_time_ms`.
On object stores the lock file is created by a conditional write, so taking a free lock is atomic there too, and
a takeover or a refresh is a write conditional on the ETag read (If-Match): the same guarantee without flock.
Release there is a refresh and then a delete (obstore has no conditional delete): the refresh fails if another
writer took the lock over, and once it succeeds the file is fresh, so nobody can take it over before the delete.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from typing import Mapping

from pyhudi import config as C
from pyhudi.errors import ConfigError, PyHudiError
from pyhudi.storage import Storage
from pyhudi.storage.object_store import read_versioned, replace_if_unchanged
from pyhudi.timeline import METAFOLDER

try:
    import fcntl
except ImportError:        # not POSIX: no guard, best effort as on object stores
    fcntl = None

# The hoodie.write.lock.* keys, their defaults and docs are declared once in config/lock.py (C.LOCK_*, C.LockConfig).
FILESYSTEM_LOCK_PROVIDER = C.LOCK_PROVIDER.default
LOCK_FILE_NAME = "lock"
OWNER_FIELD = "lockOwner"

log = logging.getLogger(__name__)


class LockAcquireError(PyHudiError):
    """The table lock could not be taken in time (another writer holds it)."""


class LockLostError(PyHudiError):
    """The table lock expired while held and another writer took it over."""


def _owner_of(data: bytes) -> str:
    """The owner token in a lock file's JSON; "" when it names none."""
    try:
        return str(json.loads(data.decode("utf-8")).get(OWNER_FIELD) or "")
    except (ValueError, AttributeError):
        return ""


class FileSystemLock:
    """One writer's handle on the table lock (not re-entrant)."""

    def __init__(self, storage: Storage, options: Mapping[str, str] | None = None):
        cfg = C.LockConfig.from_options(options)
        provider = cfg.provider
        if provider != FILESYSTEM_LOCK_PROVIDER:
            raise ConfigError(f"{C.LOCK_PROVIDER.key}={provider} is not supported by pyhudi; use "
                              f"{FILESYSTEM_LOCK_PROVIDER} (a lock file next to the table)")
        folder = cfg.filesystem_path
        if folder:
            self.storage = Storage(str(folder).rstrip("/"))
            self.relative = LOCK_FILE_NAME
        else:
            self.storage = storage
            self.relative = f"{METAFOLDER}/{LOCK_FILE_NAME}"
        self.expire_ms = cfg.expire_minutes * 60_000
        self.wait_ms = cfg.wait_ms
        self.retry_wait_ms = cfg.retry_wait_ms
        self.retries = cfg.num_retries
        self.token = uuid.uuid4().hex
        self.held = False
        self.lost = False           # set when the refresher finds the lock taken over by another writer
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None

    # --- the lock file ------------------------------------------------------------------------------------
    def _content(self) -> bytes:
        return json.dumps({"lockCreateTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "lockThreadName": f"{socket.gethostname()}:{os.getpid()}:{threading.current_thread().name}",
                           "lockStacksInfo": [], OWNER_FIELD: self.token}).encode("utf-8")

    def _owner(self) -> str | None:
        """Owner token of the lock file now: None when there is none, "" when it names no owner (a lock written
        by Java Hudi or a truncated file)."""
        try:
            data = self.storage.read_bytes(self.relative)
        except FileNotFoundError:
            return None
        return _owner_of(data)

    def _expired(self) -> bool:
        if self.expire_ms <= 0:
            return False
        info = self.storage.fs.get_file_info(self.storage.full(self.relative))
        if info.mtime_ns is None:
            return False
        return (time.time_ns() - info.mtime_ns) / 1e6 > self.expire_ms

    def _replace(self, content: bytes) -> None:
        """Overwrite the local lock file in one step (readers see the old or the new file, never a partial one);
        object stores replace it conditionally instead (replace_if_unchanged)."""
        final = self.storage.full(self.relative)
        temp = f"{os.path.dirname(final)}/.{os.path.basename(final)}.{self.token}.tmp"
        with open(temp, "wb") as out:
            out.write(content)
        os.replace(temp, final)

    @contextmanager
    def _guard(self):
        """Exclusive advisory lock on the lock's folder for a check-then-change of the lock file."""
        if fcntl is None or not self.storage.is_local:
            yield
            return
        folder = os.path.dirname(self.storage.full(self.relative))
        os.makedirs(folder, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)          # closing releases the flock

    # --- acquire / refresh / release -----------------------------------------------------------------------
    def try_lock(self) -> bool:
        """One attempt: create the lock file, or take over an expired one if it is still the one seen expired."""
        if self.held:
            return True
        if self.storage.create_if_absent(self.relative, self._content(), durable=False):
            return self._now_held()
        if not self.storage.is_local:
            return self._take_over_expired_object()
        if not self._expired():
            return False
        with self._guard():
            owner = self._owner()
            if owner is None:                       # released meanwhile: race for it like everyone else
                taken = self.storage.create_if_absent(self.relative, self._content(), durable=False)
            elif self._expired():                   # still expired under the guard: nobody refreshed or took it
                log.warning("taking over the expired table lock %s (owner %s)", self.storage.full(self.relative),
                            owner or "unknown")
                self._replace(self._content())
                taken = True
            else:
                taken = False
        return self._now_held() if taken else False

    def _take_over_expired_object(self) -> bool:
        """On an object store the takeover is one conditional write (If-Match on the ETag seen expired): of writers
        taking over at once, one wins; a refresh by the owner in between makes every takeover fail."""
        if self.expire_ms <= 0:
            return False
        uri = self.storage.uri(self.relative)
        seen = read_versioned(uri)
        if seen is None:                            # released meanwhile: race for it like everyone else
            taken = self.storage.create_if_absent(self.relative, self._content(), durable=False)
        else:
            content, version, modified_ns = seen
            if (time.time_ns() - modified_ns) / 1e6 <= self.expire_ms:
                return False
            log.warning("taking over the expired table lock %s (owner %s)", uri, _owner_of(content) or "unknown")
            taken = replace_if_unchanged(uri, self._content(), version)
        return self._now_held() if taken else False

    def _now_held(self) -> bool:
        self.held, self.lost = True, False
        if self.expire_ms > 0:
            self._stop.clear()
            self._refresher = threading.Thread(target=self._refresh_loop, name=f"pyhudi-lock-refresh-{self.token[:8]}",
                                               daemon=True)
            self._refresher.start()
        return True

    def refresh(self) -> bool:
        """Touch the lock file if it is still ours (so it does not expire); False (and `lost`) when it is not."""
        if not self.storage.is_local:   # rewritten only if unchanged since read: a takeover in between wins
            uri = self.storage.uri(self.relative)
            seen = read_versioned(uri)
            if seen is None or _owner_of(seen[0]) != self.token \
                    or not replace_if_unchanged(uri, self._content(), seen[1]):
                self.lost = True
                return False
            return True
        with self._guard():
            if self._owner() != self.token:
                self.lost = True
                return False
            os.utime(self.storage.full(self.relative))
            return True

    def _refresh_loop(self) -> None:
        interval = max(self.expire_ms / 4.0, 10.0) / 1000.0
        while not self._stop.wait(interval):
            try:
                if not self.refresh():
                    log.error("the table lock %s was taken over by another writer while held",
                              self.storage.full(self.relative))
                    return
            except OSError as error:      # keep trying: a transient error must not end the refreshes
                log.warning("could not refresh the table lock %s: %s", self.storage.full(self.relative), error)

    def check_held(self) -> None:
        """Raise LockLostError unless the lock file is still ours (call before publishing under the lock)."""
        if not self.held or self._owner() != self.token:
            self.lost = True
            raise LockLostError(f"the table lock {self.storage.full(self.relative)} is no longer held by this writer "
                                f"(it expired after {C.LOCK_FILESYSTEM_EXPIRE.key} and another writer took it over); "
                                "nothing was published: retry the action")

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
                    "lock file is a leftover of a killed writer: delete it or set "
                    f"{C.LOCK_FILESYSTEM_EXPIRE.key} (minutes)")
            time.sleep(min(self.retry_wait_ms, 200) / 1000.0 if attempts < 5 else self.retry_wait_ms / 1000.0)

    def release(self) -> None:
        """Stop refreshing and delete the lock file, only if it is still ours (a lock another writer took over
        after it expired stays theirs)."""
        if not self.held:
            return
        self._stop.set()
        if self._refresher is not None and self._refresher is not threading.current_thread():
            self._refresher.join()
        self._refresher = None
        self.held = False
        if not self.storage.is_local:
            if self.refresh():   # still ours, and fresh until the delete: no takeover can come in between
                self.storage.delete_file(self.relative)
                return
        else:
            with self._guard():
                if self._owner() == self.token:
                    self.storage.delete_file(self.relative)
                    return
        self.lost = True
        log.error("the table lock %s was taken over by another writer before this one released it; left to them",
                  self.storage.full(self.relative))


@contextmanager
def table_lock(storage: Storage, options: Mapping[str, str] | None = None):
    """Hold the table lock for the duration of a `with` block."""
    lock = FileSystemLock(storage, options)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()
