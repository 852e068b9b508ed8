"""Tables of version 8 (Hudi 1.0) and 9 (Hudi 1.1) written by Java Hudi: pyhudi reads them as hudi-rs does, writes
into them in their format (hudi-rs then reads what pyhudi reads), and refuses the services it does not write in
that format yet before anything is written.

The fixtures: the v8/v9 tables of ../shared/fixtures/hudi-tables and of tests/fixtures/hudi-rs (apache/hudi-rs's
test data), COW and MOR, partitioned (hive style or not, simple, complex and timestamp key generators) or not,
with and without meta fields and a metadata table, with updates, deletes, compaction, clustering, insert overwrite
and a rollback. Each is read now and at every completed write (time travel), read-optimized, and incrementally
between consecutive writes, against hudi-rs 0.5.
"""

from __future__ import annotations

import os

import pytest

import pyhudi
from pyhudi import errors
from pyhudi.table import HudiTable
from support import (assert_metadata_table_agrees, assert_same_rows_as_hudi_rs, fixture_names, fixture_table,
                     hudi_rs_read, rows)

LANCE = [n for n in fixture_names("*_v[89]_*") if "lance" in n]
EMPTY = [n for n in fixture_names("*_v[89]_*") if n.endswith("_empty")]
TABLES = [n for n in fixture_names("*_v[89]_*") if n not in LANCE + EMPTY]
# CI reads a representative set (v8 and v9, COW and MOR, compaction, clustering, overwrite, rollback, no meta
# fields, timestamp keys); PYHUDI_LONG_TESTS=1 reads every table
CI_TABLES = {"qs_mor_avro_v8_trips_8i3u1d", "cow_v8_complexkeygen_hivestyle", "cow_v9_txns_simple_meta",
             "cow_v9_timebasedkeygen_epochmillis", "mor_avro_v9_txns_simple_meta", "mor_avro_v9_nonpartitioned_rollback",
             "mor_avro_v9_txns_simple_overwrite", "mor_avro_v9_txns_complex_nometa"}
LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"


def _tables(names, in_ci=CI_TABLES):
    return [pytest.param(n, id=n, marks=[] if LONG or n in in_ci else
                         [pytest.mark.skip(reason="every Hudi 1.x fixture: PYHUDI_LONG_TESTS=1")]) for n in names]


@pytest.mark.parametrize("name", _tables(TABLES))
def test_snapshot_and_time_travel_match_hudi_rs(spark, tmp_path_factory, name):
    path = fixture_table(name, tmp_path_factory)
    columns = assert_same_rows_as_hudi_rs(spark, path, min_columns=6)
    assert "_hoodie_commit_time" in columns or "nometa" in name or "no_metafields" in name
    # the Python data source (Spark SQL's `hudi` format) returns the same rows as pyhudi.read
    assert rows(spark.read.format("hudi").load(str(path)), columns) == rows(hudi_rs_read(path), columns)


@pytest.mark.parametrize("name", _tables([n for n in TABLES if "mor" in n]))
def test_mor_read_optimized_and_incremental_match_hudi_rs(spark, tmp_path_factory, name):
    path = fixture_table(name, tmp_path_factory)
    theirs = hudi_rs_read(path, read_optimized=True)
    ours = pyhudi.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"})
    columns = [c for c in theirs.column_names if c in ours.columns]
    assert rows(ours, columns) == rows(theirs, columns)
    if "_hoodie_commit_time" not in columns:
        return    # an incremental query needs the commit time meta column
    writes = [i.time for i in HudiTable.load(str(path)).timeline().completed_writes()]
    for begin, end in zip(writes, writes[1:]):
        ours = pyhudi.read(spark, path, {"hoodie.datasource.query.type": "incremental",
                                         "hoodie.datasource.read.begin.instanttime": begin,
                                         "hoodie.datasource.read.end.instanttime": end})
        assert rows(ours, columns) == rows(hudi_rs_read(path, start=begin, end=end), columns), (begin, end)


def test_log_files_belong_to_the_slice_open_when_their_delta_commit_completed(tmp_path_factory):
    """v8 names a log file by its delta commit; the delta commit after the compaction lands in the compacted slice
    (Hudi 1.x forms file slices by completion time)."""
    path = fixture_table("qs_mor_avro_v8_trips_8i3u1d", tmp_path_factory)
    view = HudiTable.load(str(path)).view()
    (sao_paulo,) = [s for s in view.latest_slices() if s.partition_path == "city=sao_paulo"]
    assert sao_paulo.base_instant == "20251220210129235"          # the compaction's base file
    assert [log.base_instant for log in sao_paulo.log_files] == ["20251220210130911"]
    assert view.timeline.completion_time("20251220210130911") == "20251220210131755"


