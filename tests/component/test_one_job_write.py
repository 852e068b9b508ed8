"""The one-job write (writer/one_job.py): an upsert runs as one Spark job (a batch Spark knows to be small: as one
Python task), places inserts into small files and new file groups by Hudi's sizing, resolves keys whose range
overlaps several files, and a COW rewrite carries the old bloom filter over and writes unique columns without a
dictionary."""

from __future__ import annotations

import random
import uuid

import pandas as pd
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import pyhudi
from pyhudi.file_group.bloom_filter import FOOTER_BLOOM_KEY, from_footer
from pyhudi.index.bucket import new_bucket_file_id
from pyhudi.table import HudiTable
from file_audit import misnamed_rows
from support import assert_same_rows_as_hudi_rs, rows


def _options(index="BLOOM", table_type="COPY_ON_WRITE", **extra) -> dict:
    return {"hoodie.table.name": "onejob", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index,
            "hoodie.bucket.index.num.buckets": "2", **extra}


def _batch(spark, ids, ts, regions=("a", "b"), sized=False):
    """Rows made on the driver (Spark cannot size them: the write runs its stages), or `sized` from pandas (a
    local relation Spark sizes: a small one runs in one Python task)."""
    data = [(f"k{i:04d}", regions[i % len(regions)], ts, f"v{i}-{ts}") for i in ids]
    if sized:
        return spark.createDataFrame(pd.DataFrame(data, columns=["id", "region", "ts", "val"]),
                                     "id string, region string, ts long, val string")
    return spark.createDataFrame(data, "id string, region string, ts long, val string")


def _snapshot(spark, path):
    return sorted(rows(pyhudi.read(spark, str(path)), ["id", "region", "ts", "val"]))


def _jobs_started_by(spark, action) -> list[int]:
    """The ids of the Spark jobs `action` starts (the jobs of a job group set for it)."""
    sc = spark.sparkContext
    group = f"onejob-{uuid.uuid4()}"
    sc.setJobGroup(group, "one-job test")
    try:
        action()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return list(sc.statusTracker().getJobIdsForGroup(group))


def _jobs_of(spark, action) -> int:
    return len(_jobs_started_by(spark, action))


def _tasks_of(spark, action) -> list[int]:
    """The tasks of each stage of the Spark jobs `action` starts."""
    tracker = spark.sparkContext.statusTracker()
    return [tracker.getStageInfo(stage).numTasks for job in _jobs_started_by(spark, action)
            for stage in tracker.getJobInfo(job).stageIds if tracker.getStageInfo(stage) is not None]


@pytest.mark.parametrize("sized", [False, True], ids=["stages", "one-task"])
@pytest.mark.parametrize("index,table_type", [("BLOOM", "COPY_ON_WRITE"), ("BLOOM", "MERGE_ON_READ"),
                                              ("SIMPLE", "COPY_ON_WRITE"), ("BUCKET", "MERGE_ON_READ")])
