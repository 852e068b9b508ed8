"""Spark jobs of the actions: on the driver, collect a job's (small) result rows, turning a PyHudiError raised
inside an executor back into the same error; in a task, the write token that names this attempt's files."""

from __future__ import annotations

import importlib
import re

from pyspark.sql import DataFrame

from pyhudi.errors import PyHudiError
from pyhudi.file_group.naming import write_token

# The last line(s) of a Python traceback as Spark forwards it: `<module>.<Class>: <message>`, up to a blank line,
# Spark's JVM stack trace or the end of the text.
_ERROR_PATTERN = re.compile(r"^(pyhudi(?:\.\w+)*)\.(\w+): (.*?)(?=\n\s*\n|\n\s*JVM stacktrace:|\n\tat |\Z)",
                            re.MULTILINE | re.DOTALL)


def original_error(exc: BaseException) -> PyHudiError | None:
    """The PyHudiError an executor raised, rebuilt from the Spark error that carries its traceback (the last one
    the traceback names: the error raised, not one it was raised from); None when there is none."""
    found = None
    for module_name, class_name, message in _ERROR_PATTERN.findall(str(exc)):
        try:
            cls = getattr(importlib.import_module(module_name), class_name, None)
        except ImportError:
            continue
        if isinstance(cls, type) and issubclass(cls, PyHudiError):
            found = (cls, message.strip())
    if found is None:
        return None
    cls, message = found
    try:
        return cls(message)
    except Exception:  # noqa: BLE001 - a subclass with another constructor: keep the message, lose the subclass
        return PyHudiError(message)


def collect_or_raise(df: DataFrame) -> list:
    """collect(), turning a PyHudiError raised inside an executor back into the same error on the driver."""
    try:
        return df.collect()
    except Exception as exc:  # noqa: BLE001 - rethrown below unless it carries one of our errors
        error = original_error(exc)
        if error is not None:
            raise error from None
        raise


def task_token() -> tuple[str, int]:
    """(write token of this task attempt, Spark partition id): every attempt writes files of its own name."""
    from pyspark import TaskContext
    ctx = TaskContext.get()
    if ctx is None:
        return write_token(0, 0, 0), 0
    return write_token(ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId()), ctx.partitionId()
