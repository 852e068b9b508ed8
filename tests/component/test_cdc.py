"""Hudi CDC queries (hoodie.table.cdc.enabled): random upsert/delete sequences on copy-on-write and
merge-on-read tables; the expected change rows are computed independently by plain Spark, diffing pyhudi
snapshot reads of consecutive instants (before = the row as of the previous instant, after = as of the instant,
op from presence). Also insert_overwrite, the SQL table function, refusals, and that the table's other reads
are unchanged (hudi-rs agrees)."""

from __future__ import annotations

import json
import os
import random

import pytest
from pyspark.sql import functions as F

import pyhudi
from pyhudi.errors import PyHudiError
from pyhudi.table import HudiTable
from support import hudi_rs_read, rows

SCHEMA = "id long, name string, price double, ts long, region string"
KEY = "_hoodie_record_key"
CDC_READ = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.query.incremental.format": "cdc"}


def _options(name, table_type="COPY_ON_WRITE", **extra):
    options = {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.datasource.write.partitionpath.field": "region",
               "hoodie.datasource.write.table.type": table_type, "hoodie.table.cdc.enabled": "true"}
    options.update(extra)
    return options


def _cdc_rows(df) -> list[tuple]:
    """(op, ts_ms, key, before, after) with the JSON images parsed."""
    out = []
    for r in df.collect():
        before = json.loads(r["before"]) if r["before"] is not None else None
        after = json.loads(r["after"]) if r["after"] is not None else None
        image = after or before
        key = image[KEY] if KEY in image else str(image["id"])   # a -cdc log image has no meta fields
        out.append((r["op"], r["ts_ms"], key, _norm(before), _norm(after)))
    return sorted(out, key=repr)


def _assert_matches(got, expected) -> int:
    """Same changes; an image read from a -cdc log (Hudi's AS_IS case) holds the record without its meta
    fields, so it is compared with the expected image without them. Returns how many rows came from logs."""
    order = lambda r: (r[1], r[2], r[0])   # noqa: E731  (instant, key, op): unique per change
    got, expected = sorted(got, key=order), sorted(expected, key=order)
    assert [order(r) for r in got] == [order(r) for r in expected]
    from_logs = 0
    for (op, ts, key, before, after), (_, _, _, want_before, want_after) in zip(got, expected, strict=True):
        logged = [image is not None and "_hoodie_commit_time" not in dict(image) for image in (before, after)]
        from_logs += any(logged)
        want_before = _meta_free(want_before) if logged[0] else want_before
        want_after = _meta_free(want_after) if logged[1] else want_after
        assert (before, after) == (want_before, want_after), (op, ts, key)
    return from_logs


def _norm(image):
    return None if image is None else tuple(sorted((k, v) for k, v in image.items()))


def _expected(spark, path, instants) -> list[tuple]:
    """Plain Spark: full outer join of consecutive snapshots on the record key."""
    out = []
    previous = None
    for instant in instants:
        after = pyhudi.read(spark, path, {"as.of.instant": instant})
        cols = after.columns
        if previous is None:
            before = spark.createDataFrame([], after.schema)
        else:
            before = pyhudi.read(spark, path, {"as.of.instant": previous})
        b = before.select(F.col(KEY).alias("k"), F.struct(*cols).alias("b"))
        a = after.select(F.col(KEY).alias("k"), F.struct(*cols).alias("a"))
        joined = b.join(a, "k", "full_outer").where(
            F.col("b").isNull() | F.col("a").isNull() | (F.col("a._hoodie_commit_time") == F.lit(instant)))
        for r in joined.collect():
            b_row = r["b"].asDict() if r["b"] is not None else None
            a_row = r["a"].asDict() if r["a"] is not None else None
            op = "i" if b_row is None else "d" if a_row is None else "u"
            out.append((op, instant, r["k"], _norm(b_row), _norm(a_row)))
        previous = instant
    return sorted(out, key=repr)


