"""Spark jobs of the actions: on the driver, collect a job's (small) result rows, turning a PyHudiError raised
inside an executor back into the same error; in a task, the write token that names this attempt's files."""

from __future__ import annotations

import re

from pyspark.sql import DataFrame

from pyhudi import errors
from pyhudi.file_group.naming import write_token

_ERROR_PATTERN = re.compile(r"pyhudi\.errors\.(\w+): (.*?)(?:\n|$)")


def collect_or_raise(df: DataFrame) -> list:
    """collect(), turning a PyHudiError raised inside an executor back into the same error on the driver."""
    try:
        return df.collect()
    except Exception as exc:  # noqa: BLE001 - rethrown below unless it carries one of our errors
        match = _ERROR_PATTERN.search(str(exc))
        if match and isinstance(getattr(errors, match.group(1), None), type):
            raise getattr(errors, match.group(1))(match.group(2)) from None
        raise


def task_token() -> tuple[str, int]:
    """(write token of this task attempt, Spark partition id): every attempt writes files of its own name."""
    from pyspark import TaskContext
    ctx = TaskContext.get()
    if ctx is None:
        return write_token(0, 0, 0), 0
    return write_token(ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()), ctx.partitionId()
