"""The `pyhudi` command: timeline and show read a table's metadata; sql runs statements (-e, -f)."""

from __future__ import annotations

from pyhudi.cli import main
from support import fixture_table


def test_timeline_and_show(tmp_path_factory, capsys):
    path = fixture_table("qs_mor_avro_v6_trips_8i1u", tmp_path_factory)
    assert main(["timeline", str(path)]) == 0
    out = capsys.readouterr().out
    assert "deltacommit" in out and "COMPLETED" in out
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "MERGE_ON_READ" in out and "city=chennai" in out and "log file(s)" in out


def test_report_prints_the_health_and_writes_the_page(tmp_path_factory, tmp_path, capsys):
    path = fixture_table("qs_mor_avro_v6_trips_8i3d", tmp_path_factory)
    page = tmp_path / "health.html"
    assert main(["report", str(path), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "MERGE_ON_READ" in out and "file groups" in out and str(page) in out
    assert page.read_text().count("<svg") >= 6
    assert main(["report", str(tmp_path)]) == 1               # not a table: an error naming the path
    assert str(tmp_path) in capsys.readouterr().err


def test_bad_path_is_an_error(tmp_path, capsys):
    assert main(["timeline", str(tmp_path)]) == 1
    assert "not a Hudi table" in capsys.readouterr().err


def test_sql_execute_and_file(spark, tmp_path, capsys):
    assert main(["sql", "-e", "SELECT 41 + 1 AS answer"]) == 0
    assert "42" in capsys.readouterr().out
    script = tmp_path / "q.sql"
    script.write_text("SELECT 'a;b' AS s;\nSELECT 7 AS seven;")
    assert main(["sql", "-f", str(script)]) == 0
    assert "7" in capsys.readouterr().out


def test_sql_prints_every_statement_and_each_commit(spark, tmp_path, capsys):
    """Each statement's result in order (spark-sql / beeline style), and a summary line per Hudi commit."""
    location = tmp_path / "cli_orders"
    script = (f"CREATE TABLE cli_orders (id INT, amount INT) USING hudi LOCATION '{location}' "
              "TBLPROPERTIES (primaryKey = 'id');"
              "INSERT INTO cli_orders VALUES (1, 10), (2, 20);"
              "SELECT 'first' AS label;"
              "SELECT count(*) AS n FROM cli_orders;"
              "DROP TABLE cli_orders")
    assert main(["sql", "-e", script]) == 0
    out = capsys.readouterr().out
    assert out.index("first") < out.index("|n  |") and "|2  |" in out
    assert "2 inserted, 0 updated, 0 deleted" in out


def test_hudi_cli_commands(spark, tmp_path, capsys):
    """hudi-cli's commits show / savepoint / rollback on a path, printed as tables; a missing --commit is a
    clear error."""
    import pyhudi
    from pyhudi.table import HudiTable
    path = str(tmp_path / "cli_table")
    opts = {"hoodie.table.name": "cli_table", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.operation": "upsert"}
    first = pyhudi.write(spark.createDataFrame([(1, "a")], "id int, v string"), path, opts).instant_time
    second = pyhudi.write(spark.createDataFrame([(2, "b")], "id int, v string"), path, opts).instant_time
    assert main(["commits", "show", "--path", path, "--master", "local[2]"]) == 0
    out = capsys.readouterr().out
    assert str(first) in out and str(second) in out and "commit_time" in out
    assert main(["savepoint", "create", "--path", path]) == 1
    assert "--commit <instant time> is required" in capsys.readouterr().err
    assert main(["savepoint", "create", "--path", path, "--commit", str(first)]) == 0
    assert main(["savepoint", "show", "--path", path]) == 0
    assert str(first) in capsys.readouterr().out
    assert main(["rollback", "--path", path, "--commit", str(second)]) == 0
    assert HudiTable.load(path).timeline().latest_completed_write().time == str(first)


def test_spark_start_up_stays_quiet(tmp_path):
    """A fresh `pyhudi sql` process prints its result and no Spark log lines (banners, WARN lines) unless
    --verbose."""
    import subprocess
    import sys
    env = {**__import__("os").environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-m", "pyhudi.cli", "sql", "--master", "local[1]", "--warehouse",
                           str(tmp_path / "wh"), "-e", "SELECT 6 * 7 AS answer"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout
    noisy = [line for line in done.stderr.replace("\r", "\n").splitlines()
             if line.strip() and not line.startswith("[Stage")]   # the progress bar is wanted
    assert not noisy, noisy
