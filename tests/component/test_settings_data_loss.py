"""Data loss when table settings vary (issue 34): replace operations and clustering on BUCKET tables, and global
indexes moving a key to another partition, judged by Hudi's semantics and by hudi-rs."""

from __future__ import annotations

import os

import pytest

import pyhudi
from pyhudi.errors import ConfigError, PyHudiError
from pyhudi.table import HudiTable
from pyhudi.timeline.write_stat import WriteStat
from pyhudi.writer.replace import check_not_replacing_written
from support import hudi_rs_read, rows

DEFAULT = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
LATEST = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
PARTIAL = "org.apache.hudi.common.model.PartialUpdateAvroPayload"
NON_DEFAULTS = "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload"
SCHEMA = "id string, ts long, p string, note string"
LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"


def _rs_rows(path, columns=("id", "ts", "p", "note")):
    return sorted(rows(hudi_rs_read(path), list(columns)))


def _rows(spark, path, columns=("id", "ts", "p", "note")):
    return sorted(rows(pyhudi.read(spark, str(path)), list(columns)))


# --- 1. replace operations on BUCKET tables -------------------------------------------------------------------
@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_insert_overwrite_into_bucket_index_table_keeps_the_new_rows(spark, tmp_path, table_type):
    """Apache Hudi's TestInsertTable "Test Insert Overwrite Into Bucket Index Table": one row remains."""
    name = f"bk_{table_type}"
    location = tmp_path / name
    pyhudi.sql(spark, f"""CREATE TABLE {name} (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
        TBLPROPERTIES (type = '{table_type}', primaryKey = 'id', preCombineField = 'ts',
                       hoodie.index.type = 'BUCKET', hoodie.bucket.index.num.buckets = '4')
        PARTITIONED BY (dt) LOCATION '{location}'""")
    try:
        pyhudi.sql(spark, f"""INSERT INTO {name} VALUES (5,'a',35,1000,'2021-01-05'), (1,'a',31,1000,'2021-01-05'),
            (3,'a',33,1000,'2021-01-05'), (4,'b',16,1000,'2021-01-05'), (2,'b',18,1000,'2021-01-05'),
            (6,'b',17,1000,'2021-01-05'), (8,'a',21,1000,'2021-01-05'), (9,'a',22,1000,'2021-01-05'),
            (7,'a',23,1000,'2021-01-05')""")
        pyhudi.sql(spark, f"INSERT OVERWRITE TABLE {name} PARTITION (dt = '2021-01-05') SELECT 13, 'a2', 12, 1000")
        expected = [(13, "a2", 12.0, 1000, "2021-01-05")]
        assert rows(pyhudi.sql(spark, f"SELECT id, name, price, ts, dt FROM {name}")) == expected
        assert sorted(rows(hudi_rs_read(location), ["id", "name", "price", "ts", "dt"])) == expected
        # the table stays a bucket table: a later upsert finds the overwritten row's bucket
        pyhudi.sql(spark, f"INSERT INTO {name} VALUES (13,'a3',14,1001,'2021-01-05'), (1,'b',1,1001,'2021-01-05')")
        expected = [(1, "b", 1.0, 1001, "2021-01-05"), (13, "a3", 14.0, 1001, "2021-01-05")]
        assert sorted(rows(pyhudi.sql(spark, f"SELECT id, name, price, ts, dt FROM {name}"))) == expected
        assert sorted(rows(hudi_rs_read(location), ["id", "name", "price", "ts", "dt"])) == expected
    finally:
        pyhudi.sql(spark, f"DROP TABLE IF EXISTS {name}")


