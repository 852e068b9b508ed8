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
