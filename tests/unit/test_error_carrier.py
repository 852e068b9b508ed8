"""The executor -> driver wire form of a PyHudiError (pyhudi.errors.encode_error / decode_error): class, message
and fields survive the text Spark forwards, whatever surrounds the line."""

from __future__ import annotations

import pytest

from pyhudi import errors
from pyhudi.file_group.log_file import LogFileNameError


@pytest.mark.parametrize("error", [
    errors.RecordKeyError("table 't': record key field 'id' is null\nfill it", table="t", field="id", rows=2),
    errors.ConfigError("option hoodie.x='é' is invalid"),
    LogFileNameError("log file name .x_1.log.z is not Hudi's", path="p/.x_1.log.z"),
])
def test_round_trip_inside_spark_like_text(error):
    text = ("org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n  File ...\n"
            f"{type(error).__module__}.{type(error).__name__}: {error}\n{errors.encode_error(error)}\n\n"
            "JVM stacktrace:\n\tat org.apache.spark...")
    found = errors.decode_error(text)
    assert type(found) is type(error)
    assert str(found) == str(error) and found.fields == error.fields


def test_last_line_wins_and_garbage_is_skipped():
    cause = errors.CorruptFileError("cause", path="a")
    raised = errors.SchemaError("raised", field="b")
    text = "\n".join([errors.encode_error(cause), "The above exception was the direct cause",
                      errors.encode_error(raised), errors.WIRE_PREFIX + "{not json}"])
    found = errors.decode_error(text)
    assert type(found) is errors.SchemaError and found.fields == {"field": "b"}


def test_no_wire_line_outside_a_task():
    error = errors.RecordKeyError("driver-side", table="t")
    assert error.fields == {"table": "t"}
    assert not getattr(error, "__notes__", None)   # the driver shows people the message only
    assert errors.decode_error(str(error)) is None
