"""A PyHudiError raised inside a Spark task reaches the caller as the same class with its message
(commit/spark_jobs.collect_or_raise), not wrapped in Spark's PythonException / Py4JJavaError."""

from __future__ import annotations

import sys

import pytest
from pyspark import cloudpickle

from pyhudi import errors
from pyhudi.commit.spark_jobs import collect_or_raise, original_error
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
    wire = errors.WIRE_PREFIX + '{{"class": "{}", "message": "bad key", "fields": {{"field": "id"}}}}'
    assert original_error(RuntimeError("Traceback...\nos.error: x\n")) is None
    assert original_error(RuntimeError("Traceback...\n" + wire.format("os.OSError"))) is None
    assert original_error(RuntimeError("Traceback...\n" + wire.format("pyhudi.errors.NoSuchClass"))) is None
    assert original_error(RuntimeError("Traceback...\npyhudi.errors.ConfigError: bad key\n")) is None  # text only
    found = original_error(RuntimeError("Traceback...\n" + wire.format("pyhudi.errors.ConfigError")
                                        + "\n\nJVM stacktrace:\n..."))
    assert type(found) is errors.ConfigError and str(found) == "bad key" and found.fields == {"field": "id"}


def test_bad_record_in_an_executor_keeps_class_and_fields(spark, tmp_path):
    """A null record key found while a write's task generates keys: the driver gets RecordKeyError with the
    table, field and row count the task saw (not a Spark error to read)."""
    import pyhudi
    path = str(tmp_path / "t")
    options = {"hoodie.table.name": "carrier", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts"}
    pyhudi.write(spark.createDataFrame([(1, 1)], "id long, ts long"), path, options)
    bad = spark.createDataFrame([(None, 2), (None, 2), (3, 2)], "id long, ts long").repartition(1)
    with pytest.raises(errors.RecordKeyError) as info:
        pyhudi.write(bad, path, options)
    assert errors.WIRE_PREFIX in str(info.value.__context__)   # it crossed from a task as Spark's error text
    fields = info.value.fields
    assert (fields["table"], fields["field"], fields["rows"]) == ("carrier", "id", 2)
    assert "'id' is null or empty in 2 of 3 rows" in str(info.value)
    assert pyhudi.read(spark, path).count() == 1


def _no_pyhudi():
    raise ModuleNotFoundError("No module named 'pyhudi'")


def test_executors_without_pyhudi_say_how_to_fix_it(spark):
    """An executor whose Python cannot import pyhudi (a Connect server or cluster it was not installed on): an
    error that names the cause and the fix, not a stack of Spark's."""
    with pytest.raises(errors.ConfigError, match=r"executors cannot import pyhudi.*install dbt-pyhudi there too"):
        collect_or_raise(_failing(spark, _no_pyhudi))