@pytest.mark.parametrize("name", EMPTY)
def test_empty_tables_read_empty(spark, tmp_path_factory, name):
    path = fixture_table(name, tmp_path_factory)
    assert pyhudi.read(spark, path).count() == 0 == hudi_rs_read(path).num_rows


@pytest.mark.parametrize("name", LANCE)
def test_lance_base_files_are_refused_clearly(spark, tmp_path_factory, name):
    path = fixture_table(name, tmp_path_factory)
    with pytest.raises(errors.UnsupportedTableVersionError, match="hoodie.table.base.file.format=LANCE"):
        pyhudi.read(spark, path)


def _files(path):
    return sorted((str(p.relative_to(path)), p.stat().st_size) for p in path.rglob("*") if p.is_file())


def _write_options(path) -> dict:
    props = HudiTable.load(str(path)).properties
    options = {"hoodie.table.name": props.name, "hoodie.datasource.write.recordkey.field": ",".join(
        props.record_key_fields), "hoodie.datasource.write.partitionpath.field": ",".join(props.partition_fields)}
    if props.precombine_field:
        options["hoodie.datasource.write.precombine.field"] = props.precombine_field
    return options


def _data(spark, path):
    df = pyhudi.read(spark, path)
    return df.drop(*[c for c in df.columns if c.startswith("_hoodie_")])


def _same_as_hudi_rs(spark, path) -> None:
    """hudi-rs lists a v8/v9 table's files from its metadata table when one is named: a stale one shows here."""
    theirs = hudi_rs_read(path)
    ours = pyhudi.read(spark, path)
    columns = [c for c in theirs.column_names if c in ours.columns and not c.startswith("_hoodie_")]
    assert rows(ours, columns) == rows(theirs, columns)
    assert_metadata_table_agrees(path, (path / ".hoodie" / "metadata").exists())


