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
    return C.option(options, C.HEARTBEAT_INTERVAL_MS), C.option(options, C.HEARTBEAT_TOLERABLE_MISSES)


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
    """Keeps one instant's heartbeat file fresh until `stop()`."""

    def __init__(self, storage: Storage, instant_time: str, options: Mapping[str, str] | None = None):
        self.storage = storage
        self.instant_time = instant_time
        self.interval_s = heartbeat_settings(options)[0] / 1000.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _beat(self) -> None:
        self.storage.write_bytes(heartbeat_path(self.instant_time), str(int(time.time() * 1000)).encode())

    def start(self) -> "Heartbeat":
        self._beat()
        self._thread = threading.Thread(target=self._run, name=f"pyhudi-heartbeat-{self.instant_time}",
                                        daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._beat()
            except OSError:
                pass   # a missed beat; the next one may succeed

    def stop(self, delete: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if delete:
            delete_heartbeat(self.storage, self.instant_time)