def _bucket_options(table_type: str, **extra) -> dict:
    return {"hoodie.table.name": "bk", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": "3", **extra}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("operation", ["insert_overwrite", "insert_overwrite_table"])
def test_bucket_replace_operations_write_new_file_groups(spark, tmp_path, table_type, operation):
    path = str(tmp_path / "t")
    opts = _bucket_options(table_type)
    first = [(f"k{i}", 1, "a" if i % 2 else "b", "old") for i in range(12)]
    pyhudi.write(spark.createDataFrame(first, SCHEMA), path, opts)
    before = {(s.partition_path, s.file_id) for s in HudiTable.load(path).view().latest_slices()}
    new = [(f"k{i}", 2, "a", "new") for i in range(0, 12, 3)]
    pyhudi.write(spark.createDataFrame(new, SCHEMA), path, {**opts, "hoodie.datasource.write.operation": operation})
    kept_b = [(f"k{i}", 1, "b", "old") for i in range(12) if i % 2 == 0] if operation == "insert_overwrite" else []
    expected = sorted(new + kept_b)
    assert _rows(spark, path) == expected
    assert _rs_rows(path) == expected
    after = {(s.partition_path, s.file_id) for s in HudiTable.load(path).view().latest_slices()}
    assert not {g for g in after if g[0] == "a"} & before   # every bucket of an overwritten partition is new
    # later upserts still find their bucket
    pyhudi.write(spark.createDataFrame([("k0", 3, "a", "upd")], SCHEMA), path, opts)
    expected = sorted([r for r in expected if r[:1] + r[2:3] != ("k0", "a")] + [("k0", 3, "a", "upd")])
    assert _rows(spark, path) == expected
    assert _rs_rows(path) == expected


def test_a_replacecommit_never_lists_a_file_group_it_writes():
    stats = [WriteStat.from_json({"partitionPath": "a", "fileId": "00000001-x-0"})]
    check_not_replacing_written({"a": ["00000002-y-0"]}, stats, "t", "001")
    check_not_replacing_written(None, stats, "t", "001")
    with pytest.raises(PyHudiError, match="00000001-x-0.*hiding the rows"):
        check_not_replacing_written({"a": ["00000001-x-0"]}, stats, "t", "001")


# --- 3. clustering of BUCKET tables -----------------------------------------------------------------------------
def test_clustering_a_simple_bucket_table_is_refused_and_services_skip_it(spark, tmp_path):
    path = str(tmp_path / "t")
    opts = _bucket_options("COPY_ON_WRITE")
    for ts in (1, 2, 3):
        pyhudi.write(spark.createDataFrame([(f"k{ts}{i}", ts, "a", "x") for i in range(5)], SCHEMA), path, opts)
    with pytest.raises(ConfigError, match="Clustering is not supported for simple bucket index"):
        pyhudi.cluster(spark, path)
    with pytest.raises(ConfigError, match="simple bucket index"):
        pyhudi.sql(spark, f"CALL run_clustering(path => '{path}')").collect()
    from pyhudi.client.table_services import run_table_services
    report = run_table_services(spark, [path], ["clustering"])
    assert not report.failed and report.runs[0].result is None
    timeline = HudiTable.load(path).timeline()
    assert not [i for i in timeline.instants if i.action == "replacecommit"]
    pyhudi.write(spark.createDataFrame([("k10", 9, "a", "upd")], SCHEMA), path, opts)   # still writable
    assert ("k10", 9, "a", "upd") in _rows(spark, path)


# --- 2. global index partition moves ----------------------------------------------------------------------------
def _global_options(index: str, table_type: str, payload: str) -> dict:
    return {"hoodie.table.name": "g", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index,
            "hoodie.datasource.write.payload.class": payload}


def _expected_move(payload: str, stored: tuple, incoming: tuple) -> tuple:
    """Hudi's outcome of `incoming` arriving for `stored`'s key in another partition: the payload merges them
    (combineAndGetUpdateValue), the merged record stays where its winner is."""
    s_id, s_ts, s_p, s_note = stored
    i_id, i_ts, i_p, i_note = incoming
    stored_wins = payload in (DEFAULT, PARTIAL) and s_ts > i_ts
    if payload == PARTIAL:
        first, second = (stored, incoming) if stored_wins else (incoming, stored)
        return tuple(a if a is not None else b for a, b in zip(first, second))
    if payload == NON_DEFAULTS:
        return tuple(a if a is not None else b for a, b in zip(incoming, stored))
    return stored if stored_wins else incoming


SCENARIOS = {
    # the stored record in a base file, the incoming one has a lower ordering value
    "base_lower": ([("k1", 10, "a", "stored")], ("k1", 5, "b", "incoming")),
    "base_higher": ([("k1", 10, "a", "stored")], ("k1", 15, "b", "incoming")),
    # insert ts 10, update in place ts 20 (a log on MOR), then the move with ts 15
    "updated_lower": ([("k1", 10, "a", "stored"), ("k1", 20, "a", "updated")], ("k1", 15, "b", "incoming")),
    "updated_higher": ([("k1", 10, "a", "stored"), ("k1", 20, "a", "updated")], ("k1", 25, "b", "incoming")),
    # a null field the null-filling payloads take from the stored record
    "null_field": ([("k1", 10, "a", "stored")], ("k1", 15, "b", None)),
}


# CI: every payload once, both table types and both global indexes among them (GLOBAL_BLOOM tags after another
# lookup); PYHUDI_LONG_TESTS=1: every payload x index x table type
CI_MOVES = {(LATEST, "GLOBAL_SIMPLE", "MERGE_ON_READ"), (DEFAULT, "GLOBAL_BLOOM", "COPY_ON_WRITE"),
            (PARTIAL, "GLOBAL_SIMPLE", "MERGE_ON_READ"), (NON_DEFAULTS, "GLOBAL_BLOOM", "MERGE_ON_READ")}


def _move_cases():
    out = []
    for payload in (LATEST, DEFAULT, PARTIAL, NON_DEFAULTS):
        for index in ("GLOBAL_SIMPLE", "GLOBAL_BLOOM"):
            for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
                long_only = (payload, index, table_type) not in CI_MOVES and not LONG
                marks = [pytest.mark.skip(reason="PYHUDI_LONG_TESTS=1")] if long_only else []
                out.append(pytest.param(table_type, index, payload, marks=marks,
                                        id=f"{payload.rsplit('.', 1)[-1]}-{index}-{table_type}"))
    return out


@pytest.mark.parametrize("table_type,index,payload", _move_cases())
def test_global_index_move_merges_with_the_stored_record_first(spark, tmp_path, table_type, index, payload):
    for name, (writes, incoming) in SCENARIOS.items():
        path = str(tmp_path / name)
        opts = _global_options(index, table_type, payload)
        other = ("k2", 1, "a", "other")
        pyhudi.write(spark.createDataFrame([writes[0], other], SCHEMA), path, opts)
        for record in writes[1:]:
            pyhudi.write(spark.createDataFrame([record], SCHEMA), path, opts)
        pyhudi.write(spark.createDataFrame([incoming], SCHEMA), path, opts)
        expected = sorted([_expected_move(payload, writes[-1], incoming), other], key=repr)
        assert _rows(spark, path) == expected, name
        # hudi-rs refuses merge-on-read slices with logs under the null-filling payloads ("merges with a merger
        # of its own"): it judges those after the compaction
        if table_type == "COPY_ON_WRITE" or payload in (LATEST, DEFAULT):
            assert _rs_rows(path) == expected, name
        if table_type == "MERGE_ON_READ":   # compaction keeps the outcome
            pyhudi.compact(spark, path)
            assert _rows(spark, path) == expected, name
            assert _rs_rows(path) == expected, name


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_global_index_move_then_delete_and_reinsert(spark, tmp_path, table_type):
    """A moved key deleted, then reinserted elsewhere, is there once."""
    path = str(tmp_path / "t")
    opts = _global_options("GLOBAL_SIMPLE", table_type, DEFAULT)
    pyhudi.write(spark.createDataFrame([("k1", 1, "a", "x"), ("k2", 1, "a", "y")], SCHEMA), path, opts)
    pyhudi.write(spark.createDataFrame([("k1", 2, "b", "moved")], SCHEMA), path, opts)
    pyhudi.write(spark.createDataFrame([("k1", 3, "b", "moved")], SCHEMA), path,
                 {**opts, "hoodie.datasource.write.operation": "delete"})
    assert _rows(spark, path) == [("k2", 1, "a", "y")]
    pyhudi.write(spark.createDataFrame([("k1", 4, "c", "back")], SCHEMA), path, opts)
    expected = [("k1", 4, "c", "back"), ("k2", 1, "a", "y")]
    assert _rows(spark, path) == expected
    assert _rs_rows(path) == expected


# --- tables damaged before the fixes: the health report finds them, its recovery works ---------------------------
def _finding(path, spark=None, **options):
    from pyhudi import report
    found = [f for f in report.findings(report.table_health(path, options, spark)) if f.severity == "error"]
    assert len(found) <= 1
    return found[0] if found else None


def test_health_report_finds_rows_hidden_by_their_own_replacecommit_and_the_fix_recovers_them(spark, tmp_path):
    import json

    path = str(tmp_path / "t")
    opts = _bucket_options("COPY_ON_WRITE")
    pyhudi.write(spark.createDataFrame([("k1", 1, "a", "old"), ("k2", 1, "b", "kept")], SCHEMA), path, opts)
    pyhudi.write(spark.createDataFrame([("k3", 2, "a", "new")], SCHEMA), path,
                 {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    assert _finding(path) is None
    # what the defect wrote: the replacecommit lists the file group it wrote as replaced
    table = HudiTable.load(path)
    instant = [i for i in table.timeline().completed_writes() if i.action == "replacecommit"][-1]
    commit_file = tmp_path / "t" / ".hoodie" / f"{instant.time}.replacecommit"
    meta = json.loads(commit_file.read_text())
    written = [s["fileId"] for s in meta["partitionToWriteStats"]["a"]]
    meta["partitionToReplaceFileIds"]["a"] += written
    commit_file.write_text(json.dumps(meta))
    from pyhudi.table.listing import clear_listings
    clear_listings()
    assert _rows(spark, path) == [("k2", 1, "b", "kept")]
    found = _finding(path)
    assert found is not None and "hidden by their own replacecommit" in found.what and "1 records" in found.what
    # the fix it names: read the hidden file, upsert its rows back
    hidden = meta["partitionToWriteStats"]["a"][0]["path"]
    back = spark.read.parquet(f"{path}/{hidden}").select("id", "ts", "p", "note")
    pyhudi.write(back, path, opts)
    assert _rows(spark, path) == [("k2", 1, "b", "kept"), ("k3", 2, "a", "new")]
    assert _rs_rows(path) == [("k2", 1, "b", "kept"), ("k3", 2, "a", "new")]


def test_health_report_finds_a_clustered_bucket_table_and_the_fix_makes_it_writable(spark, tmp_path):
    from pyhudi.services.clustering import run as clustering
    from pyhudi.services.clustering.strategy import ClusteringOptions

    path = str(tmp_path / "t")
    opts = _bucket_options("MERGE_ON_READ")
    data = [(f"k{i}", 1, "a" if i % 2 else "b", "x") for i in range(10)]
    pyhudi.write(spark.createDataFrame(data, SCHEMA), path, opts)
    # what pyhudi's clustering did before it refused bucket tables
    table = HudiTable.load(path)
    planned = clustering.schedule_plan(table, table.timeline(), ClusteringOptions.of({}))
    clustering.execute_plan(spark, table, HudiTable.load(path).timeline(), planned, ClusteringOptions.of({}))
    with pytest.raises(ConfigError, match="not written by a bucket index"):
        pyhudi.write(spark.createDataFrame([("k1", 2, "a", "y")], SCHEMA), path, opts)
    found = _finding(path)
    assert found is not None and "are not buckets" in found.what and "INSERT OVERWRITE TABLE" in found.fix
    # the fix it names: rewrite the table in bucket layout
    pyhudi.write(pyhudi.read(spark, path).select("id", "ts", "p", "note"), path,
                 {**opts, "hoodie.datasource.write.operation": "insert_overwrite_table"})
    assert _finding(path) is None
    pyhudi.write(spark.createDataFrame([("k1", 2, "a", "y")], SCHEMA), path, opts)
    expected = sorted([r for r in data if r[0] != "k1"] + [("k1", 2, "a", "y")])
    assert _rows(spark, path) == expected
    assert _rs_rows(path) == expected


def test_health_report_finds_keys_in_two_partitions_of_a_global_index_table(spark, tmp_path):
    path = str(tmp_path / "t")
    opts = _global_options("GLOBAL_SIMPLE", "COPY_ON_WRITE", LATEST)
    # the damage: k1 stored in two partitions (written here by a partition-scoped index)
    pyhudi.write(spark.createDataFrame([("k1", 1, "a", "old"), ("k2", 1, "a", "x"), ("k1", 2, "b", "new")], SCHEMA),
                 path, {**opts, "hoodie.index.type": "SIMPLE"})
    assert _finding(path) is None                      # without Spark the keys are not read
    assert _finding(path, spark) is None               # nor for a table the options do not call global
    found = _finding(path, spark, **{"hoodie.index.type": "GLOBAL_SIMPLE"})
    assert found is not None and "1 record key(s)" in found.what and "k1" in found.what
    # the fix it names: delete the keys (every copy), upsert the version to keep
    pyhudi.write(spark.createDataFrame([("k1", 2, "b", "new")], SCHEMA), path,
                 {**opts, "hoodie.datasource.write.operation": "delete"})
    pyhudi.write(spark.createDataFrame([("k1", 2, "b", "new")], SCHEMA), path, opts)
    assert _finding(path, spark, **{"hoodie.index.type": "GLOBAL_SIMPLE"}) is None
    assert _rows(spark, path) == [("k1", 2, "b", "new"), ("k2", 1, "a", "x")]
