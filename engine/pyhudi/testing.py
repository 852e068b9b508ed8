"""Fault injection for crash-recovery tests.

`crash_point(name)` ends the process at once (os._exit(137), like `kill -9`: no cleanup, no finally blocks) when
the environment variable PYHUDI_CRASH_AT names that point; otherwise it does nothing. Executors inherit the
driver's environment, so a point inside a Spark task kills that task's Python worker.

`task_failure_point(name)` raises in the first attempt of a Spark task (TaskContext.attemptNumber() == 0) when
PYHUDI_FAIL_FIRST_ATTEMPT names that point: with a master that retries tasks (`local[2,3]`), the retry succeeds
and the failed attempt's files stay behind, as a retried or speculative task's do on a cluster. With
PYHUDI_FAIL_FIRST_ATTEMPT_LOG naming a file, each injected failure appends a line to it.

Points (docs/contributing.md lists each with where it fires; a test keeps that list whole): write.after_requested, write.after_inflight, write.executor.after_file,
write.before_complete, write.after_complete, compaction.after_inflight, compaction.before_commit,
rollback.after_plan, rollback.after_instant_deleted, rollback.before_complete, restore.after_first_rollback,
savepoint.after_inflight, clean.after_inflight, clean.before_complete, occ.holding_lock. Task failure points: write.executor.after_file.
"""

from __future__ import annotations

import os

CRASH_ENV = "PYHUDI_CRASH_AT"
CRASH_EXIT_CODE = 137
TASK_FAILURE_ENV = "PYHUDI_FAIL_FIRST_ATTEMPT"
TASK_FAILURE_LOG_ENV = "PYHUDI_FAIL_FIRST_ATTEMPT_LOG"   # optional: a file that gets one line per injected failure


def crash_point(name: str) -> None:
    wanted = os.environ.get(CRASH_ENV)
    if wanted and wanted == name:
        os._exit(CRASH_EXIT_CODE)


class InjectedTaskFailure(RuntimeError):
    """The failure task_failure_point raises (Spark retries the task)."""


def task_failure_point(name: str) -> None:
    wanted = os.environ.get(TASK_FAILURE_ENV)
    if not wanted or wanted != name:
        return
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is not None and context.attemptNumber() == 0:
        log = os.environ.get(TASK_FAILURE_LOG_ENV)
        if log:
            with open(log, "a", encoding="utf-8") as out:
                out.write(f"{name} {context.stageId()}.{context.partitionId()}\n")
        raise InjectedTaskFailure(f"injected task failure at {name} (attempt 0 of task {context.partitionId()})")