# every Java table is written in the long profile; CI writes two
@pytest.mark.parametrize("name", _tables(TABLES, in_ci={"qs_mor_avro_v8_trips_8i3u1d", "cow_v9_txns_simple_meta"}))
def test_writes_and_services_on_hudi1_tables_stay_readable_by_hudi_rs(spark, tmp_path_factory, name):
    """Upsert (updates and a new key), delete, insert_overwrite, bulk_insert, compaction, clustering, clean and a
    rollback on copies of Java's v8/v9 tables, in their format (timeline layout 2, Avro commit metadata, a log file
    per delta commit): after each, hudi-rs reads the rows pyhudi reads, the table keeps its version, and the metadata
    table's files partition (kept, or built on a table without one) lists exactly the table's files (the other
    metadata partitions are dropped)."""
    from pyspark.sql import functions as F

    path = fixture_table(name, tmp_path_factory)
    props = HudiTable.load(str(path)).properties
    options = _write_options(path)
    data = _data(spark, path).orderBy(*props.record_key_fields).cache()
    key = props.record_key_fields[0]
    updates = data.limit(2)
    if props.precombine_field:
        updates = updates.withColumn(props.precombine_field, F.col(props.precombine_field) + 1000)
    key_type = dict(data.dtypes)[key]
    fresh = data.limit(1).withColumn(key, (F.col(key) + 1000000).cast(key_type) if key_type in ("int", "bigint")
                                     else F.concat(F.col(key), F.lit("_new")))
    pyhudi.write(updates.unionByName(fresh), path, options)
    assert_metadata_table_agrees(path, True)   # kept, or built (hoodie.metadata.enable: Hudi's default true)
    _same_as_hudi_rs(spark, path)
    before_delete = rows(pyhudi.read(spark, path), data.columns)
    pyhudi.write(data.limit(1), path, {**options, "hoodie.datasource.write.operation": "delete"})
    _same_as_hudi_rs(spark, path)
    table = pyhudi.Table(spark, str(path))
    latest = table.timeline.latest_completed_write()
    assert latest.completion_time and latest.completion_time > latest.time
    table.rollback(latest.time)
    assert rows(pyhudi.read(spark, path), data.columns) == before_delete
    _same_as_hudi_rs(spark, path)
    if props.is_mor:   # updates only: log files (the upsert above may have merged its insert into a base file)
        pyhudi.write(updates, path, options)
        assert table.maintenance.compact(options={"hoodie.compact.inline.max.delta.commits": "1"})
        _same_as_hudi_rs(spark, path)
    (clustering,) = table.maintenance.cluster()   # layout 2: `<t>.clustering.requested`, then a replacecommit
    assert (path / ".hoodie" / "timeline" / f"{clustering.time}.clustering.requested").exists()
    assert clustering.completion_time and (path / ".hoodie" / "timeline" / (
        f"{clustering.time}_{clustering.completion_time}.replacecommit")).exists()
    _same_as_hudi_rs(spark, path)
    pyhudi.write(data.limit(3), path, {**options, "hoodie.datasource.write.operation": "insert_overwrite"})
    _same_as_hudi_rs(spark, path)
    pyhudi.write(fresh, path, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
    _same_as_hudi_rs(spark, path)
    timeline = HudiTable.load(str(path)).timeline()
    assert all(i.completion_time for i in timeline.completed() if i.time > latest.time)
    writes = [i.time for i in timeline.completed_writes()]
    for begin, end in zip(writes[-3:], writes[-2:]):
        incremental = {"hoodie.datasource.query.type": "incremental",
                       "hoodie.datasource.read.begin.instanttime": begin, "hoodie.datasource.read.end.instanttime": end}
        if not props.populate_meta_fields:   # no commit times in the records: Hudi refuses these too
            with pytest.raises(errors.ConfigError, match="incremental queries are not supported"):
                pyhudi.read(spark, path, incremental)
            continue
        ours = pyhudi.read(spark, path, incremental)
        assert rows(ours, data.columns) == rows(hudi_rs_read(path, start=begin, end=end), data.columns)
    table.maintenance.clean({"hoodie.cleaner.commits.retained": "1"})
    _same_as_hudi_rs(spark, path)
    assert HudiTable.load(str(path)).properties.version == props.version
    data.unpersist()


@pytest.mark.parametrize("version,table_type,payload,mode", [
    ("8", "MERGE_ON_READ", "org.apache.hudi.common.model.DefaultHoodieRecordPayload", "EVENT_TIME_ORDERING"),
    ("9", "COPY_ON_WRITE", None, "COMMIT_TIME_ORDERING")])
def test_new_tables_at_version_8_and_9(spark, tmp_path, version, table_type, payload, mode):
    """hoodie.write.table.version creates a Hudi 1.x table: layout-2 timeline, the merge mode the payload stands
    for, version 9's ordering fields; later writes keep the version and hudi-rs reads what pyhudi reads."""
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": version}
    if payload:
        options["hoodie.datasource.write.payload.class"] = payload
    schema = "id int, v string, ts long, dt string"
    pyhudi.write(spark.createDataFrame([(1, "a", 1, "x"), (2, "b", 1, "y")], schema), path, options)
    props = HudiTable.load(str(path)).properties
    assert (props.version, props.timeline_layout_version, props.get("hoodie.record.merge.mode")) == \
        (version, "2", mode)
    assert (props.get("hoodie.table.ordering.fields"), props.get("hoodie.table.precombine.field")) == \
        (("ts", None) if version == "9" else (None, "ts"))
    unversioned = {k: v for k, v in options.items() if k != "hoodie.write.table.version"}
    pyhudi.write(spark.createDataFrame([(1, "a2", 0, "x"), (3, "c", 1, "y")], schema), path, unversioned)
    if table_type == "MERGE_ON_READ":
        assert pyhudi.Table(spark, str(path)).maintenance.compact(
            options={"hoodie.compact.inline.max.delta.commits": "1"})
    # EVENT_TIME_ORDERING keeps the stored record of a key whose update has a smaller ordering value
    expected = [(1, "a" if mode == "EVENT_TIME_ORDERING" else "a2"), (2, "b"), (3, "c")]
    assert rows(pyhudi.read(spark, path), ["id", "v"]) == expected
    assert rows(hudi_rs_read(path), ["id", "v"]) == expected
    assert HudiTable.load(str(path)).properties.version == version
    assert all(i.completion_time for i in HudiTable.load(str(path)).timeline().completed())
    before = _files(path)   # an existing table keeps its version: asking for a lower one is refused
    with pytest.raises(errors.ConfigError, match="does not downgrade"):
        pyhudi.write(spark.createDataFrame([(4, "d", 1, "x")], schema), path, {**unversioned,
                                                                               "hoodie.write.table.version": "6"})
    assert _files(path) == before


@pytest.mark.parametrize("version,table_type", [
    pytest.param("8", "MERGE_ON_READ", id="v8-mor"),
    pytest.param("9", "COPY_ON_WRITE", id="v9-cow", marks=[] if LONG else [
        pytest.mark.skip(reason="both table types: PYHUDI_LONG_TESTS=1")])])
def test_a_metadata_table_pyhudi_builds_lists_every_file(spark, tmp_path, version, table_type):
    """hoodie.metadata.enable=true on a Hudi 1.x table: pyhudi builds the files partition (an initialising delta
    commit with a base HFile), adds a metadata delta commit before each instant completes, compacts the files
    partition after ten of them, and undoes the one of a rolled-back write. After each step hudi-rs, which lists
    the table's files from the metadata table, reads what pyhudi reads, and the partition lists exactly the files
    in storage."""
    from pyhudi.commit.metadata_table import metadata_storage
    from pyhudi.timeline import COMMIT, Timeline

    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.table.type": table_type, "hoodie.write.table.version": version,
               "hoodie.metadata.enable": "true", "hoodie.parquet.small.file.limit": "0"}
    schema = "id int, v string, ts long, dt string"

    def write(values, operation="upsert", check=True):
        pyhudi.write(spark.createDataFrame(values, schema), path, {**options,
                                                                  "hoodie.datasource.write.operation": operation})
        if check:
            _same_as_hudi_rs(spark, path)

    write([(1, "a", 1, "x"), (2, "b", 1, "y")])
    assert (path / ".hoodie" / "metadata" / "files").is_dir()
    for n in range(2, 12):   # the files partition's eleventh delta commit compacts it first
        write([(n % 4, f"v{n}", n, "x" if n % 2 else "z")], check=n in (2, 11))
    mdt = metadata_storage(HudiTable.load(str(path)).storage)
    assert Timeline.load(mdt).completed([COMMIT]), "the files partition was never compacted"
    before_delete = rows(pyhudi.read(spark, path), ["id", "v", "dt"])
    write([(1, "gone", 99, "x")], "delete")
    table = pyhudi.Table(spark, str(path))
    table.rollback(table.timeline.latest_completed_write().time)   # the metadata delta commit goes with it
    _same_as_hudi_rs(spark, path)
    assert rows(pyhudi.read(spark, path), ["id", "v", "dt"]) == before_delete
    if table_type == "MERGE_ON_READ":
        assert table.maintenance.compact(options={"hoodie.compact.inline.max.delta.commits": "1"})
        _same_as_hudi_rs(spark, path)
    table.maintenance.cluster()
    _same_as_hudi_rs(spark, path)
    table.maintenance.clean({"hoodie.cleaner.commits.retained": "1"})
    _same_as_hudi_rs(spark, path)


