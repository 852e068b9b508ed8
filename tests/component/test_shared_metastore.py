"""A catalog more than one process can use (issue 16 item 8): the embedded Derby metastore refuses a second
process with a clear error before Spark starts; a PostgreSQL-backed Hive metastore serves a dbt invocation and a
second process at the same time."""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
PG_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
JDBC_JAR = os.path.exists("/usr/share/java/postgresql.jar")


def _env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "engine"), str(ROOT)]), **extra)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return env


def test_second_process_on_a_busy_derby_metastore_gets_a_clear_error(spark):
    spark.sql("SHOW DATABASES").collect()                   # the suite's session has its Derby database open
    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    started = time.monotonic()
    child = subprocess.run([sys.executable, "-c", f"import pyhudi; pyhudi.session(warehouse_dir={warehouse!r})"],
                           capture_output=True, text=True, env=_env(), timeout=120)
    assert child.returncode != 0
    assert "MetastoreBusyError" in child.stderr and warehouse in child.stderr and "metastore_url" in child.stderr
    assert time.monotonic() - started < 30, "refused before starting Spark"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def postgres():
    """A PostgreSQL server on 127.0.0.1 for this test (Debian's postgresql; initdb refuses root, so as postgres)."""
    if not PG_BIN or not JDBC_JAR:
        pytest.skip("needs Debian's postgresql and libpostgresql-jdbc-java (.ci/run installs them)")
    bin_dir, port = PG_BIN[-1], _free_port()
    data = Path(tempfile.mkdtemp(prefix="pyhudi-pg-"))      # pytest's tmp folders are closed to other users
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(data, "postgres")
    subprocess.run([*as_user, f"{bin_dir}/initdb", "-D", str(data / "db"), "--auth=trust", "-U", "postgres"],
                   check=True, capture_output=True, timeout=120)
    subprocess.run([*as_user, f"{bin_dir}/pg_ctl", "-D", str(data / "db"), "-w", "-l", str(data / "log"), "-o",
                    f"-p {port} -k {data} -c listen_addresses=127.0.0.1", "start"],
                   check=True, capture_output=True, timeout=120)
    try:
        subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c",
                        "CREATE DATABASE metastore"], check=True, capture_output=True, timeout=60)
        yield f"postgresql://postgres@127.0.0.1:{port}/metastore", port
    finally:
        subprocess.run([*as_user, f"{bin_dir}/pg_ctl", "-D", str(data / "db"), "-m", "immediate", "stop"],
                       capture_output=True, timeout=120)
        shutil.rmtree(data, ignore_errors=True)


SECOND_PROCESS = textwrap.dedent("""
    import json, sys, time
    import pyhudi
    spark = pyhudi.session(master="local[1]", warehouse_dir=sys.argv[1])     # PYHUDI_METASTORE_URL names the catalog
    pyhudi.sql(spark, "CREATE TABLE shell_t (id INT, v STRING, ts INT) USING hudi "
                      "TBLPROPERTIES (primaryKey='id', preCombineField='ts')")
    pyhudi.sql(spark, "INSERT INTO shell_t VALUES (1, 'a', 1), (2, 'b', 1)")
    seen, deadline = [], time.time() + 600
    while len(seen) < 2 and time.time() < deadline:      # the dbt model, written by the other process
        if spark.catalog.tableExists("default.dbt_model"):   # (in the catalog before its commit completes)
            seen = [tuple(r) for r in pyhudi.sql(spark, "SELECT id, v FROM default.dbt_model ORDER BY id").collect()]
        if len(seen) < 2:
            time.sleep(2)
    print("RESULT " + json.dumps({"dbt_rows": seen, "own": pyhudi.sql(spark, "SELECT count(*) FROM shell_t")
                                  .collect()[0][0]}))
""")


def test_postgres_metastore_serves_dbt_and_a_second_process_at_once(postgres, tmp_path):
    url, port = postgres
    warehouse, project = tmp_path / "warehouse", tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: shared\nversion: '1.0'\nprofile: shared\nconfig-version: 2\n")
    (project / "models" / "dbt_model.sql").write_text(
        "{{ config(materialized='table', file_format='hudi', unique_key='id') }}\n"
        "select 1 as id, 'x' as v union all select 2 as id, 'y' as v\n")
    (project / "profiles.yml").write_text(
        f"shared:\n  target: dev\n  outputs:\n    dev:\n      type: pyhudi\n      master: 'local[1]'\n"
        f"      schema: default\n      warehouse: '{warehouse}'\n      threads: 1\n      metastore_url: '{url}'\n")
    shell = subprocess.Popen([sys.executable, "-c", SECOND_PROCESS, str(warehouse)], env=_env(PYHUDI_METASTORE_URL=url),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dbt = subprocess.Popen([str(Path(sys.executable).parent / "dbt"), "run", "--project-dir", str(project),
                            "--profiles-dir", str(project)], env=_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    dbt_out, _ = dbt.communicate(timeout=900)
    shell_out, shell_err = shell.communicate(timeout=900)
    assert dbt.returncode == 0, dbt_out[-3000:]
    assert shell.returncode == 0, shell_err[-3000:]
    result = json.loads(next(line for line in shell_out.splitlines() if line.startswith("RESULT "))[7:])
    assert result == {"dbt_rows": [[1, "x"], [2, "y"]], "own": 2}
    tables = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "metastore",
                             "-At", "-c", 'SELECT "TBL_NAME" FROM "TBLS" ORDER BY 1'],
                            capture_output=True, text=True, check=True).stdout.split()
    assert tables == ["dbt_model", "shell_t"]
