"""py4j_calls builds DataFrame operations from one string instead of one py4j call per element: the results must
be exactly pyspark's own (values, types, names, and no column pruned away from a Python function)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import functions as F

from pyhudi.spark.jvm import java_strings, map_in_arrow, quoted, select_sql, sql_type


def test_java_strings_keep_every_value_in_order(spark):
    values = ["file:/t/dt=a b/x.parquet", "c\\[x\\]", "é/ü", "", "with`tick", "last"]
    seq = java_strings(spark, values)
    assert [seq.apply(i) for i in range(seq.size())] == values


def test_select_sql_casts_like_column_cast(spark):
    df = spark.createDataFrame([(1, "a", (1, "x"), [1, 2], {"k": 1})],
                               "ID int, `we ird` string, s struct<`a b`:int, c:string>, arr array<int>, "
                               "m map<string,int>")
    target = spark.createDataFrame([], "id long, `we ird` string, s struct<`a b`:long, c:string>, "
                                       "arr array<long>, m map<string,long>, missing string").schema
    present = {c.lower(): c for c in df.columns}
    exprs = [f"CAST({quoted(present[f.name.lower()]) if f.name.lower() in present else 'NULL'} AS "
             f"{sql_type(f.dataType)}) AS {quoted(f.name)}" for f in target.fields]
    ours = select_sql(df, exprs)
    pyspark_way = df.select(*[(df[present[f.name.lower()]] if f.name.lower() in present else F.lit(None))
                              .cast(f.dataType).alias(f.name) for f in target.fields])
    assert ours.schema == pyspark_way.schema == target
    assert ours.collect() == pyspark_way.collect()


def test_map_in_arrow_hands_the_function_every_column_even_when_the_query_keeps_one(spark):
    df = spark.range(10).selectExpr("id", "id * 2 AS b", "'x' AS `c c`").filter("id > 2")
    seen = spark.sparkContext.accumulator(0)

    def add(batches):
        for batch in batches:
            assert batch.schema.names == ["id", "b", "c c"], batch.schema.names
            seen.add(batch.num_rows)
            yield pa.RecordBatch.from_arrays([pc.add(batch.column(0), batch.column(1)), batch.column(2)],
                                             names=["s", "c"])

    out = map_in_arrow(df, add, "s long, c string")
    assert sorted(r.s for r in out.select("s").collect()) == [3 * i for i in range(3, 10)]
    assert seen.value == 7
    assert out.schema.simpleString() == df.mapInArrow(add, "s long, c string").schema.simpleString()