def test_the_metadata_table_cleans_and_archives_itself(spark, tmp_path, monkeypatch):
    """The files partition is compacted every hoodie.metadata.compact.max.delta.commits delta commits, cleaned once
    max(20, 1.2 x hoodie.cleaner.commits.retained) commits are past a slice, and its timeline archived beyond the
    data table's hoodie.keep.max.commits + 1 commits into its own LSM history (as Java's metadata writer does); here
    the writer's options (and the floor of 20) are lowered so a few writes pass several of each, while the data
    table archives too (only what the metadata table compacted). The cleaned slices' files are gone, clean instants
    record them, and the latest slice still lists exactly the table's files, as hudi-rs reads them."""
    from pyhudi.commit.metadata_table import metadata_storage
    from pyhudi.commit.metadata_table import options as metadata_options
    from pyhudi.timeline import CLEAN, COMMIT, Timeline
    from pyhudi.timeline.lsm_history import read_history

    monkeypatch.setattr(metadata_options, "RETAINED_COMMITS", 3)    # Java's floor of 20: no option lowers it
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.write.table.version": "8",
               "hoodie.parquet.small.file.limit": "0", "hoodie.keep.min.commits": "2",
               "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1", "hoodie.compact.inline": "true",
               "hoodie.compact.inline.max.delta.commits": "2", "hoodie.metadata.compact.max.delta.commits": "4"}
    for n in range(16):
        pyhudi.write(spark.createDataFrame([(n % 3, f"v{n}", n, f"d{n % 2}")], "id int, v string, ts long, dt string"),
                     path, options)
    table = HudiTable.load(str(path))
    mdt = metadata_storage(table.storage)
    timeline = Timeline.load(mdt)
    history = read_history(mdt, timeline.layout.history_folder)
    assert history and read_history(table.storage, table.timeline().layout.history_folder)
    assert len(history) >= 10 and len(timeline.completed()) <= 15    # of about 40 metadata instants
    every = [(i.time, i.action) for i in timeline.completed()] + [(i.time, i.action) for i in history]
    cleans = [t for t, action in every if action == CLEAN]
    compactions = sorted(t for t, action in every if action == COMMIT)
    assert cleans and len(compactions) >= 3
    on_disk = {info.base_name for info in mdt.list_files("files")}
    assert not any(compactions[0] in name for name in on_disk)          # the first compaction's slice is gone
    assert "files-0000-0_0-0-0_00000000000000000.hfile" not in on_disk   # and the initial one
    _same_as_hudi_rs(spark, path)