def test_upsert_is_one_spark_job(spark, tmp_path, index, table_type, sized):
    path = str(tmp_path / "t")
    opts = _options(index, table_type)
    pyhudi.write(_batch(spark, range(0, 40), 1, sized=sized), path, opts)
    result = {}
    tasks = _tasks_of(spark, lambda: result.update(
        r=pyhudi.write(_batch(spark, range(30, 50), 2, sized=sized), path, opts)))
    if sized:   # one stage of one task: no shuffle
        assert tasks == [1]
    else:
        jobs = _jobs_of(spark, lambda: pyhudi.write(_batch(spark, range(30, 50), 2), path, opts))
        assert jobs == 1 and len(tasks) > 1
    stats = result["r"].index_stats
    assert stats["updates"] + stats["inserts"] == 20
    expected = {f"k{i:04d}": (f"k{i:04d}", "ab"[i % 2], 1 if i < 30 else 2, f"v{i}-{1 if i < 30 else 2}")
                for i in range(50)}
    assert _snapshot(spark, path) == sorted(expected.values())
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_inserts_fill_small_files_then_new_file_groups(spark, tmp_path):
    """Hudi's sizing: a partition's inserts go to its small file up to max.file.size (by the record size), the
    rest to new file groups of max.file.size / record size records."""
    path = str(tmp_path / "t")
    pyhudi.write(_batch(spark, range(0, 5), 1, regions=("a",)), path, _options())
    first = HudiTable.load(path).view().latest_base_files()
    assert len(first) == 1
    size = first[0].size
    record = max(1, size // 5)
    opts = _options(**{"hoodie.parquet.max.file.size": str(size + 10 * record),
                       "hoodie.parquet.small.file.limit": str(size + 1),
                       "hoodie.copyonwrite.record.size.estimate": str(record)})
    per_file = (size + 10 * record) // record
    result = pyhudi.write(_batch(spark, range(5, 60), 2, regions=("a",)), path, opts)
    written = {s["fileId"]: s for s in result.write_stats}
    assert written[first[0].file_id]["numInserts"] == 10   # the small file's free capacity
    new = sorted(s["numInserts"] for s in result.write_stats if s["fileId"] != first[0].file_id)
    assert new == sorted([per_file] * (45 // per_file) + ([45 % per_file] if 45 % per_file else []))
    assert len(HudiTable.load(path).view().latest_base_files()) == 1 + len(new)
    assert len(_snapshot(spark, path)) == 60
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_keys_in_overlapping_ranges_are_found_once(spark, tmp_path):
    """Two files whose key ranges overlap: an existing key is an update of the file holding it, a new key in
    both ranges is inserted once."""
    path = str(tmp_path / "t")
    opts = _options(**{"hoodie.parquet.small.file.limit": "0"})
    pyhudi.write(_batch(spark, [0, 10, 20], 1, regions=("a",)), path, opts)
    pyhudi.write(_batch(spark, [5, 15, 25], 1, regions=("a",)), path, opts)
    assert len(HudiTable.load(path).view().latest_base_files()) == 2
    result = pyhudi.write(_batch(spark, [10, 15, 12, 12], 2, regions=("a",)), path, opts)
    stats = result.index_stats
    assert stats["updates"] == 2 and stats["inserts"] == 1
    assert stats["files_considered"] == 2 and stats["candidate_files"] == 2
    assert sorted(r[0] for r in _snapshot(spark, path)) == [f"k{i:04d}" for i in (0, 5, 10, 12, 15, 20, 25)]
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_delete_of_unknown_and_known_keys(spark, tmp_path):
    path = str(tmp_path / "t")
    opts = _options(table_type="MERGE_ON_READ")
    pyhudi.write(_batch(spark, range(0, 10), 1), path, opts)
    result = pyhudi.write(_batch(spark, [1, 2, 99], 2), path,
                          {**opts, "hoodie.datasource.write.operation": "delete"})
    assert result.index_stats["updates"] == 2 and result.index_stats["inserts"] == 0
    assert sorted(r[0] for r in _snapshot(spark, path)) == [f"k{i:04d}" for i in (0, 3, 4, 5, 6, 7, 8, 9)]
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_rewrite_carries_the_bloom_filter_and_keys_have_no_dictionary(spark, tmp_path):
    path = str(tmp_path / "t")
    opts = _options()
    pyhudi.write(_batch(spark, range(0, 50), 1, regions=("a",)), path, opts)
    old = HudiTable.load(path).view().latest_base_files()[0]
    old_footer = pq.ParquetFile(f"{path}/{old.path}").metadata.metadata
    pyhudi.write(_batch(spark, range(10, 20), 2, regions=("a",)), path, opts)   # updates only
    new = HudiTable.load(path).view().latest_base_files()[0]
    meta = pq.ParquetFile(f"{path}/{new.path}").metadata
    assert new.path != old.path
    assert meta.metadata[FOOTER_BLOOM_KEY.encode()] == old_footer[FOOTER_BLOOM_KEY.encode()]
    pyhudi.write(_batch(spark, range(50, 60), 3, regions=("a",)), path, opts)   # inserts: the filter grows
    latest = HudiTable.load(path).view().latest_base_files()[0]
    parquet = pq.ParquetFile(f"{path}/{latest.path}")
    bloom = from_footer(parquet.metadata.metadata)
    assert bloom.might_contain_many([f"k{i:04d}" for i in range(60)]).all()
    names = parquet.schema_arrow.names
    for column in ("_hoodie_record_key", "_hoodie_commit_seqno", "id"):
        encodings = parquet.metadata.row_group(0).column(names.index(column)).encodings
        assert not any("DICTIONARY" in e for e in encodings), (column, encodings)
    region = parquet.metadata.row_group(0).column(names.index("region")).encodings
    assert not any("DICTIONARY" in e for e in region)   # 60 rows: below DICTIONARY_MIN_ROWS (test_parquet_settings)
    assert len(_snapshot(spark, path)) == 60


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_rewritten_files_name_themselves_in_every_row(spark, tmp_path, table_type):
    """A merge that copies stored records into a new file version (COW upsert and delete; a MOR small file taking
    inserts) writes the new file's name into `_hoodie_file_name` of every row, copied ones too, as Hudi's
    HoodieMergeHandle does; their commit time and sequence number stay."""
    path = str(tmp_path / "t")
    opts = _options(table_type=table_type)
    pyhudi.write(_batch(spark, range(0, 20), 1, regions=("a",)), path, opts)
    before = pq.read_table(f"{path}/{HudiTable.load(path).view().latest_base_files()[0].path}").to_pylist()
    pyhudi.write(_batch(spark, [3, 25], 2, regions=("a",)), path, opts)   # an update and an insert: a rewrite
    if table_type == "COPY_ON_WRITE":
        pyhudi.write(_batch(spark, [4], 3, regions=("a",)), path, {**opts, "hoodie.datasource.write.operation": "delete"})
    files = HudiTable.load(path).view().latest_base_files()
    assert len(files) == 1 and files[0].path.rsplit("/", 1)[-1] not in {r["_hoodie_file_name"] for r in before}
    assert misnamed_rows(path) == []
    after = {r["_hoodie_record_key"]: r for r in pq.read_table(f"{path}/{files[0].path}").to_pylist()}
    for old in before:
        if old["id"] not in ("k0003", "k0004"):
            kept = after[old["_hoodie_record_key"]]
            assert (kept["_hoodie_commit_time"], kept["_hoodie_commit_seqno"]) == \
                (old["_hoodie_commit_time"], old["_hoodie_commit_seqno"])
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


@pytest.mark.parametrize("sized", [False, True], ids=["stages", "one-task"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_sequence_numbers_are_unique_within_a_commit(spark, tmp_path, table_type, sized):
    """`_hoodie_commit_seqno` is `<instant>_<task partition>_<n>`; a task writing several files (file groups of
    two partitions, small files and new ones, files cut by size in a bulk insert) gives each file its own range
    of n, so no two rows of a commit share one (Hudi writes each file group in its own task)."""
    path = str(tmp_path / "t")
    opts = _options(table_type=table_type, **{"hoodie.parquet.small.file.limit": "0"})
    bulk = {**opts, "hoodie.datasource.write.operation": "bulk_insert", "hoodie.parquet.max.file.size": "2000",
            "hoodie.copyonwrite.record.size.estimate": "100"}
    pyhudi.write(_batch(spark, range(0, 60), 1, sized=sized), path, bulk)
    pyhudi.write(_batch(spark, range(0, 60, 3), 2, sized=sized), path, opts)         # updates in every file
    pyhudi.write(_batch(spark, [*range(1, 60, 3), *range(60, 70)], 3, sized=sized), path, opts)
    table = pyhudi.read(spark, path).select("_hoodie_commit_time", "_hoodie_commit_seqno").toPandas()
    assert len(table) == 70 and table["_hoodie_commit_time"].nunique() == 3
    repeated = table[table["_hoodie_commit_seqno"].duplicated(keep=False)]
    assert repeated.empty, repeated.sort_values("_hoodie_commit_seqno")
    assert all(s.startswith(f"{t}_") for t, s in zip(table["_hoodie_commit_time"], table["_hoodie_commit_seqno"]))
    assert len(HudiTable.load(path).view().latest_slices()) > 2


def test_new_bucket_file_id_matches_the_bucket_tag_column(spark):
    digest = F.md5(F.concat_ws("|", F.lit("20260101000000000"), F.lit("a/b"), F.lit("3")))
    row = spark.range(1).select(F.concat(F.lit("00000003-"), F.substring(digest, 9, 4), F.lit("-"),
                                         F.substring(digest, 13, 4), F.lit("-"), F.substring(digest, 17, 4),
                                         F.lit("-"), F.substring(digest, 21, 12), F.lit("-0"))).first()[0]
    assert new_bucket_file_id("20260101000000000", "a/b", 3) == row


def test_overlapping_writes_restore_adaptive_execution(spark):
    """Two writes whose one-job stages overlap (dbt threads) leave spark.sql.adaptive.enabled as they found it,
    also when the first one in is the first one out."""
    import threading

    from pyhudi.writer.one_job import stages_in_one_job

    before = spark.conf.get("spark.sql.adaptive.enabled")
    second_in, first_out = threading.Event(), threading.Event()

    def second():
        with stages_in_one_job(spark):
            second_in.set()
            first_out.wait(10)

    worker = threading.Thread(target=second)
    with stages_in_one_job(spark):
        worker.start()
        second_in.wait(10)
    assert spark.conf.get("spark.sql.adaptive.enabled") == "false"   # the second write is still inside
    first_out.set()
    worker.join(10)
    assert spark.conf.get("spark.sql.adaptive.enabled") == before


@pytest.mark.parametrize("table_type,index", [("COPY_ON_WRITE", "BLOOM"), ("MERGE_ON_READ", "BLOOM"),
                                              ("COPY_ON_WRITE", "SIMPLE"), ("MERGE_ON_READ", "BUCKET")])
def test_one_task_and_stages_write_the_same_table(spark, tmp_path, monkeypatch, table_type, index):
    """Random batches (updates, inserts, repeated keys, deletes, small files) written by the one-task path, by
    the same shared out over one task per core (task_share.TaskShare: each task reads the batch and writes its own
    partitions; forced here on a small table) and by the staged path: the same rows, the same file groups per
    partition and the same write counts."""
    from pyhudi.writer import task_share

    rng = random.Random(f"{table_type}{index}")
    small = {"hoodie.parquet.max.file.size": "6000", "hoodie.parquet.small.file.limit": "4000",
             "hoodie.copyonwrite.record.size.estimate": "40"}
    opts = _options(index, table_type, **small)
    paths = {way: str(tmp_path / way) for way in ("stages", "one", "shared")}
    counts = {way: [] for way in paths}
    shared_tasks = []
    for ts in range(1, 9):
        ids = [rng.randrange(0, 120) for _ in range(rng.randrange(1, 60))]
        regions = ("a", "b", "c", "d")[:rng.randrange(1, 5)]
        operation = "delete" if ts > 2 and rng.random() < 0.3 else "upsert"
        for way, path in paths.items():
            def write():
                return pyhudi.write(_batch(spark, ids, ts, regions, sized=way != "stages"), path,
                                    {**opts, "hoodie.datasource.write.operation": operation})
            if way == "shared":
                with monkeypatch.context() as patch:
                    patch.setattr(task_share, "SPLIT_MIN_FILE_GROUPS", 1)
                    result = {}
                    shared_tasks.append(_tasks_of(spark, lambda: result.update(r=write())))
                    result = result["r"]
            else:
                result = write()
            counts[way].append(sorted((s["partitionPath"], s["numInserts"], s["numUpdateWrites"],
                                       s["numDeletes"]) for s in result.write_stats))
    assert counts["one"] == counts["stages"] and counts["shared"] == counts["stages"]
    assert [2] in shared_tasks   # some writes were shared out (once the table had two partitions)
    assert _snapshot(spark, paths["one"]) == _snapshot(spark, paths["stages"]) == _snapshot(spark, paths["shared"])
    groups = {way: sorted((s.partition_path, len(s.log_files), s.base_file is not None)
                          for s in HudiTable.load(path).view().latest_slices(None))
              for way, path in paths.items()}
    assert groups["one"] == groups["stages"] == groups["shared"]
    assert_same_rows_as_hudi_rs(spark, paths["shared"], min_columns=4)


def test_small_batch_is_shared_out_only_when_rereading_it_is_safe_and_cheap(spark):
    """task_share.one_task_split: a task per core for a table with many file groups over several partitions, the
    partitions balanced by file groups; never for a batch that is not deterministic or that shuffles (a dbt
    model's query would run once per task)."""
    from pyhudi.writer import one_job, task_share

    many = {(f"p{p}", f"g{g}"): None for p in range(3) for g in range(30 + 10 * p)}   # 30, 40, 50 groups
    share = task_share.one_task_split(spark, many, rereadable=True)
    assert share is not None and share.tasks == 2
    assert share.owners == {"p2": 0, "p1": 1, "p0": 1}      # 50 | 40 + 30
    assert share.owner("new-partition") == share.owner("new-partition") in (0, 1)
    assert task_share.one_task_split(spark, many, rereadable=False) is None
    assert task_share.one_task_split(spark, {("p0", f"g{g}"): None for g in range(200)}, rereadable=True) is None
    assert task_share.one_task_split(spark, {(f"p{p}", "g"): None for p in range(10)}, rereadable=True) is None
    source = spark.range(10).selectExpr("id", "id % 3 AS part")
    assert one_job.batch_plan(source)[1:] == (False, True)
    assert one_job.batch_plan(source.selectExpr("id", "rand() AS r"))[2] is False
    assert one_job.batch_plan(source.groupBy("part").count())[1] is True
