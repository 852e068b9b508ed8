"""CALL procedures backed by the services (savepoints, rollback, clean, archive) and the listing procedures."""

from __future__ import annotations

import pyhudi


def _one(spark, text):
    return [tuple(r) for r in pyhudi.sql(spark, text).collect()]


def test_procedures_on_a_table(spark):
    t = "proc_t"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"""CREATE TABLE {t} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts');
        INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 1);
        INSERT INTO {t} VALUES (1, 'a2', 2)""")
    commits = _one(spark, f"CALL show_commits('{t}')")
    assert len(commits) == 2
    first, second = commits[1][0], commits[0][0]
    files = pyhudi.sql(spark, f"CALL show_commit_files(table => '{t}', instant_time => '{second}')")
    assert files.columns == ["action", "partition_path", "file_id", "previous_commit", "total_records_updated",
                             "total_records_written", "total_bytes_written", "total_errors", "file_size"]
    assert files.count() == 1
    assert _one(spark, f"CALL create_savepoint(table => '{t}', commit_time => '{first}')") == [(True,)]
    assert _one(spark, f"CALL show_savepoints(table => '{t}')") == [(first,)]
    assert _one(spark, f"CALL delete_savepoint(table => '{t}', instant_time => '{first}')") == [(True,)]
    assert _one(spark, f"CALL show_savepoints(table => '{t}')") == []
    assert _one(spark, f"CALL rollback_to_instant(table => '{t}', instant_time => '{second}')") == [(True,)]
    assert sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, name FROM {t}").collect()) == [(1, "a"), (2, "b")]
    assert pyhudi.sql(spark, f"CALL stats_file_sizes(table => '{t}')").collect()[-1]["commit_time"] == "ALL"
    assert pyhudi.sql(spark, f"CALL show_fsview_all(table => '{t}')").count() >= 1
    clean = pyhudi.sql(spark, f"CALL run_clean(table => '{t}', retain_commits => 1)")
    assert clean.columns[:3] == ["start_clean_time", "time_taken_in_millis", "total_files_deleted"]
    assert _one(spark, f"CALL archive_commits(table => '{t}', min_commits => 2, max_commits => 3, retain_commits => 1)") == [(0,)]
    pyhudi.sql(spark, f"DROP TABLE {t}")


def test_compact_and_clean_short_forms(spark, tmp_path):
    t = "proc_short"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"""CREATE TABLE {t} (id INT, name STRING, ts BIGINT) USING hudi
        TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor', hoodie.clean.automatic = 'false',
                       hoodie.cleaner.commits.retained = '1');
        INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 1);
        INSERT INTO {t} VALUES (1, 'a2', 2)""")
    done = _one(spark, f"CALL compact(table => '{t}')")               # = run_compaction scheduleAndExecute
    assert [row[2] for row in done] == ["COMPLETED"] and done[0][1] == 1
    pyhudi.sql(spark, f"INSERT INTO {t} VALUES (2, 'b2', 2)")
    from pyhudi.sqlext.query import Resolver
    path = Resolver(spark).entry_by_name(t).location
    assert [row[2] for row in _one(spark, f"CALL compact(path => '{path}')")] == ["COMPLETED"]
    # clean with the table's own cleaner settings (TBLPROPERTIES: retain 1 commit): the replaced slices go
    cleaned = _one(spark, f"CALL clean(table => '{t}')")
    assert cleaned and cleaned[0][2] > 0
    assert sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, name FROM {t}").collect()) == [(1, "a2"), (2, "b2")]
    again = _one(spark, f"CALL clean(path => '{path}')")                # nothing left to clean
    assert not again or again[0][2] == 0
    pyhudi.sql(spark, f"DROP TABLE {t}")


def test_procedure_arguments_are_typed(spark):
    import pytest

    from pyhudi.errors import SqlError
    t = "proc_args"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"CREATE TABLE {t} (id INT) USING hudi; INSERT INTO {t} VALUES (1)")
    with pytest.raises(SqlError, match=r"CALL show_commits: argument 'limit' must be an integer, e\.g\. "
                                       r"limit => 10; got 'x'"):
        pyhudi.sql(spark, f"CALL show_commits(table => '{t}', limit => 'x')")
    with pytest.raises(SqlError, match="CALL archive_commits: argument 'enable_metadata' must be a boolean"):
        pyhudi.sql(spark, f"CALL archive_commits(table => '{t}', enable_metadata => 3)")
    with pytest.raises(SqlError, match="CALL run_clean: argument 'retain_commits' must be an integer"):
        pyhudi.sql(spark, f"CALL run_clean(table => '{t}', retain_commits => 1.5)")
    with pytest.raises(SqlError, match="CALL compact: argument 'op' must be a string"):
        pyhudi.sql(spark, f"CALL compact(table => '{t}', op => true)")
    with pytest.raises(SqlError, match="table => 'name' or path => '/base/path'"):
        pyhudi.sql(spark, "CALL clean()")
    assert len(_one(spark, f"CALL show_commits(table => '{t}', limit => '5')")) == 1   # a numeric string is fine
    pyhudi.sql(spark, f"DROP TABLE {t}")