def test_the_metadata_table_follows_the_writers_cleaner_policy_and_compaction_setting(spark, tmp_path):
    """Java derives its metadata writer's config from the data writer's (HoodieMetadataWriteUtils): compaction every
    hoodie.metadata.compact.max.delta.commits delta commits, and the data table's cleaner policy, here
    KEEP_LATEST_FILE_VERSIONS with ceil(1.2 x 1) = 2 versions, so the files partition keeps its two newest file
    slices (and the one a compaction then adds). hudi-rs lists the table's files from that metadata table."""
    from pyhudi.commit.metadata_table import metadata_storage
    from pyhudi.commit.metadata_table.clean import file_slices
    from pyhudi.timeline import CLEAN, COMMIT, State, Timeline
    from pyhudi.timeline.clean_plan import CleanerPlan

    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.write.table.version": "8", "hoodie.parquet.small.file.limit": "0",
               "hoodie.metadata.compact.max.delta.commits": "3", "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
               "hoodie.cleaner.fileversions.retained": "1"}
    for n in range(12):
        pyhudi.write(spark.createDataFrame([(n % 4, f"v{n}", n)], "id int, v string, ts long"), path, options)
    table = HudiTable.load(str(path))
    mdt = metadata_storage(table.storage)
    timeline = Timeline.load(mdt)
    assert len(timeline.completed([COMMIT])) >= 3             # every 3 delta commits (Hudi's default: 10)
    cleans = timeline.completed([CLEAN])
    assert cleans
    plan = CleanerPlan.from_bytes(mdt.read_bytes(timeline.path_of(cleans[-1].with_state(State.REQUESTED))), "plan")
    assert plan.policy == "KEEP_LATEST_FILE_VERSIONS" and plan.earliest_instant_to_retain is None
    slices = file_slices(mdt, timeline, table.timeline())
    assert 2 <= len(slices) <= 3, sorted(slices)
    assert rows(pyhudi.read(spark, path), ["id", "v"]) == [(0, "v8"), (1, "v9"), (2, "v10"), (3, "v11")]
    _same_as_hudi_rs(spark, path)
    assert_metadata_table_agrees(path, kept=True)


def test_a_writer_that_began_after_the_last_metadata_delta_commit_does_not_hold_back_its_compaction(spark, tmp_path):
    """Java compacts the metadata table unless a data instant at or before its latest delta commit is pending
    (HoodieBackedTableMetadataWriter.validateTimelineBeforeSchedulingCompaction): a concurrent writer that began
    since, its metadata delta commit still to come, does not hold the compaction back, and its delta commit, which
    completes after the compaction, belongs to the new slice (slices by completion time)."""
    from pyhudi.commit.instant_commit import InstantCommit
    from pyhudi.commit.metadata import CommitMetadata
    from pyhudi.commit.metadata_table import metadata_storage
    from pyhudi.commit.metadata_table.files_slice import latest_slice
    from pyhudi.timeline import COMMIT, DELTA_COMMIT, Timeline

    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.write.table.version": "8", "hoodie.parquet.small.file.limit": "0",
               "hoodie.metadata.compact.max.delta.commits": "3",
               "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
               "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
               "hoodie.client.heartbeat.interval_in_ms": "60000"}

    def write(n):
        pyhudi.write(spark.createDataFrame([(n, f"v{n}", n)], "id int, v string, ts long"), path, options)

    write(1)
    write(2)
    table = HudiTable.load(str(path))
    mdt = metadata_storage(table.storage)
    assert not Timeline.load(mdt).completed([COMMIT])
    concurrent = InstantCommit.begin(table.storage, table.timeline().new_instant_time(), DELTA_COMMIT)
    concurrent.start()
    (path / ".hoodie" / ".heartbeat").mkdir(exist_ok=True)
    (path / ".hoodie" / ".heartbeat" / concurrent.instant_time).write_text("1")    # a live writer
    write(3)                   # three delta commits (the initialising one and two writes): a compaction is due
    mdt_timeline = Timeline.load(mdt)
    (compaction,) = mdt_timeline.completed([COMMIT])
    assert compaction.time > concurrent.instant_time
    concurrent.complete(CommitMetadata(operation_type="UPSERT"))    # its metadata delta commit comes now
    files_slice = latest_slice(mdt, Timeline.load(mdt), HudiTable.load(str(path)).timeline())
    assert files_slice.base_instant == compaction.time
    assert concurrent.instant_time in [instant for _, instant in files_slice.log_files]
    write(4)
    assert rows(pyhudi.read(spark, path), ["id", "v"]) == [(n, f"v{n}") for n in range(1, 5)]
    _same_as_hudi_rs(spark, path)


@pytest.mark.parametrize("version", ["8", pytest.param("9", marks=[] if LONG else [
    pytest.mark.skip(reason="both versions: PYHUDI_LONG_TESTS=1")])])
