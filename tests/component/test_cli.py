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
