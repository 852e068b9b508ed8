"""Writer heartbeats (Hudi's HoodieHeartbeatClient): how concurrent writers tell a live write from a dead one.

While a write runs, a daemon thread in the driver rewrites `.hoodie/.heartbeat/<instant>` every
`hoodie.client.heartbeat.interval_in_ms`. Under `hoodie.cleaner.policy.failed.writes=LAZY` (optimistic concurrency
control) a pending instant is rolled back only once its heartbeat is older than interval x
`hoodie.client.heartbeat.tolerable.misses` (or missing), so no writer ever rolls back another live writer's commit.
"""

from __future__ import annotations

import threading
import time
from typing import Mapping

from pyhudi import config as C
from pyhudi.storage import Storage
from pyhudi.timeline import METAFOLDER

HEARTBEAT_FOLDER = f"{METAFOLDER}/.heartbeat"
INTERVAL_KEY = C.HEARTBEAT_INTERVAL_MS.key               # Hudi default 60000
TOLERABLE_MISSES_KEY = C.HEARTBEAT_TOLERABLE_MISSES.key  # Hudi default 2


def heartbeat_settings(options: Mapping[str, str] | C.HoodieConfig | None) -> tuple[int, int]:
    """(interval in ms, tolerable misses) from the typed config: a bad value raises ConfigError naming the key."""
    cfg = C.HeartbeatConfig.from_options(options)
    return cfg.interval_ms, cfg.tolerable_misses


def heartbeat_path(instant_time: str) -> str:
    return f"{HEARTBEAT_FOLDER}/{instant_time}"


def is_heartbeat_expired(storage: Storage, instant_time: str, options: Mapping[str, str] | None) -> bool:
    interval_ms, misses = heartbeat_settings(options)
    info = storage.fs.get_file_info(storage.full(heartbeat_path(instant_time)))
    if info.mtime_ns is None:   # no heartbeat file: the writer never started one or is gone
        return True
    return (time.time_ns() - info.mtime_ns) / 1e6 > interval_ms * misses


def delete_heartbeat(storage: Storage, instant_time: str) -> None:
    storage.delete_file(heartbeat_path(instant_time))


class Heartbeat:
    """Keeps one instant's heartbeat file fresh until `stop()`. The first beat is written by `start()` itself;
    later ones by the process's one beater thread (no thread started or joined per write)."""

    def __init__(self, storage: Storage, instant_time: str, options: Mapping[str, str] | None = None):
        self.storage = storage
        self.instant_time = instant_time
        self.interval_s = heartbeat_settings(options)[0] / 1000.0
        self.next_due = 0.0
        self._lock = threading.Lock()    # a beat and stop() never overlap: no beat recreates a deleted file
        self._stopped = False

    def _beat(self) -> None:
        self.storage.write_bytes(heartbeat_path(self.instant_time), str(int(time.time() * 1000)).encode())

    def beat_if_running(self) -> None:
        with self._lock:
            if self._stopped:
                return
            try:
                self._beat()
            except OSError:
                pass   # a missed beat; the next one may succeed

    def start(self) -> "Heartbeat":
        self._beat()
        self.next_due = time.monotonic() + self.interval_s
        _BEATER.add(self)
        return self

    def stop(self, delete: bool = True) -> None:
        _BEATER.remove(self)
        with self._lock:
            self._stopped = True
            if delete:
                delete_heartbeat(self.storage, self.instant_time)


class _Beater:
    """The process's heartbeat thread: beats every running Heartbeat when it is due."""

    def __init__(self):
        self._running: dict[int, Heartbeat] = {}
        self._wakeup = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, heartbeat: Heartbeat) -> None:
        with self._wakeup:
            self._running[id(heartbeat)] = heartbeat
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="pyhudi-heartbeats", daemon=True)
                self._thread.start()
            self._wakeup.notify()

    def remove(self, heartbeat: Heartbeat) -> None:
        with self._wakeup:
            self._running.pop(id(heartbeat), None)

    def _run(self) -> None:
        while True:
            with self._wakeup:
                now = time.monotonic()
                due = [h for h in self._running.values() if h.next_due <= now]
                if not due:
                    wait = min((h.next_due for h in self._running.values()), default=now + 60.0) - now
                    self._wakeup.wait(timeout=max(wait, 0.001))
                    continue
                for heartbeat in due:
                    heartbeat.next_due = now + heartbeat.interval_s
            for heartbeat in due:
                heartbeat.beat_if_running()


_BEATER = _Beater()
