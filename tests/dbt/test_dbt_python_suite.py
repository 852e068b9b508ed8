"""dbt-tests-adapter's Python model classes on `type: pyhudi`, unchanged: Python models run in-process on the
adapter's Spark session and write Hudi tables (dbt/adapters/pyhudi/python_model.py)."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.python_model.test_python_model import (BasePythonEmptyTests, BasePythonIncrementalTests,
                                                              BasePythonMetaGetTests, BasePythonModelTests,
                                                              BasePythonSampleTests)
from dbt.tests.adapter.python_model import test_spark
from dbt.tests.adapter.python_model.test_spark import BasePySparkTests
from dbt.tests.util import run_dbt

pytestmark = pytest.mark.spark


class TestPythonModelPyhudi(BasePythonModelTests):
    pass


class TestPythonIncrementalPyhudi(BasePythonIncrementalTests):
    pass


class TestPythonMetaGetPyhudi(BasePythonMetaGetTests):
    pass


class TestPythonEmptyPyhudi(BasePythonEmptyTests):
    pass


class TestPythonSamplePyhudi(BasePythonSampleTests):
    pass


class TestPySparkPyhudi(BasePySparkTests):
    """The class's fourth model imports databricks.koalas, the pre-Spark-3.2 name of pyspark.pandas, which does
    not install next to PySpark 4 (dbt-spark runs this class on Databricks runtimes that ship it): the pandas,
    PySpark and pandas-on-Spark models run unchanged, and the test counts three results instead of four."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"pandas_df.py": test_spark.PANDAS_MODEL, "pyspark_df.py": test_spark.PYSPARK_MODEL,
                "pandas_on_spark_df.py": test_spark.PANDAS_ON_SPARK_MODEL}

    def test_different_dataframes(self, project):
        results = run_dbt(["run"])
        assert len(results) == 3
        for name in ("pandas_df", "pyspark_df", "pandas_on_spark_df"):
            got = project.run_sql(f"select City, Latitude from {project.test_schema}.{name} order by City",
                                  fetch="all")
            assert [tuple(row) for row in got][:2] == [("Bogota", 4.6), ("Brasilia", -15.78)], name
