"""Lock and heartbeat config: optimistic concurrency control's table lock (FileSystemBasedLockProvider) and the
writers' heartbeats (Hudi's HoodieLockConfig, HoodieWriteConfig heartbeat keys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pyhudi.config.core import POSITIVE, declare, whole_number
from pyhudi.config.resolve import HoodieConfig, read_settings, setting

LOCK_PROVIDER = declare("hoodie.write.lock.provider",
                        "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
                        doc="Lock provider class. Hudi's default is ZookeeperBasedLockProvider; pyhudi implements "
                            "FileSystemBasedLockProvider only and uses it when the key is unset.")
LOCK_FILESYSTEM_PATH = declare("hoodie.write.lock.filesystem.path", None,
                               doc="Folder of the lock file; default: the table's .hoodie folder.")
LOCK_FILESYSTEM_EXPIRE = declare("hoodie.write.lock.filesystem.expire", 0, whole_number,
                                 doc="Minutes after which a lock not refreshed belongs to a dead writer and is taken "
                                     "over; 0 = never expires.")
LOCK_WAIT_TIME_MS = declare("hoodie.write.lock.wait_time_ms", 60000, whole_number,
                            doc="Milliseconds to wait for the lock before giving up.")
LOCK_RETRY_WAIT_TIME_MS = declare("hoodie.write.lock.wait_time_ms_between_retry", 1000, whole_number,
                                  doc="Milliseconds between two attempts to take the lock.")
LOCK_NUM_RETRIES = declare("hoodie.write.lock.num_retries", 15, whole_number,
                           doc="Attempts to take the lock (together with wait_time_ms).")
HEARTBEAT_INTERVAL_MS = declare("hoodie.client.heartbeat.interval_in_ms", 60000, POSITIVE,
                                doc="Milliseconds between heartbeats; 0 would make every live writer look dead.")
HEARTBEAT_TOLERABLE_MISSES = declare("hoodie.client.heartbeat.tolerable.misses", 2, POSITIVE,
                                     doc="Missed heartbeats after which a pending write counts as failed (LAZY).")


@dataclass(frozen=True)
class LockConfig:
    """The table lock's options, parsed once (only the keys it reads: other options are validated elsewhere)."""

    provider: str = setting(LOCK_PROVIDER)
    filesystem_path: str | None = setting(LOCK_FILESYSTEM_PATH)
    expire_minutes: int = setting(LOCK_FILESYSTEM_EXPIRE)
    wait_ms: int = setting(LOCK_WAIT_TIME_MS)
    retry_wait_ms: int = setting(LOCK_RETRY_WAIT_TIME_MS)
    num_retries: int = setting(LOCK_NUM_RETRIES)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | HoodieConfig | None) -> LockConfig:
        return read_settings(cls, options)


@dataclass(frozen=True)
class HeartbeatConfig:
    interval_ms: int = setting(HEARTBEAT_INTERVAL_MS)
    tolerable_misses: int = setting(HEARTBEAT_TOLERABLE_MISSES)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | HoodieConfig | None) -> HeartbeatConfig:
        return read_settings(cls, options)
