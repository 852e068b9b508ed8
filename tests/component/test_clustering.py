"""Clustering (issue 15 item 1): a replacecommit whose requested file holds Hudi's clustering plan; execution
rewrites the planned file groups sorted by the sort columns, in Spark executors; readers (pyhudi and hudi-rs) see
the same rows before and after, time travel sees the old files, failures are undone, the plan is Hudi's Avro."""

from __future__ import annotations

import io
import math
import os

import fastavro
import pyarrow.parquet as pq
import pytest

import pyhudi
from pyhudi.client.clustering import cluster, run_inline_clustering_if_due, schedule_clustering
from pyhudi.errors import ConfigError, WriteConflictError
from pyhudi.table import HudiTable
from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

DATA = ["id", "city", "fare", "ts"]
CORE = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path"] + DATA

# Hudi's schemas (hudi-common/src/main/avro/HoodieRequestedReplaceMetadata.avsc, HoodieClusteringPlan.avsc,
# HoodieClusteringGroup.avsc, HoodieSliceInfo.avsc, HoodieClusteringStrategy.avsc, release 0.14/0.15), written out
# here independently of pyhudi's copy: the plan file must parse with them.
_NS = "org.apache.hudi.avro.model"
_SMAP = ["null", {"type": "map", "values": "string"}]
HUDI_REQUESTED_REPLACE = {"namespace": _NS, "type": "record", "name": "HoodieRequestedReplaceMetadata", "fields": [
    {"name": "operationType", "type": ["null", "string"], "default": None},
    {"name": "clusteringPlan", "default": None, "type": ["null", {
        "namespace": _NS, "type": "record", "name": "HoodieClusteringPlan", "fields": [
            {"name": "inputGroups", "default": None, "type": ["null", {"type": "array", "items": {
                "namespace": _NS, "type": "record", "name": "HoodieClusteringGroup", "fields": [
                    {"name": "slices", "default": None, "type": ["null", {"type": "array", "items": {
                        "namespace": _NS, "type": "record", "name": "HoodieSliceInfo", "fields": [
                            {"name": "dataFilePath", "type": ["null", "string"], "default": None},
                            {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": "string"}],
                             "default": None},
                            {"name": "fileId", "type": ["null", "string"]},
                            {"name": "partitionPath", "type": ["null", "string"], "default": None},
                            {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
                            {"name": "version", "type": ["int", "null"], "default": 1}]}}]},
                    {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                    {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
                    {"name": "version", "type": ["int", "null"], "default": 1}]}}]},
            {"name": "strategy", "default": None, "type": ["null", {
                "namespace": _NS, "type": "record", "name": "HoodieClusteringStrategy", "fields": [
                    {"name": "strategyClassName", "type": ["null", "string"], "default": None},
                    {"name": "strategyParams", "type": _SMAP, "default": None},
                    {"name": "version", "type": ["int", "null"], "default": 1}]}]},
            {"name": "extraMetadata", "type": _SMAP, "default": None},
            {"name": "version", "type": ["int", "null"], "default": 1},
            {"name": "preserveHoodieMetadata", "type": ["null", "boolean"], "default": None}]}]},
    {"name": "extraMetadata", "type": _SMAP, "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1}]}


def _options(name, table_type="COPY_ON_WRITE", **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.parquet.small.file.limit": "0",
            "hoodie.clean.automatic": "false", **extra}


def _batch(spark, start, n, ts=1):
    data = [(i, "sf" if i % 2 else "nyc", float((i * 7919) % 1000), ts) for i in range(start, start + n)]
    return spark.createDataFrame(data, "id long, city string, fare double, ts long")


def _small_files_table(spark, path, table_type="COPY_ON_WRITE", batches=5, per_batch=40, **extra):
    """`batches` inserts, each a new file group per partition (small.file.limit 0): many small files."""
    opts = _options(os.path.basename(str(path)), table_type, **extra)
    for b in range(batches):
        pyhudi.write(_batch(spark, b * per_batch, per_batch), str(path),
                     {**opts, "hoodie.datasource.write.operation": "insert"})
    return opts


def _latest_files(path):
    return HudiTable.load(str(path)).view().latest_base_files()


def _target_bytes(path, records_per_file):
    """target.file.max.bytes that makes `records_per_file` rows per output file (sized by the average record size
    of the latest commit, as the clustering writer sizes files)."""
    timeline = HudiTable.load(str(path)).timeline()
    meta = timeline.read_metadata(timeline.completed_writes()[-1])
    stats = [s for g in meta["partitionToWriteStats"].values() for s in g if "logVersion" not in s]
    size = sum(s["totalWriteBytes"] for s in stats) // sum(s["numWrites"] for s in stats)
    return str(size * records_per_file)


def _requested(path, instant):
    return (path / ".hoodie" / f"{instant}.replacecommit.requested").read_bytes()


def test_cow_clustering_sorts_and_reduces_files(spark, tmp_path):
    path = tmp_path / "cow"
    _small_files_table(spark, path)
    before_files = _latest_files(path)
    assert len(before_files) == 10
    before = rows(pyhudi.read(spark, str(path)), CORE)
    last_write = HudiTable.load(str(path)).timeline().completed_writes()[-1].time
    options = {"hoodie.clustering.plan.strategy.sort.columns": "fare",
               "hoodie.clustering.plan.strategy.target.file.max.bytes": _target_bytes(path, 40)}

    instant = schedule_clustering(spark, str(path), options)
    plan = list(fastavro.reader(io.BytesIO(_requested(path, instant)), reader_schema=HUDI_REQUESTED_REPLACE))[0]
    assert plan["operationType"] == "CLUSTER"
    groups = plan["clusteringPlan"]["inputGroups"]
    assert sorted(s["fileId"] for g in groups for s in g["slices"]) == sorted(f.file_id for f in before_files)
    assert all(s["dataFilePath"].startswith("file:") and s["dataFilePath"].endswith(".parquet")
               for g in groups for s in g["slices"])
    assert plan["clusteringPlan"]["strategy"]["strategyParams"] == {
        "hoodie.clustering.plan.strategy.sort.columns": "fare"}
    target = int(options["hoodie.clustering.plan.strategy.target.file.max.bytes"])
    for group in groups:
        size = sum(f.size for f in before_files if f.file_id in {s["fileId"] for s in group["slices"]})
        assert group["numOutputFileGroups"] == math.ceil(size / target)
    # while the clustering is pending, readers see the old files; hudi-rs parses the timeline too
    assert rows(pyhudi.read(spark, str(path)), CORE) == before
    assert rows(hudi_rs_read(path), CORE) == before

    assert cluster(spark, str(path), "execute", None, options) == [instant]
    after_files = _latest_files(path)
    assert 2 <= len(after_files) < len(before_files)
    assert all(f.instant_time == instant for f in after_files)
    assert rows(pyhudi.read(spark, str(path)), CORE) == before       # commit times and seqnos preserved
    assert rows(hudi_rs_read(path), CORE) == before
    assert rows(pyhudi.read(spark, str(path), {"as.of.instant": last_write}), CORE) == before
    old_names = {r[0] for r in pyhudi.read(spark, str(path), {"as.of.instant": last_write})
                 .select("_hoodie_file_name").distinct().collect()}
    assert old_names == {f.name for f in before_files}
    assert rows(hudi_rs_read(path, as_of=last_write), CORE) == before

    # every new file names itself, and within a partition the files' fare ranges do not overlap
    for partition in ("nyc", "sf"):
        ranges = []
        for f in (f for f in after_files if f.path.startswith(partition + "/")):
            table = pq.read_table(path / f.path)
            assert set(table["_hoodie_file_name"].to_pylist()) == {f.name}
            fares = table["fare"].to_pylist()
            ranges.append((min(fares), max(fares)))
        ranges.sort()
        assert len(ranges) >= 2
        assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:])), ranges

    timeline = HudiTable.load(str(path)).timeline()
    meta = timeline.read_metadata(timeline.find(instant))
    assert meta["operationType"] == "CLUSTER"
    assert {p: sorted(ids) for p, ids in meta["partitionToReplaceFileIds"].items()} == {
        p: sorted(f.file_id for f in before_files if f.path.startswith(p + "/")) for p in ("nyc", "sf")}
    assert sum(s["numWrites"] for g in meta["partitionToWriteStats"].values() for s in g) == 200
    assert not (path / ".hoodie" / ".temp" / instant).exists()

    # a later upsert updates the clustered files; a second clustering has only single-group partitions left
    opts = _options("cow")
    pyhudi.write(_batch(spark, 0, 10, ts=2), str(path), opts)
    assert pyhudi.read(spark, str(path)).filter("ts = 2").count() == 10
    assert rows(hudi_rs_read(path), CORE) == rows(pyhudi.read(spark, str(path)), CORE)


def test_mor_clustering_merges_log_files(spark, tmp_path):
    path = tmp_path / "mor"
    opts = _small_files_table(spark, path, "MERGE_ON_READ", batches=4, per_batch=30)
    pyhudi.write(_batch(spark, 0, 50, ts=5), str(path), opts)                      # updates: log files
    pyhudi.write(_batch(spark, 100, 5, ts=11), str(path), {**opts, "hoodie.datasource.write.operation": "delete"})
    view = HudiTable.load(str(path)).view()
    assert any(s.log_files for s in view.latest_slices())
    before = rows(pyhudi.read(spark, str(path)), CORE)
    assert len(before) == 115

    done = cluster(spark, str(path), options={"hoodie.clustering.plan.strategy.sort.columns": "fare"})
    assert len(done) == 1
    slices = HudiTable.load(str(path)).view().latest_slices()
    assert len(slices) == 2 and all(not s.log_files and s.base_instant == done[0] for s in slices)
    assert rows(pyhudi.read(spark, str(path)), CORE) == before
    assert rows(hudi_rs_read(path), CORE) == before
    # merge-on-read keeps working on the clustered file groups
    pyhudi.write(_batch(spark, 1, 3, ts=9), str(path), opts)
    assert rows(hudi_rs_read(path), CORE) == rows(pyhudi.read(spark, str(path)), CORE)


def test_failed_execution_is_rolled_back_by_the_next_run(spark, tmp_path, monkeypatch):
    from pyhudi.commit.instant_commit import InstantCommit
    from pyhudi.services.clustering import run as action
    path = tmp_path / "crash"
    opts = _small_files_table(spark, path, batches=3, per_batch=20)
    before = rows(pyhudi.read(spark, str(path)), CORE)
    instant = schedule_clustering(spark, str(path))

    def die(point):
        if point == "clustering.before_commit":
            raise KeyboardInterrupt("killed")
    monkeypatch.setattr(action, "crash_point", die)
    monkeypatch.setattr(InstantCommit, "abort", lambda self: True)   # a crash undoes nothing
    with pytest.raises(KeyboardInterrupt):
        cluster(spark, str(path), "execute")
    monkeypatch.undo()
    hoodie = path / ".hoodie"
    assert (hoodie / f"{instant}.replacecommit.inflight").exists()
    leftovers = [p for p in path.rglob(f"*_{instant}.parquet")]
    assert leftovers                                                   # the dead run's files are still there
    assert rows(pyhudi.read(spark, str(path)), CORE) == before         # and invisible
    assert rows(hudi_rs_read(path), CORE) == before
    # a write meanwhile (new file groups) does not roll the clustering back: it is a table service, not a failed
    # write; its new rows stay
    pyhudi.write(_batch(spark, 1000, 4), str(path), {**opts, "hoodie.datasource.write.operation": "insert"})
    assert not HudiTable.load(str(path)).timeline().find(instant).is_completed
    before = rows(pyhudi.read(spark, str(path)), CORE)
    assert len(before) == 64

    assert cluster(spark, str(path), "execute") == [instant]
    timeline = HudiTable.load(str(path)).timeline()
    meta = timeline.read_metadata(timeline.find(instant))
    written = {s["path"] for g in meta["partitionToWriteStats"].values() for s in g}
    on_disk = {str(p.relative_to(path)) for p in path.rglob(f"*_{instant}.parquet")}
    assert on_disk == written and not (set(map(str, (p.relative_to(path) for p in leftovers))) & written)
    assert rows(pyhudi.read(spark, str(path)), CORE) == before
    assert rows(hudi_rs_read(path), CORE) == before


def test_a_write_to_a_planned_file_group_aborts_the_clustering(spark, tmp_path):
    path = tmp_path / "conflict"
    opts = _small_files_table(spark, path, batches=2, per_batch=20)
    allow = {"hoodie.clustering.updates.strategy":
             "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"}
    instant = schedule_clustering(spark, str(path), allow)
    pyhudi.write(_batch(spark, 0, 4, ts=3), str(path), {**opts, **allow})   # updates two planned file groups
    expected = rows(pyhudi.read(spark, str(path)), CORE)
    with pytest.raises(WriteConflictError, match="changed after the clustering was planned"):
        cluster(spark, str(path), "execute", None, allow)
    hoodie = path / ".hoodie"
    assert not any(hoodie.glob(f"{instant}.replacecommit*"))          # plan and files gone: schedule again
    assert not list(path.rglob(f"*_{instant}.parquet"))
    assert rows(pyhudi.read(spark, str(path)), CORE) == expected
    assert len(cluster(spark, str(path))) == 1
    assert rows(pyhudi.read(spark, str(path)), CORE) == expected


def test_update_strategy_rejects_updates_to_pending_file_groups():
    from pyhudi.services.clustering.plan import ALLOW_UPDATES, check_update_allowed

    pending = {("sf", "f1"): "20240101000000000"}
    check_update_allowed(pending, "sf", "f2", "t")                     # not under clustering
    check_update_allowed(pending, "sf", "f1", "t", ALLOW_UPDATES)
    with pytest.raises(WriteConflictError, match="Not allowed to update the clustering file group sf/f1"):
        check_update_allowed(pending, "sf", "f1", "t")


def test_plan_strategy_options(spark, tmp_path):
    from pyhudi.services.clustering.strategy import ClusteringOptions, generate_plan

    path = tmp_path / "opts"
    _small_files_table(spark, path, batches=4, per_batch=20)
    table = HudiTable.load(str(path))
    timeline = table.timeline()
    sizes = sorted(f.size for f in table.view().latest_base_files())

    def plan(**options):
        return generate_plan(table, timeline, ClusteringOptions.of(options))

    assert sorted(plan().partitions) == ["nyc", "sf"] and len(plan().groups) == 2
    assert plan(**{"hoodie.clustering.plan.strategy.partition.selected": "sf"}).partitions == ["sf"]
    assert plan(**{"hoodie.clustering.plan.strategy.partition.regex.pattern": "n.*"}).partitions == ["nyc"]
    recent = plan(**{"hoodie.clustering.plan.partition.filter.mode": "RECENT_DAYS",
                     "hoodie.clustering.plan.strategy.daybased.lookback.partitions": "1"})
    assert recent.partitions == ["sf"]
    assert plan(**{"hoodie.clustering.plan.strategy.small.file.limit": str(sizes[0])}) is None
    # groups of at most max.bytes.per.group (two files each), at most max.num.groups
    split = plan(**{"hoodie.clustering.plan.strategy.max.bytes.per.group": str(sizes[-1] * 2)})
    assert len(split.groups) == 4 and all(len(g.slices) == 2 for g in split.groups)
    assert len(plan(**{"hoodie.clustering.plan.strategy.max.bytes.per.group": str(sizes[-1] * 2),
                       "hoodie.clustering.plan.strategy.max.num.groups": "3"}).groups) == 3
    with pytest.raises(ConfigError, match="Order column not exist: nope"):
        schedule_clustering(spark, str(path), {"hoodie.clustering.plan.strategy.sort.columns": "nope"})
    with pytest.raises(ConfigError, match="z-order is not supported"):
        schedule_clustering(spark, str(path), {"hoodie.layout.optimize.strategy": "z-order"})
    assert not any((path / ".hoodie").glob("*.replacecommit*"))


def test_inline_clustering_after_max_commits(spark, tmp_path):
    path = tmp_path / "inline"
    inline = {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "3"}
    opts = _small_files_table(spark, path, batches=2, per_batch=10)
    assert run_inline_clustering_if_due(spark, str(path), {**opts, **inline}) is None    # 2 commits < 3
    pyhudi.write(_batch(spark, 500, 10), str(path), {**opts, "hoodie.datasource.write.operation": "insert"})
    done = run_inline_clustering_if_due(spark, str(path), {**opts, **inline})
    assert done is not None and HudiTable.load(str(path)).timeline().find(done).is_completed
    assert len(_latest_files(path)) == 2
    assert run_inline_clustering_if_due(spark, str(path), {**opts, **inline}) is None    # 0 commits since
    scheduled = run_inline_clustering_if_due(spark, str(path), {
        **opts, "hoodie.clustering.schedule.inline": "true", "hoodie.clustering.inline.max.commits": "0"})
    assert scheduled is not None and not HudiTable.load(str(path)).timeline().find(scheduled).is_completed


@pytest.mark.parametrize("version", ["6", "9"])
def test_sql_run_and_show_clustering(spark, version):
    """On Hudi 1.x tables a clustering plan is a `clustering` instant until it completes as a replacecommit."""
    t = f"clu_sql_v{version}"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"""CREATE TABLE {t} (id INT, fare DOUBLE, ts BIGINT, city STRING) USING hudi
        PARTITIONED BY (city) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts',
                                             hoodie.parquet.small.file.limit = '0',
                                             'hoodie.write.table.version' = '{version}')""")
    for i in range(3):
        pyhudi.sql(spark, f"INSERT INTO {t} VALUES ({i}, {10.0 - i}, 1, 'a'), ({i + 10}, {i}.5, 1, 'b')")
    from pyhudi.sqlext.query import Resolver
    assert HudiTable.load(Resolver(spark).entry_by_name(t).location).properties.version == version
    before = sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, fare, city FROM {t}").collect())
    out = pyhudi.sql(spark, f"CALL run_clustering(table => '{t}', op => 'schedule', predicate => \"city = 'a'\", "
                            "show_involved_partition => true)")
    assert out.columns == ["timestamp", "input_group_size", "state", "involved_partitions"]
    (scheduled,) = [tuple(r) for r in out.collect()]
    assert scheduled[1:] == (1, "REQUESTED", "city=a")
    shown = [tuple(r) for r in pyhudi.sql(spark, f"CALL show_clustering(table => '{t}')").collect()]
    assert shown == [(scheduled[0], 1, "REQUESTED", "*")]
    done = [tuple(r) for r in pyhudi.sql(spark, f"CALL run_clustering(table => '{t}', op => 'execute')").collect()]
    assert done == [(scheduled[0], 1, "COMPLETED", "*")]               # the pending plan ran
    again = [tuple(r) for r in pyhudi.sql(
        spark, f"CALL run_clustering(table => '{t}', order => 'fare', selected_partitions => 'city=b')").collect()]
    assert len(again) == 1 and again[0][2] == "COMPLETED"
    assert [r[2] for r in pyhudi.sql(spark, f"CALL show_clustering('{t}')").collect()] == ["COMPLETED"] * 2
    assert sorted(tuple(r) for r in pyhudi.sql(spark, f"SELECT id, fare, city FROM {t}").collect()) == before
    with pytest.raises(pyhudi.PyHudiError, match="Only partition predicates are allowed"):
        pyhudi.sql(spark, f"CALL run_clustering(table => '{t}', predicate => 'fare > 1')")
    pyhudi.sql(spark, f"DROP TABLE {t}")


def test_default_strategy_rejects_a_write_to_a_planned_file_group(spark, tmp_path):
    """Hudi's SparkRejectUpdateStrategy (the default): an upsert touching a file group under pending clustering
    fails before it commits and leaves the table as it was; a write of new keys still commits, and the
    clustering then runs."""
    path = tmp_path / "reject"
    opts = _small_files_table(spark, path, batches=2, per_batch=20)
    instant = schedule_clustering(spark, str(path), {})
    before = rows(pyhudi.read(spark, str(path)), CORE)
    completed = len(HudiTable.load(str(path)).timeline().completed_writes())
    with pytest.raises(WriteConflictError, match="Not allowed to update the clustering file group .* "
                                                 f"clustering {instant} is pending"):
        pyhudi.write(_batch(spark, 0, 4, ts=3), str(path), opts)
    assert rows(pyhudi.read(spark, str(path)), CORE) == before
    assert len(HudiTable.load(str(path)).timeline().completed_writes()) == completed
    pyhudi.write(_batch(spark, 1000, 4), str(path), {**opts, "hoodie.datasource.write.operation": "insert"})
    assert cluster(spark, str(path), "execute") == [instant]
    assert len(rows(pyhudi.read(spark, str(path)), CORE)) == len(before) + 4


def test_inline_clustering_is_a_post_commit_hook(spark, tmp_path):
    """hoodie.clustering.inline on a write: the clustering runs after the write's commit once
    inline.max.commits commits completed since the last clustering."""
    path = tmp_path / "hook"
    inline = {"hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "3"}
    opts = _small_files_table(spark, path, batches=2, per_batch=10)
    assert not any((path / ".hoodie").glob("*.replacecommit"))
    pyhudi.write(_batch(spark, 500, 10), str(path), {**opts, **inline, "hoodie.datasource.write.operation": "insert"})
    assert len(list((path / ".hoodie").glob("*.replacecommit"))) == 1
    assert len(_latest_files(path)) == 2
