"""Errors for people: every pyhudi failure names the table, field or file and says how to fix it.

All errors derive from PyHudiError so callers (the SQL layer, dbt) can catch one type. An error may carry
structured fields (``table``, ``field``, ``path``, ``rows``...) besides its message, for callers that act on them.

Errors raised inside a Spark task cross to the driver only as traceback text, so a PyHudiError created in a task
adds one note line in the wire format below; ``decode_error`` turns the last such line of a Spark error back into
the same class with the same message and fields (``pyhudi.commit.spark_jobs.collect_or_raise``):

    pyhudi-error/1 {"class": "<module>.<QualifiedName>", "message": "<str(error)>", "fields": {...}}

(one line: JSON escapes the message's newlines). The class must be a PyHudiError subclass importable on the driver.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from typing import Any

WIRE_PREFIX = "pyhudi-error/1 "
_WIRE_LINE = re.compile(r"^[ \t]*" + re.escape(WIRE_PREFIX) + r"(\{.*\})[ \t]*$", re.MULTILINE)


class PyHudiError(Exception):
    """Base class of every error pyhudi raises on purpose; keyword arguments become its ``fields``."""

    def __init__(self, *args: Any, **fields: Any):
        super().__init__(*args)
        self.fields: dict[str, Any] = fields
        # BaseException.add_note is Python 3.11+: on 3.10 the error crosses as Spark's plain traceback text (3.10's
        # traceback would not print a note either), rather than failing here with an AttributeError that hides it.
        if sys.version_info >= (3, 11) and _in_spark_task():
            self.add_note(encode_error(self))


class ConfigError(PyHudiError, ValueError):
    """A hoodie.* option has a wrong value, or a required option is missing."""


class NotAHudiTableError(PyHudiError, FileNotFoundError):
    """The path holds no .hoodie/hoodie.properties."""


class UnsupportedTableVersionError(PyHudiError):
    """The table was written with a table/timeline version pyhudi cannot handle."""


class RecordKeyError(PyHudiError, ValueError):
    """A record key field is missing from the batch, or a record has a null/empty key."""


class PartitionPathError(PyHudiError, ValueError):
    """A partition path field is missing, or a value cannot be turned into a partition path."""


class SchemaError(PyHudiError, ValueError):
    """The batch's schema clashes with the table's (missing field, incompatible type)."""


class TimelineError(PyHudiError):
    """The timeline is in a state that forbids the requested action (e.g. an instant already exists)."""


class CorruptFileError(PyHudiError):
    """A data, log or timeline file cannot be decoded."""


class WriteConflictError(PyHudiError):
    """A concurrent writer committed changes to the same file groups."""


class DuplicateKeyError(PyHudiError):
    """An insert met a stored record of its key under a policy that forbids it (Hudi's
    HoodieDuplicateKeyException: SQL strict insert mode, hoodie.datasource.insert.dup.policy=fail)."""


class SqlError(PyHudiError, ValueError):
    """A SQL statement cannot be parsed or names something pyhudi's SQL layer does not support."""


# --- the executor -> driver carrier ------------------------------------------------------------------------------
def _in_spark_task() -> bool:
    """True inside a Spark task (a Python worker), where an error reaches the driver only as text."""
    if "pyspark" not in sys.modules:
        return False
    try:
        from pyspark import TaskContext
        return TaskContext.get() is not None
    except Exception:  # noqa: BLE001 - no task context: the driver
        return False


def encode_error(error: PyHudiError) -> str:
    """The one-line wire form of `error` (class, message, fields)."""
    cls = type(error)
    payload = {"class": f"{cls.__module__}.{cls.__qualname__}", "message": str(error),
               "fields": getattr(error, "fields", {}) or {}}
    return WIRE_PREFIX + json.dumps(payload, default=str, sort_keys=True)


def decode_error(text: str) -> PyHudiError | None:
    """The PyHudiError whose wire line is the last in `text` (the error raised, not one it was raised from);
    None when `text` carries none or names no importable PyHudiError class."""
    for match in reversed(_WIRE_LINE.findall(text)):
        try:
            payload = json.loads(match)
            module_name, _, class_name = str(payload["class"]).rpartition(".")
            cls = getattr(importlib.import_module(module_name), class_name, None)
        except (ValueError, KeyError, TypeError, ImportError):
            continue
        if not (isinstance(cls, type) and issubclass(cls, PyHudiError)):
            continue
        error = cls.__new__(cls)   # the class's own __init__ may take other arguments: restore state directly
        Exception.__init__(error, str(payload.get("message", "")))
        error.fields = dict(payload.get("fields") or {})
        return error
    return None
