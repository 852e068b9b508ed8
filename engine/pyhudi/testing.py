"""Fault injection for crash-recovery tests.

`crash_point(name)` ends the process at once (os._exit(137), like `kill -9`: no cleanup, no finally blocks) when
the environment variable PYHUDI_CRASH_AT names that point; otherwise it does nothing. Executors inherit the
driver's environment, so a point inside a Spark task kills that task's Python worker.

Points (see the README): write.after_requested, write.after_inflight, write.executor.after_file,
write.before_complete, write.after_complete, compaction.after_inflight, compaction.before_commit,
rollback.after_plan, rollback.after_instant_deleted, rollback.before_complete, restore.after_first_rollback,
savepoint.after_inflight, occ.holding_lock.
"""

from __future__ import annotations

import os

CRASH_ENV = "PYHUDI_CRASH_AT"
CRASH_EXIT_CODE = 137


def crash_point(name: str) -> None:
    wanted = os.environ.get(CRASH_ENV)
    if wanted and wanted == name:
        os._exit(CRASH_EXIT_CODE)