def test_clean_keeps_the_slice_a_hudi1_log_file_belongs_to(spark, tmp_path, version):
    """Hudi 1.x names a log file by the delta commit that wrote it, not by its slice's base instant: the cleaner
    must slice logs by completion time as readers do. Grouping them by the instant in their names once made a clean
    with one retained commit delete the base file of the latest slice, so keys no later log updated vanished."""
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.write.table.version": version, "hoodie.parquet.small.file.limit": "0"}
    schema = "id int, v string, ts long"

    def write(values):
        return pyhudi.write(spark.createDataFrame(values, schema), path, options).instant_time

    write([(1, "a", 1), (2, "b", 1), (3, "c", 1)])
    write([(1, "a2", 2)])
    table = pyhudi.Table(spark, str(path))
    assert table.maintenance.compact(options={"hoodie.compact.inline.max.delta.commits": "1"})
    write([(1, "a3", 3)])
    last = write([(2, "b3", 4)])
    result = table.maintenance.clean({"hoodie.cleaner.commits.retained": "1"})
    expected = [(1, "a3"), (2, "b3"), (3, "c")]
    assert rows(pyhudi.read(spark, path), ["id", "v"]) == expected
    assert rows(pyhudi.read(spark, path, {"as.of.instant": last}), ["id", "v"]) == expected
    _same_as_hudi_rs(spark, path)
    deleted = [name for names in result.deleted_files.values() for name in names]
    assert len(deleted) == 2 and sum(".log." in name for name in deleted) == 1   # the first slice, whole


def test_delta_commits_on_hudi1_tables_write_their_own_log_files(spark, tmp_path_factory):
    """Hudi 1.x never appends to a log file: each delta commit writes new ones named by its instant time."""
    path = fixture_table("mor_avro_v9_txns_simple_meta", tmp_path_factory)
    options = _write_options(path)
    before = {p.name for p in path.rglob(".*.log.*")}
    data = _data(spark, path).limit(3)
    first = pyhudi.write(data, path, options).instant_time
    second = pyhudi.write(data, path, options).instant_time
    new = {p.name for p in path.rglob(".*.log.*")} - before
    assert new and all(name.split("_")[1].split(".")[0] in (first, second) for name in new)
    assert all(".log.1_" in name for name in new)
    assert {name.split("_")[1].split(".")[0] for name in new} == {first, second}
    _same_as_hudi_rs(spark, path)


def test_a_failed_write_on_a_hudi1_table_is_rolled_back_by_the_next_write(spark, tmp_path_factory):
    """A writer that died left its requested and inflight instants and a data file: the next write rolls it back in
    layout 2 (a completed rollback instant with its completion time), and hudi-rs reads what pyhudi reads."""
    import shutil

    from pyhudi.timeline import DELTA_COMMIT, ROLLBACK, create_requested, transition_to_inflight

    path = fixture_table("mor_avro_v9_txns_simple_meta", tmp_path_factory)
    table = HudiTable.load(str(path))
    failed = table.timeline().new_instant_time()
    transition_to_inflight(table.storage, create_requested(table.storage, failed, DELTA_COMMIT))
    base = next(path.glob("region=us/*.parquet"))
    stray = base.parent / f"0bad0000-0000-0000-0000-000000000000-0_0-1-1_{failed}.parquet"
    shutil.copy(base, stray)
    pyhudi.write(_data(spark, path).limit(2), path, _write_options(path))
    timeline = HudiTable.load(str(path)).timeline()
    assert not stray.exists() and not timeline.pending()
    (rolled_back,) = timeline.completed([ROLLBACK])
    assert rolled_back.completion_time and (path / timeline.path_of(rolled_back)).exists()
    _same_as_hudi_rs(spark, path)


@pytest.mark.parametrize("name", _tables(["qs_mor_avro_v8_trips_8i3u1d", "cow_v9_txns_simple_meta"],
                                          in_ci={"cow_v9_txns_simple_meta"}))
def test_savepoint_and_restore_on_hudi1_tables(spark, tmp_path_factory, name):
    """A savepoint on a Java v8/v9 table (layout 2: `<t>_<completion>.savepoint`), two writes after it, then a
    restore to it: the rows of the savepoint, in hudi-rs too (which lists files from the metadata table, whose
    delta commits of the restored writes went with them), and the clean keeps the savepoint's files."""
    path = fixture_table(name, tmp_path_factory)
    table = pyhudi.Table(spark, str(path))
    options = _write_options(path)
    pinned = table.timeline.latest_completed_write().time
    before = rows(pyhudi.read(spark, path), _data(spark, path).columns)
    assert table.savepoints.create(pinned)
    assert any(p.name.startswith(f"{pinned}_") and p.name.endswith(".savepoint")
               for p in (path / ".hoodie" / "timeline").iterdir())
    data = _data(spark, path)
    pyhudi.write(data.limit(2), path, options)
    pyhudi.write(data.limit(1), path, {**options, "hoodie.datasource.write.operation": "delete"})
    _same_as_hudi_rs(spark, path)
    table.maintenance.clean({"hoodie.cleaner.commits.retained": "1"})
    table.savepoints.restore(pinned)
    assert rows(pyhudi.read(spark, path), _data(spark, path).columns) == before
    _same_as_hudi_rs(spark, path)
    table.savepoints.delete(pinned)
    assert not table.savepoints.list()


