"""dbt Python models (issue 16 item 3): `def model(dbt, session)` runs in dbt's process on the adapter's Spark
session; its DataFrame (Spark or pandas) is written to a Hudi table by the same SQL statements as a SQL model.
Each model's table is compared with what plain Spark computes from the same source rows for the materialization
(table, merge on unique_key, append, insert_overwrite by partition) and read back with hudi-rs; SQL models read
Python models through ref and the other way round; a failing model is a dbt error naming the model and its line,
and leaves its table as it was.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os

import pytest
from dbt.tests.util import run_dbt
from pyspark.sql import Window
from pyspark.sql import functions as F

from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

EVENTS_1 = """id,region,ts,value,day
1,eu,1,10,2024-01-01
2,eu,1,20,2024-01-01
3,us,1,30,2024-01-02
"""
EVENTS_2 = """id,region,ts,value,day
2,eu,2,21,2024-01-01
4,us,2,40,2024-01-03
5,eu,2,50,2024-01-03
"""

# a SQL model the Python models read through dbt.ref: the current batch of source rows
BATCH_SQL = """
{{ config(materialized='table') }}
select id, region, ts, value, day from {{ ref('events_' ~ var('batch', 1)) }}
"""

PY_TABLE = """
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="table", unique_key="id", factor=3)
    factor = dbt.config.get("factor")   # dbt finds config.get calls in statements, not inside expressions
    df = dbt.ref("batch")
    return df.select("id", "region", (F.col("value") * factor).alias("scaled"), "day")
"""

PY_PANDAS = """
import pandas as pd


def model(dbt, session):
    dbt.config(materialized="table", unique_key="city")
    return pd.DataFrame({"city": ["Oslo", "Lima"], "population": [700, 10000]})
"""

PY_SOURCE = """
def model(dbt, session):
    dbt.config(materialized="table")
    return dbt.source("raw", "events_1").groupBy("region").count()
"""

PY_MERGE = """
def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="merge", unique_key="id",
               table_type="mor", precombine_key="ts")
    return dbt.ref("batch").select("id", "region", "ts", "value", "day")
"""

# dbt.this and dbt.is_incremental: only rows newer than the table's latest are appended
PY_APPEND = """
def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    df = dbt.ref("batch").select("id", "ts", "value")
    if dbt.is_incremental:
        latest = session.sql(f"select max(ts) from {dbt.this}").first()[0]
        df = df.filter(df.ts > latest)
    return df
"""

PY_OVERWRITE = """
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="insert_overwrite", partition_by=["day"])
    return dbt.ref("batch").groupBy("day").agg(F.count("*").alias("n"), F.sum("value").alias("total"))
"""

# a Python UDF (pickled to Spark's Python workers with the helper it calls) into a plain parquet table
PY_UDF = """
from pyspark.sql import functions as F


def label(region):
    return region.upper() + "!"


def model(dbt, session):
    dbt.config(materialized="table", file_format="parquet")
    to_label = F.udf(label, "string")
    return dbt.ref("batch").select("id", to_label("region").alias("label"))
"""

SQL_FROM_PY = """
{{ config(materialized='table') }}
select id, scaled from {{ ref('py_table') }} where scaled > 30
"""

SOURCES_YML = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: events_1
"""


def location(spark, schema: str, table: str) -> str:
    from pyhudi.sqlext import catalog
    return catalog.lookup(spark, None, schema, table).location


def hudi_rows(spark, schema, table, columns):
    return rows(hudi_rs_read(location(spark, schema, table)), columns)


def completed_instants(spark, schema, table) -> list[str]:
    folder = os.path.join(location(spark, schema, table), ".hoodie")
    return sorted(f for f in os.listdir(folder)
                  if f[:1].isdigit() and f.count(".") == 1 and not f.endswith((".requested", ".inflight")))


def source_df(spark, text):
    """A seed's rows as plain Spark computes with them (the reference never touches Hudi)."""
    records = [(int(r["id"]), r["region"], int(r["ts"]), int(r["value"]), dt.date.fromisoformat(r["day"]))
               for r in csv.DictReader(io.StringIO(text))]
    return spark.createDataFrame(records, "id int, region string, ts int, value int, day date")


