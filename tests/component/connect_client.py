"""A Spark Connect client for test_spark_connect.py, in a process of its own: pyspark refuses a remote session in a
process that holds a classic one (each pytest worker does). Runs one scenario of pyhudi calls over the Connect
server at the given port and prints one JSON object: the rows read at each step, and the instants.

    python connect_client.py <port | classic> <table path> <table type | sql>

`sql` runs Hudi's SQL instead (sql_scenario): a partitioned merge-on-read table created, written, queried, compacted,
altered, described and dropped through pyhudi.sql.
"""

from __future__ import annotations

import json
import sys

from engine_scenario import scenario


def main() -> None:
    port, path, table_type = sys.argv[1], sys.argv[2], sys.argv[3]
    import pyhudi
    from pyhudi.spark.jvm import is_connect

    if port == "classic":   # the same scenario on a classic session, for comparison
        spark = pyhudi.session(master="local[2]", hive=False, warehouse_dir=path + "-warehouse")
    else:
        spark = pyhudi.session(remote=f"sc://localhost:{port}")
        assert is_connect(spark), type(spark)
    if table_type == "sql":
        out = sql_scenario(spark, path)
        spark.stop()
        print(json.dumps(out), flush=True)
        return
    out = scenario(spark, path, table_type)
    spark.stop()
    print(json.dumps(out), flush=True)


def sql_scenario(spark, path: str) -> dict:
    """Hudi's SQL on table `sqlc` at `path`; every result with the table's folder written `<path>`."""
    import pyhudi

    def run(text):
        return pyhudi.sql(spark, text)

    def table(df) -> list:
        return sorted([[str(v).replace(path, "<path>") if isinstance(v, str) else v for v in r] for r in df.collect()],
                      key=repr)

    out: dict = {}
    run(f"""CREATE TABLE sqlc (id BIGINT, name STRING COMMENT 'who', ts BIGINT, part STRING) USING hudi
            PARTITIONED BY (part) LOCATION '{path}' COMMENT 'sql over connect'
            TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')""")
    run("INSERT INTO sqlc VALUES (1, 'a1', 1, 'p0'), (2, 'a2', 1, 'p1'), (3, 'a3', 1, 'p0'), (4, 'a4', 1, 'p1')")
    first = run("CALL show_commits(table => 'sqlc')").collect()[0]["commit_time"]
    run("""MERGE INTO sqlc t USING (SELECT 1L AS id, 'm1' AS name, 2L AS ts, 'p0' AS part UNION ALL
           SELECT 2L, 'x', 2L, 'p1' UNION ALL SELECT 5L, 'm5', 2L, 'p1') s ON t.id = s.id
           WHEN MATCHED AND s.id = 2 THEN DELETE WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""")
    run("UPDATE sqlc SET name = 'u3', ts = 3 WHERE id = 3")
    run("DELETE FROM sqlc WHERE id = 4")
    out["select"] = table(run("SELECT id, name, ts, part FROM sqlc"))
    out["spark.sql"] = table(spark.sql("SELECT id, name, ts, part FROM sqlc"))
    out["as of first"] = table(run(f"SELECT id, name, ts, part FROM sqlc TIMESTAMP AS OF '{first}'"))
    out["commits"] = [[r["action"], r["total_partitions_written"], r["total_records_written"],
                       r["total_update_records_written"]] for r in run("CALL show_commits(table => 'sqlc')").collect()]
    out["compaction"] = [[r["operation_size"], r["state"]] for r in
                         run("CALL run_compaction(op => 'schedule', table => 'sqlc')").collect()
                         + run("CALL run_compaction(op => 'run', table => 'sqlc')").collect()]
    out["after compaction"] = table(run("SELECT id, name, ts, part FROM sqlc"))
    run("ALTER TABLE sqlc SET TBLPROPERTIES ('hoodie.cleaner.commits.retained' = '5', 'team' = 'a, b=c')")
    run("ALTER TABLE sqlc UNSET TBLPROPERTIES ('team')")
    run("ALTER TABLE sqlc ALTER COLUMN ts COMMENT 'ordering'")
    out["properties"] = table(run("SHOW TBLPROPERTIES sqlc"))
    out["describe"] = table(run("DESCRIBE TABLE sqlc"))
    out["describe extended"] = [r for r in table(run("DESCRIBE TABLE EXTENDED sqlc"))
                                if r[0] not in ("Created Time", "Last Access", "Created By", "Owner")]
    out["tables"] = table(spark.sql("SHOW TABLES LIKE 'sqlc'").select("tableName"))
    run("DROP TABLE sqlc")
    out["after drop"] = table(spark.sql("SHOW TABLES LIKE 'sqlc'").select("tableName"))
    return out


if __name__ == "__main__":
    main()
