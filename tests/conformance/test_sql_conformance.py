"""Differential conformance of Hudi's Spark SQL in pyhudi: random statement sequences (cf_sql_gen) on a Hudi
table, each compared after every statement with the reference (plain Spark DataFrame operations, kept as a
parquet table), and at the end with hudi-rs. Every statement also makes at most one commit, as in Hudi.

Replay one failure: PYHUDI_CONFORMANCE_SEED=<seed> .venv/bin/pytest -q tests/conformance/test_sql_conformance.py
"""

from __future__ import annotations

import time

import pytest

import cf_known
import cf_profiles
from cf_report import diff_message
from cf_sql_gen import SOURCE_VIEW, SequenceGenerator, Step
from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

DATABASE = "conformance"


def _source(spark, gen: SequenceGenerator, step: Step):
    from pyspark.sql import types as T
    schema = gen.shape.spark_schema()
    fields = {f.name: f for f in schema.fields}
    fields["_op"] = T.StructField("_op", T.StringType())
    order = step.source_columns
    df = spark.createDataFrame([tuple(r[c] for c in order) for r in step.rows],
                               T.StructType([fields[c] for c in order]))
    df.createOrReplaceTempView(SOURCE_VIEW)
    return df


def _write_reference(spark, gen, name, df):
    writer = df.write.mode("overwrite").format("parquet")
    if gen.shape.partitions:
        writer = writer.partitionBy(*gen.shape.partitions)
    writer.saveAsTable(name)
    return spark.table(name)


def _commits(location) -> int:
    from pyhudi.table import HudiTable
    return len(HudiTable.load(location).timeline().completed_writes())


def _format_rows(step: Step) -> str:
    if not step.rows:
        return ""
    return "\n      cf_src(" + ", ".join(step.source_columns) + ") = " + "\n        ".join(
        repr(tuple(r[c] for c in step.source_columns)) for r in step.rows)


def run_sequence(spark, seed: int) -> None:
    import pyhudi
    from pyhudi.sqlext import catalog

    known = cf_profiles.include_known()
    gen = SequenceGenerator(seed, include_known=known, length=cf_profiles.sequence_length())
    shape = gen.shape
    table, ref_table = f"{DATABASE}.cf_sql_{seed}", f"{DATABASE}.cf_ref_{seed}"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    pyhudi.sql(spark, f"DROP TABLE IF EXISTS {table}")
    spark.sql(f"DROP TABLE IF EXISTS {ref_table}")
    log = [f"seed {seed}: replay with PYHUDI_CONFORMANCE_SEED={seed}"
           f"{' PYHUDI_CONFORMANCE_KNOWN=1' if known else ''}", f"  shape: {shape.describe()}"]

    def fail(what: str) -> None:
        pytest.fail("\n".join(log) + f"\n  -> {what}", pytrace=False)

    ref = spark.createDataFrame([], shape.spark_schema())
    mode_key = "spark.sql.sources.partitionOverwriteMode"
    session_mode = spark.conf.get(mode_key)
    location = None
    for number, step in enumerate(gen.steps()):
        source = _source(spark, gen, step) if step.rows is not None else None
        # the catalog's data column order (Hudi's catalog lists the _hoodie_* meta columns first)
        columns = [c for c in spark.table(table).columns if not c.startswith("_hoodie_")] if location \
            else shape.names
        text = step.render(table, columns)
        log.append(f"  [{number}] {text}{_format_rows(step)}")
        before = _commits(location) if location else 0
        started = time.monotonic()
        try:
            pyhudi.sql(spark, text)
        except Exception as error:  # noqa: BLE001 - the message is the finding
            fail(f"statement failed: {type(error).__name__}: {str(error).splitlines()[0][:400]}")
        finally:
            spark.conf.set(mode_key, session_mode)   # a step's SET must not leak into the next statements
        log[-1] += f"   ({time.monotonic() - started:.1f}s)"
        if location is None:
            location = catalog.lookup(spark, None, DATABASE, f"cf_sql_{seed}").location
        ref = _write_reference(spark, gen, ref_table, step.expect(shape, ref, source).localCheckpoint())
        expected = rows(ref, shape.names)
        actual = rows(pyhudi.sql(spark, f"SELECT * FROM {table}"), shape.names)
        if actual != expected:
            fail("table differs from the reference after this statement: " + diff_message(expected, actual))
        added = _commits(location) - before
        relaxed = [] if known else cf_known.relaxed("one-commit", shape, step)
        if added > 1 and not relaxed:
            fail(f"one statement made {added} commits (Hudi: one)")
    theirs = hudi_rs_read(location)
    if len(expected) and rows(theirs, shape.names) != expected:
        fail("hudi-rs reads other rows than the reference: " + diff_message(expected, rows(theirs, shape.names)))
    pyhudi.sql(spark, f"DROP TABLE {table}")
    spark.sql(f"DROP TABLE {ref_table}")


@pytest.mark.parametrize("seed", cf_profiles.sequence_seeds())
def test_sql_sequence(spark, seed):
    run_sequence(spark, seed)