def latest_per_key(df, key, order):
    window = Window.partitionBy(key).orderBy(F.col(order).desc())
    return df.withColumn("_n", F.row_number().over(window)).filter("_n = 1").drop("_n")


def per_day(df):
    return df.groupBy("day").agg(F.count("*").alias("n"), F.sum("value").alias("total"))


def responses(results) -> dict:
    return {r.node.name: r.adapter_response for r in results}


class TestPythonModels:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"events_1.csv": EVENTS_1, "events_2.csv": EVENTS_2}

    @pytest.fixture(scope="class")
    def models(self):
        return {"batch.sql": BATCH_SQL, "py_table.py": PY_TABLE, "py_pandas.py": PY_PANDAS,
                "py_source.py": PY_SOURCE, "py_merge.py": PY_MERGE, "py_append.py": PY_APPEND,
                "py_overwrite.py": PY_OVERWRITE, "sql_from_py.sql": SQL_FROM_PY, "sources.yml": SOURCES_YML,
                "py_udf.py": PY_UDF}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "python_models"}

    def test_python_models_write_hudi_tables(self, project, spark):
        schema = project.test_schema
        b1, b2 = source_df(spark, EVENTS_1), source_df(spark, EVENTS_2)
        run_dbt(["seed"])

        first = responses(run_dbt(["run", "--vars", "{batch: 1}"]))
        assert len(first) == 9
        # the write is a Hudi commit, reported like a SQL model's
        assert first["py_table"]["rows_inserted"] == 3
        assert first["py_table"]["hudi_instant"] == completed_instants(spark, schema, "py_table")[-1].split(".")[0]
        assert hudi_rows(spark, schema, "py_append", ["id", "ts", "value"]) == rows(b1, ["id", "ts", "value"])

        second = responses(run_dbt(["run", "--vars", "{batch: 2}"]))
        assert second["py_merge"]["hudi_operation"] == "upsert"
        assert (second["py_merge"]["rows_updated"], second["py_merge"]["rows_inserted"]) == (1, 2)
        # a third run of batch 2: dbt.this filters out what is already there, merge changes nothing
        run_dbt(["run", "--vars", "{batch: 2}", "--select", "py_append", "py_merge"])

        # table: rebuilt from the current batch, dbt.config.get reads the model's own config
        expected = b2.select("id", "region", (F.col("value") * 3).alias("scaled"), "day")
        assert hudi_rows(spark, schema, "py_table", expected.columns) == rows(expected)
        props = open(os.path.join(location(spark, schema, "py_table"), ".hoodie", "hoodie.properties")).read()
        assert "hoodie.table.recordkey.fields=id" in props
        # merge on unique_key (MOR, precombine ts): latest row per id
        merged = latest_per_key(b1.unionByName(b2), "id", "ts")
        assert hudi_rows(spark, schema, "py_merge", merged.columns) == rows(merged)
        props = open(os.path.join(location(spark, schema, "py_merge"), ".hoodie", "hoodie.properties")).read()
        assert "hoodie.table.type=MERGE_ON_READ" in props and "hoodie.table.precombine.field=ts" in props
        # append: every new row once (id 2 twice: append does not dedupe)
        appended = b1.unionByName(b2.filter("ts > 1")).select("id", "ts", "value")
        assert hudi_rows(spark, schema, "py_append", appended.columns) == rows(appended)
        # insert_overwrite by day: batch 2's days replaced, 2024-01-02 kept from batch 1
        old, new = per_day(b1), per_day(b2)
        days = new.unionByName(old.join(new, "day", "left_anti"))
        assert hudi_rows(spark, schema, "py_overwrite", days.columns) == rows(days)
        assert open(os.path.join(location(spark, schema, "py_overwrite"), ".hoodie", "hoodie.properties")) \
            .read().count("hoodie.table.partition.fields=day") == 1
        # pandas DataFrame and dbt.source
        assert hudi_rows(spark, schema, "py_pandas", ["city", "population"]) == [("Lima", 10000), ("Oslo", 700)]
        assert hudi_rows(spark, schema, "py_source", ["region", "count"]) == [("eu", 2), ("us", 1)]
        # a SQL model reading a Python model
        assert hudi_rows(spark, schema, "sql_from_py", ["id", "scaled"]) == \
            rows(expected.filter("scaled > 30"), ["id", "scaled"])
        # file_format='parquet': a Spark table, not Hudi; the UDF ran on the workers
        from pyhudi.sqlext import catalog
        assert not catalog.lookup(spark, None, schema, "py_udf").is_hudi
        labels = b2.select("id", F.concat(F.upper("region"), F.lit("!")).alias("label"))
        assert rows(spark.table(f"{schema}.py_udf")) == rows(labels)
        # target/run holds the Python script that ran
        run_dir = os.path.join(project.project_root, "target", "run", "python_models", "models")
        assert "def model(dbt, session)" in open(os.path.join(run_dir, "py_merge.py")).read()


