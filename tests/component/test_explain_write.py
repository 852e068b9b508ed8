"""pyhudi.explain_write and CALL explain_write: a dry run reports what the write would do and writes nothing.

Each case hashes every file (and lists every folder) of the table before and after the explain, then runs the
real write with the same batch and options and asserts the explain's index figures and per-file-group counts are
the real write's (WriteResult.index_stats / write_stats), and that its update count is what plain Spark computes
by joining the batch with the table's keys."""

from __future__ import annotations

import hashlib
import os

import pytest

import pyhudi
from pyhudi.errors import NotAHudiTableError, PyHudiError, RecordKeyError, SqlError

INDEX_FIELDS = ("index_type", "keys_looked_up", "files_considered", "files_pruned_by_range", "files_pruned_by_bloom",
                "candidate_files", "confirmed_files", "false_positive_files", "updates", "inserts")


def _options(index: str, table_type: str, partitioned: bool = True, **extra) -> dict:
    opts = {"hoodie.table.name": "ex", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": table_type,
            "hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "4"}
    if partitioned:
        opts["hoodie.datasource.write.partitionpath.field"] = "region"
    return {**opts, **extra}


def _batch(spark, keys, ts):
    """Rows for record keys `keys` (str) or ids (int: key k%04d, region by id)."""
    data = []
    for i, key in enumerate(keys):
        k = f"k{key:04d}" if isinstance(key, int) else key
        data.append((k, "abc"[(key if isinstance(key, int) else i) % 3], ts, f"v-{k}-{ts}"))
    return spark.createDataFrame(data, "id string, region string, ts long, val string")


def _tree(path) -> dict:
    """Every folder and file under the table, files with their content hash."""
    out = {}
    for root, dirs, files in os.walk(path):
        for d in dirs:
            out[os.path.join(root, d)] = "dir"
        for f in files:
            full = os.path.join(root, f)
            with open(full, "rb") as fh:
                out[full] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _explain_then_write(spark, path, df, opts):
    before = _tree(path)
    plan = pyhudi.explain_write(df, str(path), opts)
    assert _tree(path) == before, "explain_write changed the table"
    result = pyhudi.write(df, str(path), opts)
    return plan, result


def _existing(stats):
    return sorted((s["partitionPath"], s["fileId"], "logVersion" in s, s["numInserts"], s["numUpdateWrites"],
                   s["numDeletes"], s["numWrites"]) for s in stats if s["prevCommit"] != "null")


def _new(stats):   # new file group ids derive from the instant time: compare what they hold
    return sorted((s["partitionPath"], s["numInserts"], s["numWrites"]) for s in stats if s["prevCommit"] == "null")


def _assert_matches(plan, result):
    assert {k: plan.index_stats.get(k) for k in INDEX_FIELDS} == {k: result.index_stats.get(k) for k in INDEX_FIELDS}
    real = result.write_stats
    assert _existing(plan.write_stats) == _existing(real)
    assert _new(plan.write_stats) == _new(real)
    assert plan.partitions == sorted({s["partitionPath"] for s in real})
    summary = plan.summary
    assert summary["file_groups_touched"] == len({(s["partitionPath"], s["fileId"]) for s in real})
    assert summary["new_file_groups"] == len({(s["partitionPath"], s["fileId"]) for s in real
                                              if s["prevCommit"] == "null"})
    assert summary["inserts"] == sum(s["numInserts"] for s in real)
    assert summary["updates"] == sum(s["numUpdateWrites"] for s in real)
    assert summary["deletes"] == sum(s["numDeletes"] for s in real)
    # the same encoder wrote the same records (only instant strings differ): sizes within a few percent
    assert abs(summary["bytes_written"] - result.bytes_written) <= 0.03 * result.bytes_written + 256
    if result.write_amplification is not None:
        assert summary["write_amplification"] == pytest.approx(result.write_amplification, rel=0.05)


def _stored_matches(spark, path, df) -> int:
    """Plain Spark: incoming keys already stored in the table."""
    stored = pyhudi.read(spark, str(path)).select("id").distinct()
    return df.select("id").distinct().join(stored, "id").count()


# CI: one case per index family and table type; PYHUDI_LONG_TESTS=1 adds the rest of the matrix.
CASES = [("COPY_ON_WRITE", "BLOOM", True), ("MERGE_ON_READ", "SIMPLE", False), ("MERGE_ON_READ", "BUCKET", True),
         ("COPY_ON_WRITE", "GLOBAL_BLOOM", True)]
if os.environ.get("PYHUDI_LONG_TESTS") == "1":
    CASES += [("MERGE_ON_READ", "BLOOM", True), ("COPY_ON_WRITE", "BLOOM", False), ("COPY_ON_WRITE", "SIMPLE", True),
              ("COPY_ON_WRITE", "BUCKET", False)]


@pytest.mark.parametrize("table_type,index,partitioned", CASES)
def test_explain_matches_the_real_write_and_writes_nothing(spark, tmp_path, table_type, index, partitioned):
    path = tmp_path / "t"
    opts = _options(index, table_type, partitioned)
    pyhudi.write(_batch(spark, range(0, 240), 1), str(path), opts)
    # a second file group per partition with a disjoint key range (no small-file packing), so ranges prune
    pyhudi.write(_batch(spark, range(1000, 1240), 1), str(path), {**opts, "hoodie.parquet.small.file.limit": "0"})

    # upsert: updates, new keys beyond every range, and new keys inside a range (for the bloom filters to reject)
    upsert = _batch(spark, list(range(200, 300)) + ["k0030x", "k0031x", "k0032x"], 2)
    expected_updates = _stored_matches(spark, path, upsert)
    plan, result = _explain_then_write(spark, path, upsert, opts)
    _assert_matches(plan, result)
    stats = plan.index_stats
    assert stats["updates"] + stats["inserts"] == upsert.count()
    if not (index == "BUCKET" and table_type == "MERGE_ON_READ"):   # there inserts into buckets are log records
        assert stats["updates"] == expected_updates == 40
    if index in ("BLOOM", "SIMPLE") and partitioned:
        assert stats["files_considered"] == 6
    if index == "BLOOM":
        assert stats["files_pruned_by_range"] >= 1   # the k1xxx files hold none of the keys' range

    delete = _batch(spark, [5, 6, 7, 250, 9999], 3)
    expected_deletes = _stored_matches(spark, path, delete)
    plan, result = _explain_then_write(spark, path, delete, {**opts, "hoodie.datasource.write.operation": "delete"})
    _assert_matches(plan, result)
    if not (index == "BUCKET" and table_type == "MERGE_ON_READ"):   # a delete block names every key there
        assert plan.summary["deletes"] == expected_deletes == 4


def test_inserts_into_small_files_then_new_file_groups(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("BLOOM", "COPY_ON_WRITE", **{"hoodie.datasource.write.operation": "insert"})
    pyhudi.write(_batch(spark, range(0, 30), 1), str(path), opts)
    small = _batch(spark, range(30, 60), 1)
    plan, result = _explain_then_write(spark, path, small, opts)
    _assert_matches(plan, result)
    assert plan.summary["inserts_into_small_files"] == 30 and plan.summary["new_file_groups"] == 0
    assert plan.summary["bytes_to_rewrite"] > 0

    no_small = {**opts, "hoodie.parquet.small.file.limit": "0"}
    plan, result = _explain_then_write(spark, path, _batch(spark, range(60, 90), 1), no_small)
    _assert_matches(plan, result)
    assert plan.summary["inserts_into_new_file_groups"] == 30 and plan.summary["new_file_groups"] == 3
    assert plan.summary["bytes_to_rewrite"] == 0 and plan.summary["write_amplification"] == pytest.approx(1.0)


def test_report_and_dict(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("BLOOM", "MERGE_ON_READ")
    pyhudi.write(_batch(spark, range(0, 30), 1), str(path), {**opts, "hoodie.parquet.small.file.limit": "0"})
    plan = pyhudi.explain_write(_batch(spark, range(0, 6), 2), str(path), {**opts, "hoodie.parquet.small.file.limit": "0"})
    data = plan.as_dict()
    assert data["operation"] == "upsert" and data["table_type"] == "MERGE_ON_READ" and data["partitions"] == ["a", "b", "c"]
    assert {g["action"] for g in data["file_groups"]} == {"append_log"}   # MOR updates go to log files
    assert data["summary"]["bytes_appended_to_logs"] == data["summary"]["bytes_written"] > 0
    text = str(plan)
    assert "dry run" in text and "append_log" in text and len(text.splitlines()) == 4 + 2 + 3   # summary, header, 3 file groups
    assert pyhudi.read(spark, str(path)).filter("ts = 2").count() == 0   # nothing was written


def test_call_explain_write(spark, tmp_path):
    path = tmp_path / "t"
    pyhudi.sql(spark, f"CREATE TABLE ex_call (id string, region string, ts long, val string) USING hudi "
                      f"PARTITIONED BY (region) LOCATION '{path}' "
                      "TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')")
    try:
        pyhudi.sql(spark, "INSERT INTO ex_call VALUES ('k1', 1, 'v1', 'a'), ('k2', 1, 'v2', 'b')")
        before = _tree(path)
        query = "SELECT 'k1' AS id, 'a' AS region, 2L AS ts, 'v1b' AS val UNION ALL SELECT 'k3', 'c', 2L, 'v3'"
        rows = pyhudi.sql(spark, f"CALL explain_write(table => 'ex_call', query => \"{query}\")").collect()
        assert _tree(path) == before
        groups = [r for r in rows if r.section == "file_group"]
        assert sorted((r.partition_path, r.action, r.num_inserts, r.num_updates) for r in groups) == \
            [("region=a", "rewrite", 0, 1), ("region=c", "create", 1, 0)]
        metrics = {r.metric: r.value for r in rows if r.section != "file_group"}
        assert metrics["operation"] == "upsert" and metrics["updates"] == "1" and metrics["inserts"] == "1"
        by_path = pyhudi.sql(spark, f"CALL explain_write(path => '{path}', query => \"{query}\")").collect()
        assert sorted(map(tuple, (r for r in by_path if r.section == "file_group")))[0][:3] == \
            sorted(map(tuple, groups))[0][:3]
        # a query reading the table itself (as an UPDATE would): every stored key is an update, operation given
        rows = pyhudi.sql(spark, "CALL explain_write(table => 'ex_call', operation => 'upsert', "
                                 "query => 'SELECT id, region, ts + 1 AS ts, val FROM ex_call')").collect()
        metrics = {r.metric: r.value for r in rows if r.section == "summary"}
        assert (metrics["updates"], metrics["inserts"], metrics["partitions"]) == ("2", "0", "region=a,region=b")
        assert _tree(path) == before
        with pytest.raises(SqlError, match="no_such_table"):
            pyhudi.sql(spark, f"CALL explain_write(table => 'no_such_table', query => \"{query}\")")
    finally:
        pyhudi.sql(spark, "DROP TABLE IF EXISTS ex_call")


def test_bad_input_names_the_problem_and_leaves_the_table(spark, tmp_path):
    missing = tmp_path / "nothing_here"
    with pytest.raises(NotAHudiTableError, match="nothing_here"):
        pyhudi.explain_write(_batch(spark, [1], 1), str(missing), _options("BLOOM", "COPY_ON_WRITE"))
    assert not missing.exists()

    path = tmp_path / "t"
    opts = _options("BLOOM", "COPY_ON_WRITE")
    pyhudi.write(_batch(spark, range(0, 10), 1), str(path), opts)
    before = _tree(path)
    no_key = _batch(spark, [1], 2).drop("id")
    with pytest.raises(RecordKeyError, match=r"'id' of table ex .*hoodie.datasource.write.recordkey.field"):
        pyhudi.explain_write(no_key, str(path), opts)
    null_key = spark.createDataFrame([(None, "a", 2, "v")], "id string, region string, ts long, val string")
    with pytest.raises(RecordKeyError):   # found by the write's own keying job, before anything would be written
        pyhudi.explain_write(null_key, str(path), opts)
    with pytest.raises(PyHudiError, match="insert_overwrite"):
        pyhudi.explain_write(_batch(spark, [1], 2), str(path),
                             {**opts, "hoodie.datasource.write.operation": "insert_overwrite"})
    assert _tree(path) == before


def test_bulk_insert(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("BLOOM", "COPY_ON_WRITE", **{"hoodie.datasource.write.operation": "bulk_insert"})
    pyhudi.write(_batch(spark, range(0, 30), 1), str(path), opts)
    plan, result = _explain_then_write(spark, path, _batch(spark, range(30, 90), 1), opts)
    _assert_matches(plan, result)
    assert plan.summary["inserts_into_new_file_groups"] == 60 and plan.summary["bytes_to_rewrite"] == 0
    assert plan.partitions == ["a", "b", "c"] and plan.index_stats == {} and "index: not used" in str(plan)


def test_log_rollover_and_bucket_log_groups_count_file_groups(spark, tmp_path):
    """A MOR write whose log output rolls over (tiny hoodie.logfile.max.size: a write stat per log file) is one
    file group per group in the plan; under MOR + BUCKET a bucket without a file group starts with a log file and
    is a new group (CREATE), as the real write's stats say (prevCommit null)."""
    path = tmp_path / "t"
    tiny = {"hoodie.logfile.max.size": "1", "hoodie.logfile.data.block.max.size": "300"}
    opts = _options("BUCKET", "MERGE_ON_READ", **tiny)
    pyhudi.write(_batch(spark, range(0, 6), 1), str(path), opts)      # new buckets: log-only groups
    plan, result = _explain_then_write(spark, path, _batch(spark, range(0, 60), 2), opts)
    _assert_matches(plan, result)
    groups = {(s["partitionPath"], s["fileId"]) for s in result.write_stats}
    assert len(result.write_stats) > len(groups), "the tiny max size should roll some group over to more logs"
    assert plan.summary["file_groups_touched"] == len(plan.file_groups) == len(groups)
    new = sorted((g.partition_path, g.num_inserts) for g in plan.file_groups if g.action == "create")
    real_new: dict = {}
    for s in result.write_stats:   # new ids derive from the instant: compare partitions and insert counts
        if s["prevCommit"] == "null":
            real_new[(s["partitionPath"], s["fileId"])] = real_new.get((s["partitionPath"], s["fileId"]), 0) + \
                s["numInserts"]
    assert new and new == sorted((p, n) for (p, _), n in real_new.items())
    assert sum(g.num_writes for g in plan.file_groups) == sum(s["numWrites"] for s in result.write_stats)
