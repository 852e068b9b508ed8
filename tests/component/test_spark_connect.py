"""The engine on a Spark Connect session (issue 38): no JVM in the client process, no SparkContext. The same
writes, reads and table services as on a classic session give the same rows, and hudi-rs reads what Connect
wrote. The server runs in a process of its own (connect_server.py), as a Connect server on a cluster would, and so
does the client (connect_client.py): pyspark refuses a remote session in a process that holds a classic one.

Hudi's SQL layer works on Connect too: `pyhudi.sql` reaches the session catalog through Spark's public API there
(pyhudi.sqlext.catalog_connect), and a plain `spark.sql` query reads a table it created. Not on Connect: ALTER TABLE
ADD COLUMNS, RENAME of a managed table and CREATE OR REPLACE over a managed Hudi table (they raise SqlError naming
the fix: a classic session). Connect has no accumulators: the bloom index's counters reach WriteResult.index_stats
through files in the table's storage, and the scenario compares them with classic's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import check_example_tables, hudi_rs_read, rows

HERE = Path(__file__).parent
LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"
COLUMNS = ["id", "name", "ts", "part"]
# The server's executors are JVMs and Python workers of their own, as behind a Connect server on a cluster: nothing
# may rely on running in the server's driver process.
MASTER = "local-cluster[2,1,1024]"


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """(port, warehouse folder) of a Spark Connect server for this module's tests."""
    warehouse = tmp_path_factory.mktemp("connect-warehouse")
    server = subprocess.Popen([sys.executable, str(HERE / "connect_server.py"), str(warehouse), MASTER],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = server.stdout.readline().strip()
    assert port.isdigit(), "the Spark Connect server did not start"
    yield port, warehouse
    server.stdin.close()
    server.wait(120)


@pytest.fixture(scope="module")
def connect_port(connect_server):
    return connect_server[0]


def _expected(*records) -> list[tuple]:
    return sorted(records, key=repr)


def _run_client(target: str, path: Path, table_type: str, raw: bool = False, stderr: list | None = None) -> dict:
    """The client's JSON; with `stderr`, the client draws its progress lines (PYHUDI_PROGRESS=1) and its stderr
    is appended there."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "PYSPARK_SUBMIT_ARGS")}
    if stderr is not None:
        env["PYHUDI_PROGRESS"] = "1"
    result = subprocess.run([sys.executable, str(HERE / "connect_client.py"), target, str(path), table_type],
                            capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    if stderr is not None:
        stderr.append(result.stderr)
    out = json.loads(result.stdout.strip().splitlines()[-1])
    if raw:
        return out
    return {key: value if key in ("instants", "services") else [tuple(r) for r in value]
            for key, value in out.items()}


# CI runs the SQL and dbt scenarios over Connect (writes into merge-on-read, compaction, clean, time travel), and this
# engine scenario on classic sessions (test_object_storage.py); the long profile adds it over Connect.
_LONG_ONLY = [] if LONG else [pytest.mark.skip(reason="PYHUDI_LONG_TESTS=1 (CI: the SQL and dbt scenarios)")]


@pytest.mark.parametrize("table_type", [pytest.param("COPY_ON_WRITE", marks=_LONG_ONLY),
                                        pytest.param("MERGE_ON_READ", marks=_LONG_ONLY)])
def test_writes_reads_and_services_on_spark_connect(connect_port, tmp_path, table_type):
    """The same scenario (writes, deletes, snapshot, data source, time travel, incremental, compaction,
    clustering, clean, rollback) through Connect and through a classic session gives the same results."""
    over_connect = _run_client(connect_port, tmp_path / "connect", table_type)
    on_classic = _run_client("classic", tmp_path / "classic", table_type)
    first = over_connect.pop("instants")[0]
    on_classic.pop("instants")
    assert over_connect == on_classic
    expected = _expected((0, "a0", 1, "p0"), (1, "b1", 2, "p1"), (2, "b2", 2, "p0"), (4, "a4", 1, "p0"),
                         (5, "a5", 1, "p1"), (9, "b9", 2, "p1"))
    assert over_connect["snapshot"] == expected == over_connect["after rollback"]
    assert sorted(r[0] for r in over_connect["incremental"]) == [1, 2, 9]
    compacted, clustered, _ = over_connect["services"]
    assert clustered == 1 and compacted == (1 if table_type == "MERGE_ON_READ" else 0)
    # hudi-rs reads what Connect wrote
    assert rows(hudi_rs_read(tmp_path / "connect"), COLUMNS) == expected
    assert over_connect["as of first"] == rows(hudi_rs_read(tmp_path / "connect", as_of=first), COLUMNS)


def test_hudi_sql_on_spark_connect(connect_port, tmp_path):
    """Hudi's SQL (CREATE TABLE ... USING hudi of a partitioned merge-on-read table, INSERT, MERGE with update,
    insert and delete clauses, UPDATE, DELETE, SELECT through pyhudi.sql and through spark.sql, time travel,
    show_commits, run_compaction, SET / UNSET TBLPROPERTIES, a column comment, SHOW TBLPROPERTIES, DESCRIBE, DROP)
    over Connect gives what it gives on a classic session, and hudi-rs reads the table Connect wrote. The writes
    draw their progress line there from the server's progress reports."""
    stderr: list[str] = []
    over_connect = _run_client(connect_port, tmp_path / "connect", "sql", raw=True, stderr=stderr)
    assert re.search(r"\[pyhudi\] [a-z_]+ \w+: \[[#.]{20}\] \d+/\d+ tasks, \d+ stage", stderr[0]), stderr[0][-3000:]
    on_classic = _run_client("classic", tmp_path / "classic", "sql", raw=True)
    assert over_connect == on_classic
    expected = [[1, "m1", 2, "p0"], [3, "u3", 3, "p0"], [5, "m5", 2, "p1"]]
    assert over_connect["select"] == over_connect["spark.sql"] == over_connect["after compaction"] == expected
    assert over_connect["compaction"] == [[2, "REQUESTED"], [2, "COMPLETED"]]
    assert ["Comment", "sql over connect", ""] in over_connect["describe extended"]
    assert over_connect["after drop"] == []
    # hudi-rs reads what Connect wrote (DROP TABLE of a table with a LOCATION keeps its files)
    assert rows(hudi_rs_read(tmp_path / "connect"), COLUMNS) == [tuple(r) for r in expected]


def test_example_dbt_project_on_spark_connect(connect_server, tmp_path):
    """The example dbt project (integration/run_example.py: seeds, an incremental merge into a merge-on-read
    table, an insert_overwrite by day, a table rebuilt, a snapshot, run-operation compact and clean) with
    `remote: sc://...` in its profile leaves the tables the in-process run leaves (test_example_project.py's
    checks, through hudi-rs)."""
    port, warehouse = connect_server
    root = HERE.parents[1]
    project = tmp_path / "example"
    shutil.copytree(root / "integration" / "example", project, ignore=shutil.ignore_patterns("target", "logs"))
    schema = "example_connect"
    env = {**{k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "PYSPARK_SUBMIT_ARGS")},
           "PYHUDI_EXAMPLE_REMOTE": f"sc://localhost:{port}", "PYHUDI_EXAMPLE_SCHEMA": schema,
           "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    result = subprocess.run([sys.executable, str(root / "integration" / "run_example.py"), "--project-dir",
                             str(project)], capture_output=True, text=True, timeout=1200, env=env)
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])
    assert not (project / "target" / "pyhudi").exists()    # nothing ran in dbt's process: no local warehouse
    check_example_tables(lambda table: str(Path(warehouse) / f"{schema}.db" / table))
