"""CALL procedures with Hudi's names, arguments and result columns (hudi-spark .../command/procedures/*.scala).

`PROCEDURES` maps a procedure name to a Procedure: its parameters (named `table => 't'` or positional, in
Hudi's order) and its output StructType; `call(spark, "name(args)")` runs one. The registry is
procedure_registry.py; the procedures register themselves from their family modules (service_calls,
timeline_calls, table_calls), imported here. Engine services are imported lazily: a service that is not part of
this build raises SqlError saying so.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from pyhudi.errors import SqlError
from pyhudi.sqlext import service_calls, table_calls, timeline_calls  # noqa: F401 - they register the procedures
from pyhudi.sqlext.call_args import bind, parse_call
from pyhudi.sqlext.procedure_registry import PROCEDURES


def call(spark: SparkSession, text: str) -> DataFrame:
    name, positional, named = parse_call(text)
    proc = PROCEDURES.get(name)
    if proc is None:
        raise SqlError(f"unknown procedure {name!r}; available: {', '.join(sorted(PROCEDURES))}")
    args = bind(proc, positional, named)
    return spark.createDataFrame(proc.run(spark, args), proc.output)


__all__ = ["PROCEDURES", "call"]
