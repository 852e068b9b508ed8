"""DataFrame operations built in a few py4j round trips.

pyspark sends one py4j call per list element it converts and several per Column it builds (name lookup, cast,
alias), so a projection over a wide table or a scan of many files costs hundreds of calls on the driver: a large
part of a small write's or a query's fixed cost. These helpers send the whole list as one string.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T


def java_strings(spark: SparkSession, values: list[str]):
    """A JVM Seq[String] of ``values`` in four py4j calls. The values are joined by NUL, which no path, column
    name or SQL expression here holds (and none is empty, which splitAsStream would drop at the end)."""
    jvm = spark.sparkContext._jvm
    parts = jvm.java.util.regex.Pattern.compile("\0").splitAsStream("\0".join(values)).toList()
    return jvm.PythonUtils.toSeq(parts)


def select_sql(df: DataFrame, expressions: list[str]) -> DataFrame:
    """``df.selectExpr(*expressions)`` in a handful of py4j calls."""
    spark = df.sparkSession
    return DataFrame(df._jdf.selectExpr(java_strings(spark, expressions)), spark)


def quoted(name: str) -> str:
    """A column name as a SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def sql_type(spark: SparkSession, data_type: T.DataType) -> str:
    """``data_type`` as SQL text (CAST target). Atomic types by their simple string; nested ones by Spark's own
    ``DataType.sql`` (it quotes field names), which costs two py4j calls."""
    if isinstance(data_type, (T.StructType, T.ArrayType, T.MapType)):
        return spark._jsparkSession.parseDataType(data_type.json()).sql()
    return data_type.simpleString()


def map_in_arrow(df: DataFrame, func, schema) -> DataFrame:
    """``df.mapInArrow(func, schema)`` with the UDF's argument built from one SQL string.

    pyspark resolves every input column separately and sends the list element by element (~4 calls per column,
    most of a write's plan-building time). The UDF's argument only tells the optimizer that every column is needed
    (so none is pruned away): Spark hands the Python function the whole input row in either case, so a single
    ``struct(col, col, ...)`` parsed on the JVM serves."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.functions import pandas_udf
    from pyspark.util import PythonEvalType

    from py4j.protocol import Py4JError

    if isinstance(schema, str):   # a DDL string costs a py4j parse per call (~5 ms): parsed once per process
        schema = _parsed_ddl(schema)
    udf = pandas_udf(func, returnType=schema, functionType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    every_column = F.expr("struct(" + ", ".join(quoted(c) for c in df.columns) + ")")
    try:
        return DataFrame(df._jdf.mapInArrow(udf(every_column)._jc, False, None), df.sparkSession)
    except Py4JError:   # a Spark whose JVM method differs (Dataset.mapInArrow is internal): the public way
        return df.mapInArrow(func, schema)


_DDL_TYPES: dict[str, T.DataType] = {}


def _parsed_ddl(ddl: str) -> T.DataType:
    parsed = _DDL_TYPES.get(ddl)
    if parsed is None:
        from pyspark.sql.types import _parse_datatype_string
        parsed = _DDL_TYPES[ddl] = _parse_datatype_string(ddl)
    return parsed
