"""dbt Python models on the in-process Spark session.

dbt compiles a Python model into a script: the user's `def model(dbt, session)`, dbt-core's `py_script_postfix`
(ref/source/config/this and `dbtObj`), then our `pyhudi_py_write_view` tail. dbt-spark ships such a script to a
Databricks cluster; here the session lives in dbt's own process, so the "job" is `exec` of the script with the
session as `spark`. The tail only turns the model's result into a temporary view: the materializations then write
the Hudi table from that view with the same SQL (CTAS, INSERT OVERWRITE, MERGE INTO) as for SQL models, so both
kinds of model share one write path and report their Hudi commit the same way.
"""

from __future__ import annotations

import linecache
import traceback
from typing import Any, Callable, Dict

from dbt.adapters.contracts.connection import AdapterResponse
from dbt_common.exceptions import DbtRuntimeError

SUBMISSION_METHOD = "session"


def read_relation(spark) -> Callable[[str], Any]:
    """dbt.ref / dbt.source: a relation's rows as a DataFrame. Through the SQL layer, so a Hudi table is read by
    pyhudi's snapshot reader (native parquet scan) as `select * from` it is in a SQL model."""
    def load(relation_name: str):
        import pyhudi
        return pyhudi.sql(spark, f"select * from {relation_name}")
    return load


def to_spark_dataframe(spark, result: Any, model_name: str):
    """The model's return value as a Spark DataFrame: Spark, pandas-on-Spark and pandas DataFrames are accepted,
    as in dbt-spark."""
    from pyspark.sql import DataFrame
    if isinstance(result, DataFrame):
        return result
    to_spark = getattr(result, "to_spark", None)          # pyspark.pandas (and koalas) DataFrames
    if callable(to_spark):
        return to_spark()
    try:
        import pandas
    except ImportError:                                    # pragma: no cover - pandas ships with pyspark's extras
        pandas = None
    if pandas is not None and isinstance(result, pandas.DataFrame):
        return spark.createDataFrame(result)
    raise DbtRuntimeError(
        f"Python model {model_name}: model() returned {type(result).__module__}.{type(result).__qualname__}; "
        "return a Spark DataFrame (or a pandas / pandas-on-Spark DataFrame).")


class SessionPythonJob:
    """dbt's PythonJobHelper for `submission_method: session`: runs the compiled model script in this process."""

    def __init__(self, parsed_model: Dict[str, Any], spark) -> None:
        self.model_name = parsed_model.get("alias") or parsed_model.get("name") or "?"
        self.path = parsed_model.get("original_file_path") or f"<python model {self.model_name}>"
        self.spark = spark

    def submit(self, compiled_code: str) -> None:
        # tracebacks show the model's own lines (the user's code comes first in the script)
        linecache.cache[self.path] = (len(compiled_code), None, compiled_code.splitlines(True), self.path)
        try:
            code = compile(compiled_code, self.path, "exec")
            exec(code, {"__name__": f"dbt_python_model_{self.model_name}", "spark": self.spark})
        except DbtRuntimeError as exc:
            raise DbtRuntimeError(f"Python model {self.model_name} ({self.path}) failed: {exc.msg}") from exc
        except Exception as exc:
            raise DbtRuntimeError(failure_message(self.model_name, self.path, exc)) from exc
        finally:
            linecache.cache.pop(self.path, None)


def failure_message(model_name: str, path: str, exc: BaseException) -> str:
    """`Python model m (models/m.py) failed: ValueError: ...`, the model's own frames (file, line, code) and the
    frame that raised; a Spark (JVM) error keeps its first paragraph, not the Java stack."""
    from dbt.adapters.pyhudi.cursor import error_message
    frames = traceback.extract_tb(exc.__traceback__)
    shown = [frame for frame in frames if frame.filename == path]
    if frames and frames[-1].filename != path:
        shown.append(frames[-1])
    where = "".join(traceback.format_list(shown)).rstrip()
    text = f"Python model {model_name} ({path}) failed: {type(exc).__name__}: {error_message(exc)}"
    return f"{text}\n{where}" if where else text


def submission_response(_result: Any) -> AdapterResponse:
    """The script only builds the model's view; the commit is reported by the statement that writes the table."""
    return AdapterResponse(_message="OK")
