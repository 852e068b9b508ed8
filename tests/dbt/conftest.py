"""dbt tests run in-process (dbtRunner) on the suite's one Spark session: the pyhudi adapter reuses the running
session instead of starting its own, so `master`/`warehouse` below are only used if no session exists."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="class")
def dbt_profile_target(spark):
    # `spark` (tests/conftest.py) starts the shared session first; dbt then finds and reuses it.
    return {"type": "pyhudi", "master": "local[2]", "threads": 1}


@pytest.fixture(scope="class")
def logs_dir(tmp_path_factory):
    # dbt-tests-adapter writes logs under <rootdir>/logs by default: keep them out of the repository
    return str(tmp_path_factory.mktemp("dbt-logs"))