PY_FAILS_LATER = """
def model(dbt, session):
    dbt.config(materialized="incremental", unique_key="id")
    df = session.createDataFrame([(1, "a")], "id int, v string")
    if dbt.is_incremental:
        raise ValueError("upstream batch is empty")
    return df
"""

PY_WRONG_TYPE = """
def model(dbt, session):
    return [(1, "a")]
"""

PY_SPARK_ERROR = """
def model(dbt, session):
    return session.sql("select * from no_such_table_anywhere")
"""

SQL_AFTER_FAILURE = """
select * from {{ ref('py_fails_later') }}
"""


class TestPythonModelFailures:
    @pytest.fixture(scope="class")
    def models(self):
        return {"py_fails_later.py": PY_FAILS_LATER, "py_wrong_type.py": PY_WRONG_TYPE,
                "py_spark_error.py": PY_SPARK_ERROR, "sql_after_failure.sql": SQL_AFTER_FAILURE}

    def test_failures_name_the_model_and_leave_the_table(self, project, spark):
        schema = project.test_schema
        run_dbt(["run", "--select", "py_fails_later"])
        before = completed_instants(spark, schema, "py_fails_later")

        results = {r.node.name: r for r in run_dbt(["run"], expect_pass=False)}
        failed = results["py_fails_later"]
        assert failed.status == "error"
        assert "Python model py_fails_later (models/py_fails_later.py) failed: ValueError: upstream batch is empty" \
            in failed.message
        assert 'models/py_fails_later.py", line 6, in model' in failed.message
        assert 'raise ValueError("upstream batch is empty")' in failed.message
        assert results["sql_after_failure"].status == "skipped"
        # nothing written: same timeline, same rows
        assert completed_instants(spark, schema, "py_fails_later") == before
        assert hudi_rows(spark, schema, "py_fails_later", ["id", "v"]) == [(1, "a")]

        wrong = results["py_wrong_type"]
        assert wrong.status == "error"
        assert "py_wrong_type" in wrong.message and "returned builtins.list" in wrong.message
        assert "return a Spark DataFrame" in wrong.message

        spark_error = results["py_spark_error"]
        assert spark_error.status == "error"
        assert "Python model py_spark_error" in spark_error.message
        assert "no_such_table_anywhere" in spark_error.message and "\tat " not in spark_error.message
        from pyhudi.sqlext import catalog
        assert catalog.lookup(spark, None, schema, "py_wrong_type") is None
        assert catalog.lookup(spark, None, schema, "py_spark_error") is None


PARALLEL = """
def model(dbt, session):
    dbt.config(materialized="table", unique_key="id")
    n = dbt.config.get("rows", 1)
    return session.range(0, n * 1000).selectExpr("id", "id % 7 as bucket")
"""


class TestPythonModelsInParallelThreads:
    """dbt threads run Python models at the same time on the one session: each writes its own rows."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, spark):
        return {"type": "pyhudi", "master": "local[2]", "threads": 3}

    @pytest.fixture(scope="class")
    def models(self):
        return {f"par_{n}.py": PARALLEL.replace('config.get("rows", 1)', f'config.get("rows", {n})')
                for n in (1, 2, 3)}

    def test_parallel_python_models(self, project, spark):
        results = run_dbt(["run"])
        assert sorted(r.node.name for r in results if r.status == "success") == ["par_1", "par_2", "par_3"]
        for n in (1, 2, 3):
            got = hudi_rs_read(location(spark, project.test_schema, f"par_{n}"))
            assert sorted(got.column("id").to_pylist()) == list(range(n * 1000))
