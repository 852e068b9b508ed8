"""A PyHudiError raised inside a Spark task reaches the caller as the same class with its message
(actions/spark_jobs.collect_or_raise), not wrapped in Spark's PythonException / Py4JJavaError."""

from __future__ import annotations

import sys

import pytest
from pyspark import cloudpickle

from pyhudi import errors
from pyhudi.actions.spark_jobs import collect_or_raise, original_error
from pyhudi.file_group.log_file import LogFileNameError

cloudpickle.register_pickle_by_value(sys.modules[__name__])   # executors cannot import this test module


def _failing(spark, raise_it):
    def run(batches):
        for batch in batches:
            raise_it()
            yield batch
    return spark.range(0, 4, numPartitions=1).mapInArrow(run, "id long")


def _corrupt():
    raise errors.CorruptFileError("Hudi base file us/f1_0-1-1_1.parquet of table t is 10 bytes but its commit "
                                  "wrote 90: it was truncated.\nRestore the file, or roll back the instant.")


def _chained():
    try:
        raise ValueError("pyarrow could not read the footer")
    except ValueError as exc:
        raise errors.CorruptFileError("base file x.parquet is damaged; restore it") from exc


def _log_name():
    raise LogFileNameError("log file name .x_1.log.z is not Hudi's")


def test_executor_error_keeps_its_class_and_whole_message(spark):
    with pytest.raises(errors.CorruptFileError) as info:
        collect_or_raise(_failing(spark, _corrupt))
    assert str(info.value) == ("Hudi base file us/f1_0-1-1_1.parquet of table t is 10 bytes but its commit wrote 90: "
                               "it was truncated.\nRestore the file, or roll back the instant.")


def test_the_error_raised_wins_over_its_cause(spark):
    with pytest.raises(errors.CorruptFileError, match="base file x.parquet is damaged; restore it$"):
        collect_or_raise(_failing(spark, _chained))


def test_pyhudi_errors_outside_pyhudi_errors_module(spark):
    with pytest.raises(LogFileNameError, match="is not Hudi's"):
        collect_or_raise(_failing(spark, _log_name))


def test_other_errors_stay_sparks(spark):
    def boom():
        raise ZeroDivisionError("not ours")
    with pytest.raises(Exception, match="not ours") as info:
        collect_or_raise(_failing(spark, boom))
    assert not isinstance(info.value, errors.PyHudiError)


def test_original_error_ignores_non_pyhudi_classes():
    assert original_error(RuntimeError("Traceback...\nos.error: x\n")) is None
    assert original_error(RuntimeError("Traceback...\npyhudi.errors.NoSuchClass: x\n")) is None
    found = original_error(RuntimeError("Traceback...\npyhudi.errors.ConfigError: bad key\n\nJVM stacktrace:\n..."))
    assert type(found) is errors.ConfigError and str(found) == "bad key"
