"""The one seam between a classic Spark session (a JVM in this process, reached through py4j) and a Spark Connect
session (none): DataFrame operations built in a few py4j round trips on classic, the public API on Connect; and the
driver-side Spark features Connect lacks (the context's default parallelism, broadcast variables; accumulators:
index/bloom.py keeps its counters in the table's storage there).

pyspark sends one py4j call per list element it converts and several per Column it builds (name lookup, cast,
alias), so a projection over a wide table or a scan of many files costs hundreds of calls on the driver: a large
part of a small write's or a query's fixed cost. These helpers send the whole list as one string.
"""

from __future__ import annotations

import re
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T


def is_connect(obj: Any) -> bool:
    """A Spark Connect session, or a DataFrame of one: no JVM in this process, no SparkContext."""
    return type(obj).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """SparkContext.defaultParallelism; on Spark Connect the server's spark.default.parallelism, else its
    spark.sql.shuffle.partitions (set either to the cluster's cores)."""
    if not is_connect(spark):
        return spark.sparkContext.defaultParallelism
    value = spark.conf.get("spark.default.parallelism", None) or spark.conf.get("spark.sql.shuffle.partitions", "2")
    return max(1, int(str(value)))


class Shared:
    """A value tasks read as `.value`: a broadcast variable on classic Spark; on Spark Connect (no broadcast
    variables) the value itself, pickled with each task's function."""

    def __init__(self, value: Any):
        self.value = value


def share(spark: SparkSession, value: Any) -> Any:
    """`value` for every task: broadcast once on classic, shipped with the tasks on Spark Connect."""
    return Shared(value) if is_connect(spark) else spark.sparkContext.broadcast(value)


_SERVED_SCHEMES: dict[tuple[int, str], bool] = {}


def hadoop_serves(spark: SparkSession, uri: str) -> bool:
    """Whether Spark's own file sources can read ``uri``: its Hadoop configuration has a filesystem for the scheme
    (s3a:// needs the hadoop-aws jar, gs:// Google's connector). Local paths always; on Spark Connect the server is
    trusted to (a Connect client cannot ask its JVM)."""
    scheme = uri.split("://", 1)[0].lower() if "://" in uri else "file"
    if scheme == "file" or is_connect(spark):
        return True
    key = (id(spark), scheme)
    if key not in _SERVED_SCHEMES:
        from py4j.protocol import Py4JJavaError
        context = spark.sparkContext
        try:
            context._jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, context._jsc.hadoopConfiguration())
            _SERVED_SCHEMES[key] = True
        except Py4JJavaError:     # UnsupportedFileSystemException, or the connector's class is not on the classpath
            _SERVED_SCHEMES[key] = False
    return _SERVED_SCHEMES[key]


def one_row_per_task(spark: SparkSession, rows: list, ddl: str) -> DataFrame:
    """A DataFrame of `rows` (schema `ddl`), one row per Spark partition, so each row's task runs apart: an RDD
    parallelized to exactly that many slices on classic, a repartition on Spark Connect (no RDDs)."""
    if is_connect(spark):
        return spark.createDataFrame(rows, ddl).repartition(len(rows))
    return spark.createDataFrame(spark.sparkContext.parallelize(rows, len(rows)), ddl)


def java_strings(spark: SparkSession, values: list[str]):
    """A JVM Seq[String] of ``values`` in four py4j calls. The values are joined by NUL, which no path, column
    name or SQL expression here holds (and none is empty, which splitAsStream would drop at the end)."""
    jvm = spark.sparkContext._jvm
    parts = jvm.java.util.regex.Pattern.compile("\0").splitAsStream("\0".join(values)).toList()
    return jvm.PythonUtils.toSeq(parts)


def select_sql(df: DataFrame, expressions: list[str]) -> DataFrame:
    """``df.selectExpr(*expressions)`` in a handful of py4j calls."""
    if is_connect(df):
        return df.selectExpr(*expressions)
    spark = df.sparkSession
    return DataFrame(df._jdf.selectExpr(java_strings(spark, expressions)), spark)


def read_parquet(spark: SparkSession, schema: T.StructType, paths: list[str]) -> DataFrame:
    """``spark.read.schema(schema).parquet(*paths)``, the paths sent in a few py4j calls on classic Spark."""
    reader = spark.read.schema(schema)
    if is_connect(spark):
        return reader.parquet(*paths)
    return reader._df(reader._jreader.parquet(java_strings(spark, paths)))


_PLAN_SIZE = re.compile(r"Statistics\(sizeInBytes=([0-9.]+) ([KMGTPE]?i?B)\b")
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60}


def optimized_plan(df: DataFrame) -> tuple[int, str, bool]:
    """Spark's optimized logical plan of ``df`` without running it: (its size estimate in bytes, its text, whether
    it is deterministic). On Spark Connect from the plan explained in cost mode (one round trip; the estimate as
    Spark prints it, to three digits), and taken as not deterministic (Connect does not say)."""
    if is_connect(df):
        text = df._explain_string(mode="cost")
        text = text.split("== Physical Plan ==", 1)[0]
        found = _PLAN_SIZE.search(text)
        if found is None:
            raise ValueError("no size estimate in the optimized plan")
        return int(float(found.group(1)) * _UNITS[found.group(2)]), text, False
    plan = df._jdf.queryExecution().optimizedPlan()
    return int(str(plan.stats().sizeInBytes())), plan.toString(), bool(plan.deterministic())


def quoted(name: str) -> str:
    """A column name as a SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def sql_type(data_type: T.DataType) -> str:
    """``data_type`` as SQL text (CAST target), as Spark's ``DataType.sql`` writes it: atomic types by their simple
    string, nested ones with quoted field names."""
    if isinstance(data_type, T.StructType):
        fields = ", ".join(f"{quoted(f.name)}: {sql_type(f.dataType)}" for f in data_type.fields)
        return f"STRUCT<{fields}>"
    if isinstance(data_type, T.ArrayType):
        return f"ARRAY<{sql_type(data_type.elementType)}>"
    if isinstance(data_type, T.MapType):
        return f"MAP<{sql_type(data_type.keyType)}, {sql_type(data_type.valueType)}>"
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

    if is_connect(df):
        return df.mapInArrow(func, schema)
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