def test_truncate_starts_a_hudi1_table_over_in_its_version(spark, tmp_path_factory):
    """TRUNCATE TABLE on a Java v9 table with a metadata table: no instant and no data file is left, the table keeps
    version 9 and its layout, and the next write starts a new history (with a rebuilt files partition) that hudi-rs
    reads as pyhudi does."""
    from pyhudi.client.truncate import truncate_table

    path = fixture_table("cow_v9_txns_simple_meta", tmp_path_factory)
    data = _data(spark, path).limit(3).cache()
    data.count()
    truncate_table(str(path))
    table = HudiTable.load(str(path))
    assert (table.properties.version, table.properties.timeline_layout_version) == ("9", "2")
    assert not table.timeline().instants and not list(path.rglob("*.parquet"))
    assert pyhudi.read(spark, path).count() == 0
    pyhudi.write(data, path, _write_options(path))
    assert rows(pyhudi.read(spark, path), data.columns) == rows(data, data.columns)
    _same_as_hudi_rs(spark, path)
    data.unpersist()


@pytest.mark.parametrize("name", _tables(["cow_v8_nonpartitioned", "mor_avro_v9_txns_simple_meta"],
                                          in_ci={"mor_avro_v9_txns_simple_meta"}))
def test_archive_moves_old_instants_of_a_hudi1_table_into_the_lsm_history(spark, tmp_path_factory, name):
    """Archiving a Java-written Hudi 1.x table writes its old instants into the LSM timeline history (Java's
    format, timeline/lsm_history.py) with the bytes of their instant files, then removes them from the active
    timeline; only instants before the metadata table's last compaction go, as Java's archiver keeps them. The
    table reads the same in pyhudi and in hudi-rs (which lists its files from the metadata table), also after more
    writes, and completion times of archived delta commits come from the history."""
    from pyhudi.timeline.lsm_history import read_history

    path = fixture_table(name, tmp_path_factory)
    # a metadata-table compaction within a few writes
    options = {**_write_options(path), "hoodie.metadata.compact.max.delta.commits": "2"}
    data = _data(spark, path).limit(2).cache()
    for _ in range(4):
        pyhudi.write(data, path, options)
    table = pyhudi.Table(spark, str(path))
    timeline = HudiTable.load(str(path)).timeline()
    instant_bytes = {i.time: (path / timeline.path_of(i)).read_bytes() for i in timeline.completed()}
    completions = {i.time: i.completion_time for i in timeline.completed()}
    expected = rows(pyhudi.read(spark, path), data.columns)
    archived = table.maintenance.archive({"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                          "hoodie.cleaner.commits.retained": "1"})
    assert archived
    after = HudiTable.load(str(path)).timeline()
    assert not {i.time for i in archived} & {i.time for i in after.instants}
    history = {i.time: i for i in read_history(HudiTable.load(str(path)).storage, after.layout.history_folder)}
    for instant in archived:
        entry = history[instant.time]
        assert (entry.action, entry.metadata or b"") == (instant.action, instant_bytes[instant.time])
        assert entry.completion_time == (completions[instant.time] or instant.time)
        assert after.completion_time(instant.time) == entry.completion_time or instant.action not in (
            "commit", "deltacommit", "replacecommit")
    assert rows(pyhudi.read(spark, path), data.columns) == expected
    _same_as_hudi_rs(spark, path)
    pyhudi.write(data, path, options)
    _same_as_hudi_rs(spark, path)
    data.unpersist()


def test_a_cdc_query_on_a_java_table_without_change_data_names_the_property(spark, tmp_path_factory):
    """CDC queries on Hudi 1.x tables are answered (tests/component/test_cdc.py writes them at versions 8 and 9);
    Java's fixtures were created without hoodie.table.cdc.enabled, so they have no change data to read."""
    path = fixture_table("mor_avro_v9_txns_simple_meta", tmp_path_factory)
    with pytest.raises(errors.ConfigError, match="hoodie.table.cdc.enabled"):
        pyhudi.read(spark, path, {"hoodie.datasource.query.type": "incremental",
                                  "hoodie.datasource.query.incremental.format": "cdc",
                                  "hoodie.datasource.read.begin.instanttime": "000"})


def test_incremental_reads_reaching_the_lsm_history_read_its_commits(spark, tmp_path_factory):
    """Java 1.x archives old instants into the LSM timeline history (.hoodie/timeline/history), and its incremental
    queries read the archived commits' metadata there (IncrementalQueryAnalyzer): a range that starts before the
    active timeline gives the rows it gave before the archival, which are hudi-rs's rows too."""
    path = fixture_table("mor_avro_v9_txns_simple_meta", tmp_path_factory)
    options = {**_write_options(path), "hoodie.metadata.compact.max.delta.commits": "2"}
    data = _data(spark, path).limit(2).cache()
    for _ in range(4):
        pyhudi.write(data, path, options)
    writes = HudiTable.load(str(path)).timeline().completed_writes()
    begin, end = writes[0].time, writes[-1].time
    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin,
                   "hoodie.datasource.read.end.instanttime": end}
    columns = data.columns
    before = rows(pyhudi.read(spark, path, incremental), columns)
    assert before and before == rows(hudi_rs_read(path, start=begin, end=end), columns)
    archived = pyhudi.Table(spark, str(path)).maintenance.archive(
        {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1"})
    assert {i.time for i in archived} & {w.time for w in writes[1:]}      # the range reaches into the history
    assert HudiTable.load(str(path)).timeline().completed_writes()[0].time > writes[1].time
    assert rows(pyhudi.read(spark, path, incremental), columns) == before
    data.unpersist()


def test_incremental_reads_over_a_compaction_that_overlaps_a_delta_commit(spark, tmp_path_factory):
    """A compaction planned before a delta commit and completed after it overlaps it in time (as an async
    compaction beside ingestion always does). Hudi 1.x's incremental query takes the commits that completed in
    range and keeps the rows whose commit time is one of theirs; pyhudi used to refuse such ranges."""
    path = fixture_table("qs_mor_avro_v8_trips_8i3u1d", tmp_path_factory)
    options = {**_write_options(path), "hoodie.compact.inline.max.delta.commits": "1"}
    data = _data(spark, path).limit(3).cache()
    pyhudi.write(data, path, options)
    compaction = pyhudi.compact(spark, str(path), "schedule", options=options)[0].time
    upsert = pyhudi.write(data.limit(2), path, options).instant_time
    pyhudi.compact(spark, str(path), "execute", compaction, options)
    timeline = HudiTable.load(str(path)).timeline()
    done = {i.time: i.completion_time for i in timeline.completed_writes()}
    assert compaction < upsert and done[upsert] < done[compaction]          # the two overlap
    before = max(c for t, c in done.items() if t < compaction)
    columns = data.columns

    def incremental(begin, end):
        return pyhudi.read(spark, path, {"hoodie.datasource.query.type": "incremental",
                                         "hoodie.datasource.read.begin.instanttime": begin,
                                         "hoodie.datasource.read.end.instanttime": end})

    upserted = incremental(before, done[upsert])
    assert {r["_hoodie_commit_time"] for r in upserted.collect()} == {upsert} and upserted.count() == 2
    assert rows(upserted, columns) == rows(hudi_rs_read(path, start=before, end=done[upsert]), columns)
    assert incremental(done[upsert], done[compaction]).count() == 0        # a compaction changes no record
    assert rows(incremental(before, done[compaction]), columns) == rows(upserted, columns)
    _same_as_hudi_rs(spark, path)
    data.unpersist()


def test_sql_reads_and_changes_a_hudi1_table(spark, tmp_path_factory):
    path = fixture_table("qs_mor_avro_v8_trips_8i3u1d", tmp_path_factory)
    pyhudi.sql(spark, f"CREATE TABLE hudi1_trips USING hudi LOCATION '{path}'")
    try:
        columns = ["uuid", "rider", "driver", "fare", "city", "ts"]
        assert rows(pyhudi.sql(spark, "SELECT * FROM hudi1_trips"), columns) == rows(hudi_rs_read(path), columns)
        as_of = "20251220210123755"
        assert rows(pyhudi.sql(spark, f"SELECT * FROM hudi1_trips TIMESTAMP AS OF '{as_of}'"), columns) == \
            rows(hudi_rs_read(path, as_of=as_of), columns)
        commits = pyhudi.sql(spark, "CALL show_commits(table => 'hudi1_trips')").collect()
        assert [r.commit_time for r in commits] == \
            sorted((i.time for i in HudiTable.load(str(path)).timeline().completed_writes()), reverse=True)
        for statement in ("UPDATE hudi1_trips SET fare = fare + 1, ts = ts + 1 WHERE city = 'chennai'",
                          "DELETE FROM hudi1_trips WHERE city = 'san_francisco'",
                          "MERGE INTO hudi1_trips t USING (SELECT * FROM hudi1_trips WHERE city = 'chennai') s "
                          "ON t.uuid = s.uuid WHEN MATCHED THEN UPDATE SET fare = s.fare * 2, ts = s.ts + 1",
                          "CALL run_compaction(op => 'run', table => 'hudi1_trips')"):
            pyhudi.sql(spark, statement)
            assert rows(pyhudi.sql(spark, "SELECT * FROM hudi1_trips"), columns) == rows(hudi_rs_read(path), columns)
        assert HudiTable.load(str(path)).properties.version == "8"
    finally:
        pyhudi.sql(spark, "DROP TABLE IF EXISTS hudi1_trips")
