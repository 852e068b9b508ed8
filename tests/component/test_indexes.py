"""Indexes (SIMPLE, BLOOM, GLOBAL_*, BUCKET) on COW and MOR tables, index statistics, and file sizing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import pyhudi
from pyhudi.errors import ConfigError
from pyhudi.file_group.bloom_filter import FOOTER_MAX_KEY, FOOTER_MIN_KEY, from_footer
from pyhudi.index.bucket import bucket_id
from pyhudi.table import HudiTable
from support import assert_same_rows_as_hudi_rs, fixture_table, rows

INDEXES = ["SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "BUCKET"]
BUCKET_FILE_ID = re.compile(r"^\d{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-0$")


def _options(index: str, table_type: str = "COPY_ON_WRITE", **extra) -> dict:
    opts = {"hoodie.table.name": "idx", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index,
            "hoodie.bucket.index.num.buckets": "4"}
    opts.update(extra)
    return opts


def _batch(spark, ids, ts, regions=("a", "b", "c")):
    data = [(f"k{i:04d}", regions[i % len(regions)], ts, f"v{i}-{ts}") for i in ids]
    return spark.createDataFrame(data, "id string, region string, ts long, val string")


def _snapshot(spark, path):
    return sorted(rows(pyhudi.read(spark, str(path)), ["id", "region", "ts", "val", "_hoodie_partition_path"]))


def _commit_extra(path, instant):
    table = HudiTable.load(str(path))
    timeline = table.timeline()
    meta = timeline.read_metadata(next(i for i in timeline.completed_writes() if i.time == str(instant)))
    return meta["extraMetadata"]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", INDEXES)
def test_index_upsert_delete_matches_expected_and_hudi_rs(spark, tmp_path, index, table_type):
    path = tmp_path / "t"
    opts = _options(index, table_type)
    pyhudi.write(_batch(spark, range(0, 240), 1), str(path), opts)
    result = pyhudi.write(_batch(spark, range(200, 300), 2), str(path), opts)
    deleted = pyhudi.write(_batch(spark, [5, 6, 7, 250, 9999], 3), str(path),
                           {**opts, "hoodie.datasource.write.operation": "delete"})

    expected = {}
    for i in range(0, 240):
        expected[f"k{i:04d}"] = (f"k{i:04d}", "abc"[i % 3], 1, f"v{i}-1", "abc"[i % 3])
    for i in range(200, 300):
        expected[f"k{i:04d}"] = (f"k{i:04d}", "abc"[i % 3], 2, f"v{i}-2", "abc"[i % 3])
    for i in (5, 6, 7, 250):
        expected.pop(f"k{i:04d}")
    assert _snapshot(spark, path) == sorted(expected.values())
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)

    # WriteResult: prints as its instant, with stats that are also in the commit's extraMetadata
    assert str(result) == result.instant_time and result.operation == "upsert"
    stats = result.index_stats
    assert stats["index_type"] == index
    assert json.loads(_commit_extra(path, result)["pyhudi.index.stats"]) == stats
    if index == "BUCKET" and table_type == "MERGE_ON_READ":   # inserts into existing buckets go to log files
        assert stats["updates"] + stats["inserts"] == 100
    else:
        assert stats["updates"] == 40 and stats["inserts"] == 60
    if not (index == "BUCKET" and table_type == "MERGE_ON_READ"):   # there a delete block names every key
        assert deleted.index_stats["updates"] == 4   # four existing keys deleted, the unknown one ignored
    if index != "BUCKET":
        assert stats["keys_looked_up"] == 100
        assert stats["confirmed_files"] >= 1
        assert stats["candidate_files"] >= stats["confirmed_files"]
    if index == "BUCKET":
        for slice_ in HudiTable.load(str(path)).view().latest_slices():
            assert BUCKET_FILE_ID.match(slice_.file_id), slice_.file_id


def _ordered_table(spark, path, **extra):
    """Three file groups in one partition holding time-ordered key ranges k0000-0099, k0100-0199, k0200-0299."""
    opts = _options("BLOOM", **{"hoodie.parquet.small.file.limit": "0", **extra})
    for start in (0, 100, 200):
        pyhudi.write(_batch(spark, range(start, start + 100), 1, regions=("a",)), str(path), opts)
    assert len(HudiTable.load(str(path)).view().latest_base_files()) == 3
    return opts


def test_bloom_range_pruning_finds_the_one_file(spark, tmp_path):
    path = tmp_path / "t"
    opts = _ordered_table(spark, path)
    result = pyhudi.write(_batch(spark, range(150, 161), 2, regions=("a",)), str(path), opts)
    stats = result.index_stats
    assert stats["files_considered"] == 3
    assert stats["files_pruned_by_range"] == 2
    assert stats["candidate_files"] == 1 and stats["confirmed_files"] == 1
    assert stats["false_positive_files"] == 0 and stats["keys_looked_up"] == 11
    # the footer cache: the inserts of _ordered_table already looked up (and cached) the first two files
    assert stats["footers_read"] == 1
    again = pyhudi.write(_batch(spark, range(10, 12), 3, regions=("a",)), str(path), opts)
    assert again.index_stats["footers_read"] == 1   # only the file the update above rewrote
    assert again.index_stats["candidate_files"] == 1


def test_bloom_reads_many_footers_in_a_spark_job(spark, tmp_path, monkeypatch):
    from pyhudi.index import footers
    path = tmp_path / "t"
    opts = _options("BLOOM")
    pyhudi.write(_batch(spark, range(0, 60), 1), str(path), opts)
    monkeypatch.setattr(footers, "SPARK_READ_THRESHOLD", 1)   # 3 uncached footers: read by executors
    footers.CACHE.clear()
    result = pyhudi.write(_batch(spark, range(50, 70), 2), str(path), opts)
    assert result.index_stats["footers_read"] == 3 and result.index_stats["confirmed_files"] == 3
    assert result.index_stats["updates"] == 10 and result.index_stats["inserts"] == 10
    assert len(_snapshot(spark, path)) == 70


def test_bloom_without_range_pruning_uses_bloom_filters(spark, tmp_path):
    path = tmp_path / "t"
    opts = _ordered_table(spark, path, **{"hoodie.bloom.index.prune.by.ranges": "false"})
    stats = pyhudi.write(_batch(spark, range(150, 161), 2, regions=("a",)), str(path), opts).index_stats
    assert stats["files_pruned_by_range"] == 0
    assert stats["files_pruned_by_bloom"] == 2
    assert stats["candidate_files"] == 1 and stats["confirmed_files"] == 1
    new_keys = pyhudi.write(_batch(spark, range(1000, 1010), 2, regions=("a",)), str(path), opts).index_stats
    assert new_keys["candidate_files"] == 0 and new_keys["inserts"] == 10


@pytest.mark.parametrize("index", ["GLOBAL_SIMPLE", "GLOBAL_BLOOM"])
@pytest.mark.parametrize("move", [True, False])
def test_global_index_partition_change(spark, tmp_path, index, move):
    path = tmp_path / "t"
    flag = "hoodie.bloom.index.update.partition.path" if index == "GLOBAL_BLOOM" \
        else "hoodie.simple.index.update.partition.path"
    opts = _options(index, **{flag: str(move).lower()})
    pyhudi.write(_batch(spark, range(0, 30), 1), str(path), opts)
    # k0000 lived in region a, now arrives in region c
    moved = spark.createDataFrame([("k0000", "c", 2, "moved")], "id string, region string, ts long, val string")
    pyhudi.write(moved, str(path), opts)
    snapshot = [r for r in _snapshot(spark, path) if r[0] == "k0000"]
    if move:
        assert snapshot == [("k0000", "c", 2, "moved", "c")]
    else:   # updated in place: the record keeps its old partition path
        assert snapshot == [("k0000", "c", 2, "moved", "a")]
    assert len(_snapshot(spark, path)) == 30
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


# The write paths an upsert can take (writer/write_action.py, writer/one_job.py): one Python task (a small
# batch), the one job's stages, the counted plan (combine.before.upsert=false or a global index).
WRITE_PATHS = {"one_task": {}, "one_job_stages": {"one_task": False}, "counted": {"combine": "false"}}


def _on_path(monkeypatch, write_path: str, opts: dict) -> dict:
    from pyhudi.writer import one_job

    how = WRITE_PATHS[write_path]
    if how.get("one_task") is False:
        monkeypatch.setattr(one_job, "ONE_TASK_MAX_BYTES", -1)
    if "combine" in how:
        opts = {**opts, "hoodie.combine.before.upsert": how["combine"]}
    return opts


@pytest.mark.parametrize("index,write_path", [("SIMPLE", "one_task"), ("BLOOM", "one_task"),
                                              ("BLOOM", "one_job_stages"), ("SIMPLE", "counted"),
                                              ("BLOOM", "counted"), ("GLOBAL_BLOOM", "counted"),
                                              ("GLOBAL_SIMPLE", "counted")])
def test_mor_key_deleted_in_a_log_then_reinserted_is_updated_once(spark, tmp_path, monkeypatch, index, write_path):
    """A merge-on-read delete leaves the key in its base file (a delete block in the log). An `insert` (which
    skips the index) then puts the key in another file group: the next upsert must update that live copy only,
    not also the deleted one (the table held the key twice: the long model-based profile found it)."""
    path = str(tmp_path / "t")
    opts = _on_path(monkeypatch, write_path, _options(index, "MERGE_ON_READ"))
    pyhudi.write(_batch(spark, range(0, 12), 1, regions=("a",)), path, opts)
    pyhudi.write(_batch(spark, [3], 2, regions=("a",)), path, {**opts, "hoodie.datasource.write.operation": "delete"})
    pyhudi.write(_batch(spark, [3], 3, regions=("a",)), path, {**opts, "hoodie.datasource.write.operation": "insert"})
    groups = HudiTable.load(path).view().file_groups
    assert len(groups) == 2   # the re-inserted key lives in a new file group (the old one has a log: not small)
    pyhudi.write(_batch(spark, [3, 4], 4, regions=("a",)), path, opts)
    pyhudi.write(_batch(spark, [3], 5, regions=("a",)), path, {**opts, "hoodie.datasource.write.operation": "delete"})
    pyhudi.write(_batch(spark, [3, 5], 6, regions=("a",)), path, opts)
    snapshot = _snapshot(spark, path)
    expected = sorted([(f"k{i:04d}", "a", 1, f"v{i}-1", "a") for i in range(12) if i not in (3, 4, 5)]
                      + [("k0004", "a", 4, "v4-4", "a"), ("k0003", "a", 6, "v3-6", "a"), ("k0005", "a", 6, "v5-6", "a")])
    assert snapshot == expected
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def _flagged_regions(path) -> set[str]:
    from pyhudi.writer.live_keys import live_key_check
    table = HudiTable.load(str(path))
    check = live_key_check(table, table.view())
    return set() if check is None else {partition for partition, _ in check.slices}


def test_mor_slices_older_than_the_timeline_are_checked_only_when_archived_commits_wrote_their_logs(spark,
                                                                                                    tmp_path):
    """The live-key check reads a slice's logs when a commit wrote deletes there, or, as a precaution, when its
    log files may hold archived commits' deletes (their write stats are gone). After a compaction is archived,
    its base files are older than the active timeline, but the log files written since were all created on it
    (the archiver keeps the delta commits since the last compaction): no log is read on every later upsert."""
    path = str(tmp_path / "t")
    opts = _options("SIMPLE", "MERGE_ON_READ", **{"hoodie.cleaner.commits.retained": "1",
                                                   "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"})
    ab = ("a", "b")
    pyhudi.write(_batch(spark, range(0, 12), 1, regions=ab), path, opts)
    pyhudi.write(_batch(spark, [0, 1], 2, regions=ab), path, opts)
    [compaction] = pyhudi.compact(spark, path, options=opts)
    for ts in (3, 4, 5, 6):       # updates after the compaction; the archiver then archives it
        pyhudi.write(_batch(spark, [0, 1], ts, regions=ab), path, opts)
    assert HudiTable.load(path).view().before_timeline_start(compaction.time)
    assert _flagged_regions(path) == set()      # was {"a", "b"}: a log decode per upsert into either
    pyhudi.write(_batch(spark, [2], 7, regions=ab), path, {**opts, "hoodie.datasource.write.operation": "delete"})
    assert _flagged_regions(path) == {"a"}       # the delete's write stat
    pyhudi.write(_batch(spark, [2], 8, regions=ab), path, {**opts, "hoodie.datasource.write.operation": "insert",
                                                             "hoodie.parquet.small.file.limit": "0"})
    pyhudi.write(_batch(spark, [0, 2], 9, regions=ab), path, opts)
    expected = sorted([(f"k{i:04d}", ab[i % 2], 1, f"v{i}-1", ab[i % 2]) for i in range(3, 12)]
                      + [("k0001", "b", 6, "v1-6", "b"), ("k0000", "a", 9, "v0-9", "a"), ("k0002", "a", 9, "v2-9", "a")])
    assert _snapshot(spark, path) == expected
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_log_write_stat_records_where_an_append_starts():
    """On storage that can append, a write extends the slice's latest log file: its HoodieDeltaWriteStat has
    the offset its blocks start at and the bytes it appended (HoodieAppendHandle), so readers and the live-key
    check can tell which commit created the file."""
    from pyhudi.commit.metadata import write_stat
    from pyhudi.writer.file_writer import WrittenFile, stats_table
    row = stats_table([("a", "fg", WrittenFile("a/.fg_1.log.1_0-1-1", 3, 500, None, None), "1", 0, 3, 0)],
                      log_version=1, base_file="fg_0-1-1_1.parquet", log_offset=1200).to_pylist()[0]
    stat = write_stat(row)
    assert (stat.log_offset, stat.file_size_in_bytes, stat.total_write_bytes) == (1200, 500, 500)
    created = write_stat(stats_table([("a", "fg", WrittenFile("a/.fg_1.log.2_0-1-1", 3, 500, None, None), "1", 0, 3,
                                       0)], log_version=2, base_file="", log_offset=0).to_pylist()[0])
    assert created.log_offset == 0


@pytest.mark.parametrize("index", ["GLOBAL_SIMPLE", "GLOBAL_BLOOM"])
def test_mor_global_index_moved_key_is_updated_once(spark, tmp_path, index):
    """A global index moving a key to another partition deletes it from the old file group's log; the old base
    file still holds it, so later upserts must find only the new location."""
    path = str(tmp_path / "t")
    flag = "hoodie.bloom.index.update.partition.path" if index == "GLOBAL_BLOOM" \
        else "hoodie.simple.index.update.partition.path"
    opts = _options(index, "MERGE_ON_READ", **{flag: "true"})
    pyhudi.write(_batch(spark, range(0, 30), 1), path, opts)
    for ts in (2, 3, 4):   # k0000 moves from region a to c, then is updated there twice
        update = spark.createDataFrame([("k0000", "c", ts, f"moved-{ts}")], "id string, region string, ts long, val string")
        pyhudi.write(update, path, opts)
        snapshot = [r for r in _snapshot(spark, path) if r[0] == "k0000"]
        assert snapshot == [("k0000", "c", ts, f"moved-{ts}", "c")]
    assert len(_snapshot(spark, path)) == 30
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("write_path", ["one_task", "one_job_stages"])
def test_trusted_bloom_false_positives_keep_the_rows_right(spark, tmp_path, monkeypatch, table_type, write_path):
    """The one job takes a bloom positive as found when no other file's key range holds the key (no key column
    read). With a filter made to lie often (fpp 0.5), new keys inside a file's range go to that file group as
    its inserts: every key must still be there once, with its latest values, in pyhudi and hudi-rs."""
    path = str(tmp_path / "t")
    opts = _on_path(monkeypatch, write_path, _options(
        "BLOOM", table_type, **{"hoodie.bloom.index.filter.type": "SIMPLE", "hoodie.index.bloom.num_entries": "10",
                                "hoodie.index.bloom.fpp": "0.5", "hoodie.parquet.small.file.limit": "0"}))
    pyhudi.write(_batch(spark, range(0, 300, 2), 1), path, opts)          # one file per region, even keys
    result = pyhudi.write(_batch(spark, list(range(1, 300, 2)) + list(range(0, 60, 2)), 2), path, opts)
    expected = {i: (f"k{i:04d}", ("a", "b", "c")[i % 3], 1, f"v{i}-1") for i in range(0, 300, 2)}
    expected.update({i: (f"k{i:04d}", ("a", "b", "c")[i % 3], 2, f"v{i}-2") for i in range(1, 300, 2)})
    expected.update({i: (f"k{i:04d}", ("a", "b", "c")[i % 3], 2, f"v{i}-2") for i in range(0, 60, 2)})
    assert _snapshot(spark, path) == sorted(r + (r[1],) for r in expected.values())
    if table_type == "MERGE_ON_READ":   # false positives went to the stored file groups' logs (no small files)
        assert result.index_stats["updates"] > 30
    assert_same_rows_as_hudi_rs(spark, path, min_columns=4)


def test_bucket_ids_follow_hudi_and_rewrite_lands_in_same_group(spark, tmp_path):
    jvm = spark.sparkContext._jvm
    for key in ["k0001", "abc", "é-ü", "2020-01-01", "\U0001F600x"]:
        java_hash = jvm.java.util.Collections.singletonList(key).hashCode()
        assert bucket_id(key, ["id"], 7) == (java_hash & 0x7FFFFFFF) % 7, key
    pair = jvm.java.util.ArrayList()
    pair.add("k1")
    pair.add("a")
    assert bucket_id("id:k1,region:a", ["id", "region"], 5) == (pair.hashCode() & 0x7FFFFFFF) % 5
    assert bucket_id("id:k1,region:a", ["region"], 5) == \
        (jvm.java.util.Collections.singletonList("a").hashCode() & 0x7FFFFFFF) % 5

    path = tmp_path / "t"
    opts = _options("BUCKET")
    pyhudi.write(_batch(spark, range(0, 40), 1), str(path), opts)
    before = {r["_hoodie_record_key"]: r["_hoodie_file_name"].split("_")[0]
              for r in pyhudi.read(spark, str(path)).collect()}
    for key, file_id in before.items():
        assert int(file_id[:8]) == bucket_id(key, ["id"], 4)
    pyhudi.write(_batch(spark, range(0, 40, 3), 2), str(path), opts)
    after = {r["_hoodie_record_key"]: r["_hoodie_file_name"].split("_")[0]
             for r in pyhudi.read(spark, str(path)).collect()}
    assert after == before
    props = HudiTable.load(str(path)).properties
    assert props.get("hoodie.index.type") == "BUCKET" and props.get("hoodie.bucket.index.num.buckets") == "4"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_writer_dedup_matches_the_shuffle_dedup_of_global_indexes(spark, tmp_path, table_type):
    """Partition-scoped indexes keep the latest record per key inside the writer task; a global index does it
    with a Spark window first. All pick the same winners: greatest ts, then the later record; a winning delete
    writes nothing."""
    schema = "id string, region string, ts long, val string, _hoodie_is_deleted boolean"
    first = [("k1", "a", 1, "old", False), ("k2", "a", 1, "old", False)]
    batch = [("k1", "a", 5, "ts5-wins", False), ("k1", "a", 3, "ts3", False),            # greater ts wins
             ("k2", "a", 2, "first-of-tie", False), ("k2", "a", 2, "last-of-tie", False),  # tie: later wins
             ("k3", "b", 9, "deleted", True), ("k3", "b", 4, "insert-loses", False),       # delete wins: no k3
             ("k4", "b", 1, "insert-wins", False), ("k4", "b", 0, "delete-loses", True),
             ("k5", "c", None, "null-ts-loses", False), ("k5", "c", 1, "ts1-wins", False)]
    snapshots = {}
    for index in ("GLOBAL_SIMPLE", "SIMPLE", "BLOOM", "BUCKET"):
        path = tmp_path / index
        opts = _options(index, table_type)
        pyhudi.write(spark.createDataFrame(first, schema).coalesce(1), str(path), opts)
        pyhudi.write(spark.createDataFrame(batch, schema).coalesce(1), str(path), opts)
        snapshots[index] = _snapshot(spark, path)
    assert snapshots["BUCKET"] == snapshots["BLOOM"] == snapshots["SIMPLE"] == snapshots["GLOBAL_SIMPLE"] == [
        ("k1", "a", 5, "ts5-wins", "a"), ("k2", "a", 2, "last-of-tie", "a"), ("k4", "b", 1, "insert-wins", "b"),
        ("k5", "c", 1, "ts1-wins", "c")]
    assert_same_rows_as_hudi_rs(spark, tmp_path / "BUCKET", min_columns=4)
    assert_same_rows_as_hudi_rs(spark, tmp_path / "BLOOM", min_columns=4)


def test_base_file_footer_holds_the_bloom_filter_once(spark, tmp_path):
    path = tmp_path / "t"
    pyhudi.write(_batch(spark, range(0, 50), 1), str(path), _options("BLOOM"))
    for file in path.rglob("*.parquet"):
        footer = pq.ParquetFile(file).metadata.metadata
        assert from_footer({k.decode(): v.decode() for k, v in footer.items()}).might_contain("k0000") \
            or "k0000" not in pq.read_table(file, columns=["_hoodie_record_key"])["_hoodie_record_key"].to_pylist()
        assert len(footer.get(b"ARROW:schema", b"")) < 10_000, file   # the filter is not copied in there


def test_bucket_count_cannot_change(spark, tmp_path):
    path = tmp_path / "t"
    pyhudi.write(_batch(spark, range(0, 20), 1), str(path), _options("BUCKET"))
    files = sorted(p.name for p in path.rglob("*") if p.is_file())
    with pytest.raises(ConfigError, match="hoodie.bucket.index.num.buckets"):
        pyhudi.write(_batch(spark, range(0, 5), 2), str(path),
                     _options("BUCKET", **{"hoodie.bucket.index.num.buckets": "8"}))
    with pytest.raises(ConfigError, match="hoodie.index.type"):
        pyhudi.write(_batch(spark, range(0, 5), 2), str(path), _options("BLOOM"))
    assert sorted(p.name for p in path.rglob("*") if p.is_file()) == files


def test_bucket_index_on_a_non_bucket_table_is_refused(spark, tmp_path):
    path = tmp_path / "t"
    pyhudi.write(_batch(spark, range(0, 20), 1), str(path), _options("SIMPLE"))
    files = sorted(p.name for p in path.rglob("*") if p.is_file())
    with pytest.raises(ConfigError, match="bucket"):
        pyhudi.write(_batch(spark, range(0, 5), 2), str(path), _options("BUCKET"))
    assert sorted(p.name for p in path.rglob("*") if p.is_file()) == files


def test_unknown_index_type_lists_valid_values(spark, tmp_path):
    with pytest.raises(ConfigError, match="BLOOM.*GLOBAL_BLOOM|GLOBAL_BLOOM.*BLOOM"):
        pyhudi.write(_batch(spark, range(3), 1), str(tmp_path / "t"), _options("HASHMAP"))
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("name", ["cow_v6_simplekeygen_nonhivestyle", "mor_parquet_v6_simplekeygen_nonhivestyle",
                                  "cow_v8_simplekeygen_nonhivestyle", "cow_v6_nonpartitioned"])
def test_java_footers_contain_every_key(tmp_path_factory, name):
    base = fixture_table(name, tmp_path_factory)
    files = [p for p in Path(base).rglob("*.parquet") if ".hoodie" not in p.parts]
    assert files
    for file in files:
        parquet = pq.ParquetFile(file)
        footer = {k.decode(): v.decode() for k, v in (parquet.metadata.metadata or {}).items()}
        keys = parquet.read(columns=["_hoodie_record_key"])["_hoodie_record_key"].to_pylist()
        bloom = from_footer(footer)
        assert bloom is not None, file
        assert bloom.might_contain_many(keys).all(), file
        assert footer[FOOTER_MIN_KEY] == min(keys) and footer[FOOTER_MAX_KEY] == max(keys), file


# --- file sizing ---------------------------------------------------------------------------------------------
def _wide(spark, start, n, ts=1):
    """Rows of ~1 KB (hex digests: realistic compression), one partition."""
    payload = F.concat(*[F.sha2(F.concat(F.col("id").cast("string"), F.lit(str(s))), 512) for s in range(8)])
    return (spark.range(start, start + n)
            .select(F.format_string("k%06d", "id").alias("id"), F.lit("a").alias("region"),
                    F.lit(ts).cast("long").alias("ts"), payload.alias("val")))


# A small bloom filter: the default one (60000 entries at fpp 1e-9) alone takes ~0.4 MB of footer per file.
SIZING = {"hoodie.parquet.max.file.size": str(200 * 1024), "hoodie.parquet.small.file.limit": str(100 * 1024),
          "hoodie.copyonwrite.record.size.estimate": "600", "hoodie.index.bloom.num_entries": "500",
          "hoodie.bloom.index.filter.dynamic.max.entries": "1000"}


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_inserts_cut_near_max_size_and_fill_small_files(spark, tmp_path, table_type):
    path = tmp_path / "t"
    opts = _options("BLOOM", table_type, **SIZING)
    pyhudi.write(_wide(spark, 0, 900), str(path), opts)
    sizes = sorted(b.size for b in HudiTable.load(str(path)).view().latest_base_files())
    assert len(sizes) >= 2
    assert all(s <= 260 * 1024 for s in sizes), sizes
    assert sizes[-1] >= 120 * 1024, sizes        # full files land near the max
    small = [s for s in sizes if s < 100 * 1024]
    groups_before = len(sizes)
    pyhudi.write(_wide(spark, 5000, 60, ts=2), str(path), opts)
    after = sorted(b.size for b in HudiTable.load(str(path)).view().latest_base_files())
    if small:   # the inserts went into the small file: no new file group
        assert len(after) == groups_before, (sizes, after)
    assert all(s <= 260 * 1024 for s in after), after


def test_bulk_insert_cuts_files_near_max_size(spark, tmp_path):
    path = tmp_path / "t"
    opts = _options("SIMPLE", **SIZING, **{"hoodie.datasource.write.operation": "bulk_insert"})
    pyhudi.write(_wide(spark, 0, 900), str(path), opts)
    sizes = sorted(b.size for b in HudiTable.load(str(path)).view().latest_base_files())
    assert len(sizes) >= 2 and all(s <= 260 * 1024 for s in sizes), sizes


def test_bulk_insert_of_small_records_fills_files_by_their_encoded_size(spark, tmp_path):
    """Hudi's bulk_insert cuts a file when its parquet writer's data reaches max.file.size: records of ~20 bytes
    fill ~1 MB files, where the upsert's record size estimate (1 KB a record) would cut every 1,024 records."""
    path = tmp_path / "t"
    opts = _options("BLOOM", **{"hoodie.datasource.write.operation": "bulk_insert", "hoodie.bulkinsert.sort.mode":
                                "GLOBAL_SORT", "hoodie.bulkinsert.shuffle.parallelism": "1",
                                "hoodie.parquet.max.file.size": str(1 << 20), "hoodie.index.bloom.num_entries": "500",
                                "hoodie.bloom.index.filter.dynamic.max.entries": "1000"})
    rows = spark.range(0, 150_000).select(F.format_string("k%07d", "id").alias("id"), F.lit("a").alias("region"),
                                          F.lit(1).cast("long").alias("ts"), (F.col("id") % 97).alias("val"))
    pyhudi.write(rows, str(path), opts)
    files = HudiTable.load(str(path)).view().latest_base_files()
    sizes = sorted(b.size for b in files)
    assert 2 <= len(sizes) <= 6, sizes                      # 1,024 records a file would make ~146 files
    assert all(s <= 1.3 * (1 << 20) for s in sizes), sizes
    assert sizes[-1] >= 0.6 * (1 << 20), sizes              # full files land near the max
    assert pyhudi.read(spark, str(path)).count() == 150_000
