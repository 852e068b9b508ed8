"""Errors for people: every pyhudi failure names the table, field or file and says how to fix it.

All errors derive from PyHudiError so callers (the SQL layer, dbt) can catch one type.
"""


class PyHudiError(Exception):
    """Base class of every error pyhudi raises on purpose."""


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


class SqlError(PyHudiError, ValueError):
    """A SQL statement cannot be parsed or names something pyhudi's SQL layer does not support."""