def _random_history(spark, path, options, seed, commits=5):
    """Random upserts and deletes. On merge-on-read with hoodie.parquet.small.file.limit=0 (updates go to log
    files: no small file is rewritten), a compaction planned after the second commit runs after the fourth, so the
    writes in between go to the slice it opened (Hudi 1.x: by their completion time)."""
    rng = random.Random(seed)
    alive: dict[int, str] = {}
    next_id = 0
    compaction = None
    for step in range(commits):
        if options.get("hoodie.parquet.small.file.limit") == "0":
            if step == 2:
                compaction = pyhudi.compact(spark, str(path), "schedule", options={
                    **options, "hoodie.compact.inline.max.delta.commits": "1"})
                assert compaction, "the second commit's log files give the compaction something to plan"
            elif step == 4:
                assert pyhudi.compact(spark, str(path), "execute", compaction[0].time, options)
        if alive and step % 3 == 2:
            gone = rng.sample(sorted(alive), k=max(1, len(alive) // 4))
            df = spark.createDataFrame([(i, "x", 0.0, step, alive[i]) for i in gone], SCHEMA)
            pyhudi.write(df, path, {**options, "hoodie.datasource.write.operation": "delete"})
            for i in gone:
                alive.pop(i)
            continue
        batch = []
        for i in rng.sample(sorted(alive), k=min(len(alive), rng.randint(1, 6))):
            batch.append((i, f"u{step}", rng.random(), step + 1, alive[i]))
        for _ in range(rng.randint(2, 6)):
            alive[next_id] = rng.choice(["us", "eu"])
            batch.append((next_id, f"n{step}", rng.random(), step + 1, alive[next_id]))
            next_id += 1
        pyhudi.write(spark.createDataFrame(batch, SCHEMA), path, options)
    return [i.time for i in HudiTable.load(str(path)).timeline().completed_writes()]


LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"


@pytest.mark.parametrize("table_type,seed,version", [
    ("COPY_ON_WRITE", 1, "6"), ("MERGE_ON_READ", 2, "6"), ("COPY_ON_WRITE", 7, "8"), ("MERGE_ON_READ", 8, "9")] + (
    [("COPY_ON_WRITE", 3, "6"), ("MERGE_ON_READ", 4, "6"), ("COPY_ON_WRITE", 5, "9"), ("MERGE_ON_READ", 6, "8")]
    if LONG else []))
def test_random_history_cdc_equals_snapshot_diff(spark, tmp_path, table_type, seed, version):
    """Hudi 1.x tables (8, 9) answer as Hudi 0.x ones: Hudi 1.x's CDC relation (HoodieCDCExtractor) still ranges
    over requested instant times, and ts_ms is the requested time."""
    path = tmp_path / f"cdc_{seed}"
    options = _options(f"cdc_{seed}", table_type, **{"hoodie.write.table.version": version})
    if table_type == "MERGE_ON_READ" and version != "6":   # log files and a compaction (v6: small files rewritten)
        options["hoodie.parquet.small.file.limit"] = "0"
    instants = _random_history(spark, path, options, seed)
    props = HudiTable.load(str(path)).properties
    assert props.version == version and props.get("hoodie.table.cdc.enabled") == "true"
    assert props.get("hoodie.table.cdc.supplemental.logging.mode") == "DATA_BEFORE_AFTER"
    expected = _expected(spark, path, instants)
    assert {op for op, *_ in expected} == {"i", "u", "d"}
    ours = pyhudi.read(spark, path, {**CDC_READ, "hoodie.datasource.read.begin.instanttime": "000"})
    assert ours.columns == ["op", "ts_ms", "before", "after"]
    from_logs = _assert_matches(_cdc_rows(ours), expected)
    assert (from_logs > 0) == (table_type == "COPY_ON_WRITE")   # COW merges wrote -cdc logs, read as they are
    # a sub-range through the data source API: only the commits in (begin, end]
    begin, end = instants[1], instants[3]
    ranged = spark.read.format("hudi").options(**CDC_READ, **{"hoodie.datasource.read.begin.instanttime": begin,
                                                              "hoodie.datasource.read.end.instanttime": end})
    _assert_matches(_cdc_rows(ranged.load(str(path))), [r for r in expected if begin < r[1] <= end])
    # the table's other reads are unchanged: hudi-rs agrees with the snapshot
    cols = ["_hoodie_commit_time", KEY, "id", "name", "price", "ts", "region"]
    assert rows(pyhudi.read(spark, path), cols) == rows(hudi_rs_read(path), cols)


def test_sql_table_changes_cdc(spark, tmp_path):
    path = tmp_path / "sqlcdc"
    options = _options("sqlcdc")
    pyhudi.write(spark.createDataFrame([(1, "a", 1.0, 1, "us"), (2, "b", 2.0, 1, "eu")], SCHEMA), path, options)
    second = pyhudi.write(spark.createDataFrame([(1, "a2", 3.0, 2, "us")], SCHEMA), path, options).instant_time
    df = pyhudi.sql(spark, f"SELECT op, ts_ms, before, after FROM hudi_table_changes('{path}', 'cdc', 'earliest')")
    got = _cdc_rows(df)
    assert [(op, ts) for op, ts, *_ in got].count(("u", second)) == 1
    update = next(r for r in got if r[0] == "u")
    assert dict(update[3])["name"] == "a" and dict(update[4])["name"] == "a2"
    assert sorted(r[0] for r in got) == ["i", "i", "u"]


def test_insert_overwrite_is_deletes_and_inserts(spark, tmp_path):
    path = tmp_path / "ow"
    options = _options("ow")
    pyhudi.write(spark.createDataFrame([(1, "a", 1.0, 1, "us"), (2, "b", 2.0, 1, "us"), (3, "c", 3.0, 1, "eu")],
                                       SCHEMA), path, options)
    over = pyhudi.write(spark.createDataFrame([(1, "a2", 5.0, 2, "us"), (9, "z", 9.0, 2, "us")], SCHEMA), path,
                        {**options, "hoodie.datasource.write.operation": "insert_overwrite"}).instant_time
    got = _cdc_rows(pyhudi.read(spark, path, {**CDC_READ, "hoodie.datasource.read.begin.instanttime": "000"}))
    changes = sorted((op, key) for op, ts, key, *_ in got if ts == over)
    assert changes == [("d", "1"), ("d", "2"), ("i", "1"), ("i", "9")]


def test_cdc_query_on_table_without_cdc_is_refused(spark, tmp_path):
    path = tmp_path / "plain"
    options = _options("plain")
    options.pop("hoodie.table.cdc.enabled")
    pyhudi.write(spark.createDataFrame([(1, "a", 1.0, 1, "us")], SCHEMA), path, options)
    assert HudiTable.load(str(path)).properties.get("hoodie.table.cdc.enabled") is None
    with pytest.raises(PyHudiError, match="hoodie.table.cdc.enabled"):
        pyhudi.read(spark, path, {**CDC_READ, "hoodie.datasource.read.begin.instanttime": "000"}).collect()
    with pytest.raises(Exception, match="hoodie.table.cdc.enabled"):
        pyhudi.sql(spark, f"SELECT * FROM hudi_table_changes('{path}', 'cdc', 'earliest')").collect()


def _meta_free(image):
    return None if image is None else tuple((k, v) for k, v in image if not k.startswith("_hoodie_"))


@pytest.mark.parametrize("mode,version", [("DATA_BEFORE_AFTER", "6"), ("DATA_BEFORE", "6"), ("OP_KEY_ONLY", "6"),
                                          ("DATA_BEFORE_AFTER", "8"), ("OP_KEY_ONLY", "9")])
def test_cow_merge_writes_hudi_cdc_log(spark, tmp_path, mode, version):
    """A merge into an existing file group writes Hudi's -cdc log (CDC_DATA_BLOCK in the mode's schema), listed
    in the write stat's cdcStats and kept by the commit; its records are the changes the CDC query returns."""
    from pyhudi.file_group.log_block import BlockType, decode_avro_content
    from pyhudi.file_group.log_file import read_log_file
    path = tmp_path / f"log_{mode}"
    options = _options(f"log_{mode.lower()}", **{"hoodie.table.cdc.supplemental.logging.mode": mode.lower(),
                                                 "hoodie.write.table.version": version})
    pyhudi.write(spark.createDataFrame([(1, "a", 1.0, 1, "us"), (2, "b", 2.0, 1, "us"), (3, "c", 3.0, 1, "us")],
                                       SCHEMA), path, options)
    second = pyhudi.write(spark.createDataFrame([(1, "a2", 5.0, 2, "us"), (4, "d", 4.0, 2, "us")], SCHEMA),
                          path, options).instant_time
    third = pyhudi.write(spark.createDataFrame([(2, "x", 0.0, 3, "us")], SCHEMA), path,
                         {**options, "hoodie.datasource.write.operation": "delete"}).instant_time
    table = HudiTable.load(str(path))
    assert table.properties.get("hoodie.table.cdc.supplemental.logging.mode") == mode
    instants = [i.time for i in table.timeline().completed_writes()]
    expected = _expected(spark, path, instants)
    got = _cdc_rows(pyhudi.read(spark, path, {**CDC_READ, "hoodie.datasource.read.begin.instanttime": "000"}))
    # rows read from the logs: u and i (second commit), d (third); data_before logs only the before image
    assert _assert_matches(got, expected) == {"DATA_BEFORE_AFTER": 3, "DATA_BEFORE": 2, "OP_KEY_ONLY": 0}[mode]
    timeline = table.timeline()
    for instant in (second, third):
        meta = timeline.read_commit(next(i for i in timeline.completed_writes() if i.time == instant))
        cdc_stats = {p: size for stats in meta.stats_by_partition().values() for s in stats
                     for p, size in (s.cdc_stats or {}).items()}
        assert len(cdc_stats) == 1
        (log_path, size), = cdc_stats.items()
        assert log_path.endswith("-cdc") and f"{instant}.log.1_" in log_path
        assert (path / log_path).stat().st_size == size
        blocks = list(read_log_file(_fs(), str(path / log_path)))
        assert [b.block_type for b in blocks] == [BlockType.CDC_DATA_BLOCK]
        assert blocks[0].header["INSTANT_TIME"] == instant
        records = decode_avro_content(blocks[0].content, blocks[0].header["SCHEMA"]).to_pylist()
        want = sorted((op, key, _meta_free(b), _meta_free(a)) for op, ts, key, b, a in expected if ts == instant)
        logged = []
        for r in records:
            key = r.get("record_key") or str((r.get("after") or r.get("before"))["id"])
            before = _norm(r["before"]) if mode != "OP_KEY_ONLY" else None
            after = _norm(r["after"]) if mode == "DATA_BEFORE_AFTER" else None
            logged.append((r["op"], key, before, after))
        if mode != "DATA_BEFORE_AFTER":
            want = [(op, key, b if mode == "DATA_BEFORE" else None, None) for op, key, b, _ in want]
        assert sorted(logged) == want
    cols = ["_hoodie_commit_time", KEY, "id", "name", "price", "ts", "region"]
    assert rows(pyhudi.read(spark, path), cols) == rows(hudi_rs_read(path), cols)


def _fs():
    import pyarrow.fs as pafs
    return pafs.LocalFileSystem()


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_sql_table_with_cdc_property(spark, table_type):
    """CREATE TABLE ... TBLPROPERTIES ('hoodie.table.cdc.enabled'='true'), then SQL DML (and, for MOR, a
    compaction, which changes no record): hudi_table_changes(<catalog name>, 'cdc', ...) equals the diff."""
    t = f"cdc_sql_{table_type}"
    spark.sql(f"DROP TABLE IF EXISTS {t}")
    pyhudi.sql(spark, f"""CREATE TABLE {t} (id BIGINT, name STRING, price DOUBLE, ts BIGINT, region STRING)
        USING hudi PARTITIONED BY (region) TBLPROPERTIES (type = '{table_type}', primaryKey = 'id',
        preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true')""")
    pyhudi.sql(spark, f"INSERT INTO {t} VALUES (1, 'a', 1.0, 1, 'us'), (2, 'b', 2.0, 1, 'us'), "
                      f"(3, 'c', 3.0, 1, 'eu')")
    pyhudi.sql(spark, f"UPDATE {t} SET price = 9.0 WHERE id = 2")
    pyhudi.sql(spark, f"DELETE FROM {t} WHERE id = 3")
    from pyhudi.sqlext.query import Resolver
    path = Resolver(spark).entry_by_name(t).location
    if table_type == "mor":
        assert pyhudi.compact(spark, path)
    pyhudi.sql(spark, f"INSERT INTO {t} VALUES (4, 'd', 4.0, 2, 'eu')")
    table = HudiTable.load(path)
    assert table.properties.get("hoodie.table.cdc.enabled") == "true"
    timeline = table.timeline()
    instants = [i.time for i in timeline.completed_writes()
                if timeline.read_metadata(i).get("operationType") != "COMPACT"]
    assert len(instants) == 4 and len(timeline.completed_writes()) == (5 if table_type == "mor" else 4)
    got = _cdc_rows(pyhudi.sql(spark, f"SELECT * FROM hudi_table_changes('{t}', 'cdc', 'earliest')"))
    _assert_matches(got, _expected(spark, path, instants))
    assert sorted(op for op, *_ in got) == ["d", "i", "i", "i", "i", "u"]
    # DROP TABLE ... PURGE deletes the table's own files, its -cdc logs (COW merges write them) included
    assert table_type == "mor" or any(f.endswith("-cdc") for _, _, files in os.walk(path.replace("file:", "")) for f in files)
    pyhudi.sql(spark, f"DROP TABLE {t} PURGE")
    assert [f for _, _, files in os.walk(path.replace("file:", "")) for f in files] == []


def test_cdc_over_cleaned_files_is_refused(spark, tmp_path):
    """Changes whose file slices the cleaner removed cannot be computed: refused, naming the retention option;
    a range after the retained instants still works."""
    from pyhudi.errors import TimelineError
    path = tmp_path / "cleaned"
    options = _options("cleaned", **{"hoodie.cleaner.commits.retained": "1"})
    for step in range(4):
        pyhudi.write(spark.createDataFrame([(1, f"v{step}", float(step), step, "us"),
                                            (2, f"w{step}", float(step), step, "us")], SCHEMA), path, options)
    instants = [i.time for i in HudiTable.load(str(path)).timeline().completed_writes()]
    with pytest.raises(TimelineError, match="hoodie.cleaner.commits.retained"):
        pyhudi.read(spark, path, {**CDC_READ, "hoodie.datasource.read.begin.instanttime": "000"})
    got = _cdc_rows(pyhudi.read(spark, path, {**CDC_READ, "hoodie.datasource.read.begin.instanttime": instants[-2]}))
    assert [(op, ts, key) for op, ts, key, *_ in got] == [("u", instants[-1], "1"), ("u", instants[-1], "2")]
    assert [dict(b)["name"] for *_, b, a in got] == ["v2", "w2"] and [dict(a)["name"] for *_, a in got] == ["v3", "w3"]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_replace_operations(spark, tmp_path, table_type):
    """insert_overwrite_table and delete_partitions (replacecommits): every record of a replaced file group is
    a delete, the new file groups' records inserts (Hudi's REPLACE_COMMIT and BASE_FILE_INSERT cases)."""
    path = tmp_path / f"replace_{table_type}"
    options = _options(f"replace_{table_type.lower()}", table_type)
    pyhudi.write(spark.createDataFrame([(1, "a", 1.0, 1, "us"), (2, "b", 2.0, 1, "eu"), (3, "c", 3.0, 1, "asia")],
                                       SCHEMA), path, options)
    pyhudi.write(spark.createDataFrame([(2, "b2", 2.5, 2, "eu")], SCHEMA), path, options)   # a log file on MOR
    table_over = pyhudi.write(spark.createDataFrame([(2, "b3", 7.0, 3, "eu"), (5, "e", 5.0, 3, "us")], SCHEMA),
                              path, {**options, "hoodie.datasource.write.operation": "insert_overwrite_table"}).instant_time
    dropped = pyhudi.delete_partitions(spark, path, ["eu"], options).instant_time
    got = _cdc_rows(pyhudi.read(spark, path, {**CDC_READ, "hoodie.datasource.read.begin.instanttime": "000"}))
    over = sorted((op, key, (dict(a or b))["name"]) for op, ts, key, b, a in got if ts == table_over)
    assert over == [("d", "1", "a"), ("d", "2", "b2"), ("d", "3", "c"), ("i", "2", "b3"), ("i", "5", "e")]
    assert [(op, key) for op, ts, key, *_ in got if ts == dropped] == [("d", "2")]
    assert sum(1 for r in got if r[0] == "u") == 1
