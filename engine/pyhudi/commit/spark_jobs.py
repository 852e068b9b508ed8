"""Spark jobs of the actions: on the driver, collect a job's (small) result rows, turning a PyHudiError raised
inside an executor back into the same error, and wait out a failed job's last tasks; in a task, the write token that
names this attempt's files and the record sequence numbers its files take."""

from __future__ import annotations

import threading
import time

from pyspark.sql import DataFrame

from pyhudi.errors import ConfigError, PyHudiError, decode_error
from pyhudi.file_group.naming import write_token


def original_error(exc: BaseException) -> PyHudiError | None:
    """The PyHudiError an executor raised, decoded from the wire line its task added to the traceback text Spark
    forwards (pyhudi.errors: class, message and fields); None when there is none."""
    return decode_error(str(exc))


def collect_or_raise(df: DataFrame) -> list:
    """collect(), turning a PyHudiError raised inside an executor back into the same error on the driver, and an
    executor without pyhudi into an error that says so."""
    try:
        return df.collect()
    except Exception as exc:  # noqa: BLE001 - rethrown below unless it carries one of our errors
        error = original_error(exc)
        if error is not None:
            raise error from None
        if _MISSING_ON_EXECUTORS in str(exc):
            raise ConfigError(
                "Spark's executors cannot import pyhudi (their Python worker said: No module named 'pyhudi'): "
                "pyhudi's tasks run in the executors' Python, so install dbt-pyhudi there too, in the Python "
                "that spark.pyspark.python / PYSPARK_PYTHON names on every worker (on Spark Connect: the "
                "server's cluster), or ship it with spark.archives. Nothing was committed.") from None
        raise


_MISSING_ON_EXECUTORS = "No module named 'pyhudi'"


def wait_for_failed_job(spark, folder: str, timeout_s: float = 60.0, quiet_s: float = 2.0) -> None:
    """Before deleting `folder`, which a failed job was writing into: wait (at most `timeout_s`) until the job's
    other tasks are done, as Spark kills them asynchronously and one can still write a file after the action
    raised. A classic session asks Spark's status tracker; Spark Connect has none, so there the folder must stay
    unchanged (no file added, grown or removed) for `quiet_s` seconds."""
    from pyhudi.spark.jvm import is_connect
    from pyhudi.spark.progress import wait_for_running_tasks

    if not is_connect(spark):
        wait_for_running_tasks(spark, timeout_s)
        return
    from pyhudi.storage import Storage

    storage = Storage(folder)

    def files() -> list:
        return sorted((info.path, info.size, info.mtime_ns) for info in storage.list_files("", recursive=True))

    deadline = time.monotonic() + timeout_s
    seen, unchanged_since = files(), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - unchanged_since < quiet_s:
        time.sleep(0.2)
        now = files()
        if now != seen:
            seen, unchanged_since = now, time.monotonic()


def task_token() -> tuple[str, int]:
    """(write token of this task attempt, Spark partition id): every attempt writes files of its own name."""
    from pyspark import TaskContext
    ctx = TaskContext.get()
    if ctx is None:
        return write_token(0, 0, 0), 0
    return write_token(ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()), ctx.partitionId()


_SEQUENCE_LOCK = threading.Lock()
_sequence = {"token": None, "next": 0}   # this worker's current task attempt and its next free sequence number


def reserve_sequence(token: str, count: int) -> int:
    """The first of ``count`` record sequence numbers (the last part of ``_hoodie_commit_seqno``) for one file the
    task attempt ``token`` writes. A task writes several files (one per file group, some side by side in threads)
    under one Spark partition id; disjoint ranges keep every seqno of a commit unique, as Hudi's one task per file
    group does. A Python worker runs one task at a time, so a new token starts again at 0."""
    with _SEQUENCE_LOCK:
        if _sequence["token"] != token:
            _sequence.update(token=token, next=0)
        start = _sequence["next"]
        _sequence["next"] = start + count
    return start
