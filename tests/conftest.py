"""The one Spark session every component test shares (local[2], UI off, warehouse in a temp folder).
Helpers live in support.py."""

from __future__ import annotations

import os
import sys

import pytest

# dbt-tests-adapter's fixtures (project, adapter, unique_schema ...) for tests/dbt; pytest only reads
# pytest_plugins from the top-level conftest. tests/dbt/conftest.py supplies the pyhudi profile.
pytest_plugins = ["dbt.tests.fixtures.project"]


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    import pyhudi

    warehouse = tmp_path_factory.mktemp("warehouse")
    session = pyhudi.session(master="local[2]", warehouse_dir=str(warehouse), **{
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.driver.memory": "2g",
        "spark.sql.adaptive.enabled": "true",
    })
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
