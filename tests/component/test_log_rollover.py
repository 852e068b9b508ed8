"""Log files as Hudi 0.14/0.15 writes them: a write's log output rolls to the next version past
hoodie.logfile.max.size (blocks cut at hoodie.logfile.data.block.max.size), every write starts a new version on
storage without append (the local file system), and on MERGE_ON_READ with the BUCKET index inserts open file groups
with a log file only. Rows are checked against plain Spark and hudi-rs."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from pyspark.sql import Window
from pyspark.sql import functions as F

import pyhudi
from pyhudi.file_group import log_writer
from pyhudi.file_group.log_file import delete_block, read_log_file
from pyhudi.file_group.naming import parse_base_file_name, parse_log_file_name
from support import assert_same_rows_as_hudi_rs, hudi_rs_read, rows

SCHEMA = "id long, name string, price double, ts long, region string"
DATA = ["id", "name", "price", "ts", "region"]
TINY = {"hoodie.logfile.max.size": "1", "hoodie.logfile.data.block.max.size": "300"}


def _options(name, index="BLOOM", **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.index.type": index,
            "hoodie.bucket.index.num.buckets": "2", **extra}


def _batch(spark, ids, ts, tag="n"):
    return spark.createDataFrame([(i, f"{tag}{i}_{ts}", float(i * ts), ts, "us" if i % 2 else "eu") for i in ids],
                                 SCHEMA)


def _reference(spark, batches):
    """Plain Spark: the latest record per key by (ts, batch order); keys whose latest record is a delete vanish."""
    tagged = [df.withColumn("_seq", F.lit(n)).withColumn("_del", F.lit(deleted))
              for n, (df, deleted) in enumerate(batches)]
    union = tagged[0]
    for df in tagged[1:]:
        union = union.unionByName(df)
    latest = Window.partitionBy("id").orderBy(F.col("ts").desc(), F.col("_seq").desc())
    kept = union.withColumn("_n", F.row_number().over(latest)).filter("_n = 1 AND NOT _del")
    return rows(kept.select(*DATA), DATA)


def _stats(path, instant):
    meta = json.loads((path / ".hoodie" / f"{instant}.deltacommit").read_text())
    return [s for group in meta["partitionToWriteStats"].values() for s in group]


def _files(path):
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*")
                  if p.is_file() and ".hoodie" not in p.parts and not p.name.startswith(".hoodie_partition"))


def test_a_write_rolls_over_past_the_log_max_size(spark, tmp_path):
    path = tmp_path / "rolled"
    options = _options("rolled")
    first = pyhudi.write(_batch(spark, range(40), 1), str(path), options).instant_time
    batches = [(_batch(spark, range(40), 1), False)]
    updates = _batch(spark, range(0, 30), 2, "u")
    second = pyhudi.write(updates, str(path), {**options, **TINY}).instant_time
    batches.append((updates, False))

    stats = _stats(path, second)
    by_group: dict = {}
    for s in stats:
        by_group.setdefault(s["fileId"], []).append(s)
    assert by_group and all(len(group) > 1 for group in by_group.values())     # several log files per slice
    for group in by_group.values():
        versions = [s["logVersion"] for s in sorted(group, key=lambda s: s["logVersion"])]
        assert versions == list(range(1, len(group) + 1))
        for s in group:
            file_id, base_instant, version, _ = parse_log_file_name(s["path"].rsplit("/", 1)[-1])
            assert (file_id, base_instant, version) == (s["fileId"], first, s["logVersion"])
            assert s["prevCommit"] == first and s["numInserts"] == 0
            assert s["fileSizeInBytes"] == (path / s["path"]).stat().st_size
            blocks = list(read_log_file(pafs.LocalFileSystem(), str(path / s["path"])))
            assert {b.instant_time for b in blocks} == {second}
            assert sum(b.records.num_rows for b in blocks if b.records is not None) == s["numWrites"]
    assert sum(s["numUpdateWrites"] for s in stats) == 30

    # The next write rolls over too: the local file system does not append (Hudi's StorageSchemes "file").
    deletes = _batch(spark, [1, 2, 3], 3)
    third = pyhudi.write(deletes, str(path), {**options, **TINY, "hoodie.datasource.write.operation": "delete"}
                         ).instant_time
    batches.append((deletes, True))
    for s in _stats(path, third):
        before = max(x["logVersion"] for x in stats if x["fileId"] == s["fileId"])
        assert s["logVersion"] == before + 1 and s["numDeletes"] > 0
    assert len(set(_files(path))) == len(_files(path))

    assert rows(pyhudi.read(spark, path).select(*DATA), DATA) == _reference(spark, batches)
    assert_same_rows_as_hudi_rs(spark, path, min_columns=6)


def test_blocks_share_a_file_under_the_max_size(spark, tmp_path):
    path = tmp_path / "blocks"
    options = _options("blocks", **{"hoodie.logfile.data.block.max.size": "300"})
    pyhudi.write(_batch(spark, range(20), 1), str(path), options)
    second = pyhudi.write(_batch(spark, range(20), 2, "u"), str(path), options).instant_time
    stats = _stats(path, second)
    assert len(stats) == len({s["fileId"] for s in stats})          # one log file per slice
    blocks = [b for s in stats for b in read_log_file(pafs.LocalFileSystem(), str(path / s["path"]))]
    assert len(blocks) > len(stats)                                   # several data blocks in one file
    assert rows(pyhudi.read(spark, path).select(*DATA), DATA) == \
        _reference(spark, [(_batch(spark, range(20), 1), False), (_batch(spark, range(20), 2, "u"), False)])


def test_bucket_index_inserts_start_log_only_file_groups(spark, tmp_path):
    path = tmp_path / "bucket"
    options = _options("bucket", "BUCKET", **TINY)
    batches = [(_batch(spark, range(30), 1), False)]
    first = pyhudi.write(batches[0][0], str(path), options).instant_time
    assert not [f for f in _files(path) if parse_base_file_name(f.rsplit("/", 1)[-1])]     # no base file
    stats = _stats(path, first)
    assert {parse_log_file_name(s["path"].rsplit("/", 1)[-1])[1] for s in stats} == {first}   # base instant
    assert sum(s["numInserts"] for s in stats) == 30 and all(s["numUpdateWrites"] == 0 for s in stats)
    assert all(s["baseFile"] == "" and s["prevCommit"] == "null" for s in stats)
    assert len(stats) > len({s["fileId"] for s in stats})            # rolled over inside the write
    assert pyhudi.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"}).count() == 0
    assert rows(pyhudi.read(spark, path).select(*DATA), DATA) == _reference(spark, batches)

    # New keys and updates in existing buckets: more log files of the same slices; deletes: a delete block.
    upserts = _batch(spark, range(20, 45), 2, "u")
    second = pyhudi.write(upserts, str(path), options).instant_time
    batches.append((upserts, False))
    # Hudi's bucket index tags every record of an existing bucket with its location: an update of the log
    assert sum(s["numUpdateWrites"] for s in _stats(path, second)) == 25
    deletes = _batch(spark, [0, 1, 44], 3)
    third = pyhudi.write(deletes, str(path), {**options, "hoodie.datasource.write.operation": "delete"}).instant_time
    batches.append((deletes, True))
    assert {parse_log_file_name(s["path"].rsplit("/", 1)[-1])[1] for s in _stats(path, third)} == {first}
    assert rows(pyhudi.read(spark, path).select(*DATA), DATA) == _reference(spark, batches)
    assert_same_rows_as_hudi_rs(spark, path, min_columns=6)
    incremental = pyhudi.read(spark, path, {"hoodie.datasource.query.type": "incremental",
                                            "hoodie.datasource.read.begin.instanttime": first})
    columns = ["_hoodie_record_key", "_hoodie_commit_time", *DATA]
    assert rows(incremental, columns) == rows(hudi_rs_read(path, start=first), columns)
    assert sorted(r["id"] for r in incremental.collect()) == list(range(20, 44))

    # A failed-then-rolled-back write leaves the table as it was.
    before = rows(pyhudi.read(spark, path).select(*DATA), DATA)
    fourth = pyhudi.write(_batch(spark, range(100, 110), 4), str(path), options).instant_time
    assert pyhudi.rollback_to_instant(spark, str(path), fourth)
    assert rows(pyhudi.read(spark, path).select(*DATA), DATA) == before
    assert not [f for f in _files(path) if fourth in f]

    # Compaction turns the log-only slices into base files; read-optimized then sees every row.
    assert pyhudi.compact(spark, str(path))
    compacted = rows(pyhudi.read(spark, path).select(*DATA), DATA)
    assert compacted == before == _reference(spark, batches)
    assert rows(pyhudi.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"}).select(*DATA),
                DATA) == compacted
    assert_same_rows_as_hudi_rs(spark, path, min_columns=6)
    logs = [f for f in _files(path) if parse_log_file_name(f.rsplit("/", 1)[-1])]
    pyhudi.clean(spark, str(path), {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                    "hoodie.cleaner.fileversions.retained": "1"})
    assert logs and not [f for f in _files(path) if parse_log_file_name(f.rsplit("/", 1)[-1])]   # slices cleaned
    columns = ["_hoodie_record_key", *DATA]
    assert rows(pyhudi.read(spark, path), columns) == rows(hudi_rs_read(path), columns)
    assert rows(pyhudi.read(spark, path).select(*DATA), DATA) == compacted


def test_bucket_bulk_insert_still_writes_base_files(spark, tmp_path):
    path = tmp_path / "bulk"
    options = _options("bulk", "BUCKET", **{"hoodie.datasource.write.operation": "bulk_insert"})
    pyhudi.write(_batch(spark, range(10), 1), str(path), options)
    assert [f for f in _files(path) if parse_base_file_name(f.rsplit("/", 1)[-1])]
    assert not [f for f in _files(path) if parse_log_file_name(f.rsplit("/", 1)[-1])]


@pytest.mark.parametrize("append", [False, True])
def test_slice_log_writer_appends_only_where_the_storage_can(tmp_path, monkeypatch, append):
    """Hudi's StorageSchemes: 'file' cannot append, so the writer starts the next version; on append storage
    (hdfs) it extends the slice's latest log file until that passes the max size."""
    fs = pafs.LocalFileSystem()
    assert not log_writer.supports_append(fs) and log_writer.storage_scheme(fs) == "file"
    monkeypatch.setattr(log_writer, "supports_append", lambda _fs: append)
    full = lambda relative: str(tmp_path / relative)     # noqa: E731
    marked = []
    block = delete_block([("k", "p", 1)], "20250101000000001", "long")
    first = log_writer.write_slice_log(fs, full, log_writer.SliceLog("p", "fg-0", "20250101000000000", 1, "0-1-1"),
                                       [[block]], 1 << 20, marked.append)
    assert [o.version for o in first] == [1] and marked == ["p/.fg-0_20250101000000000.log.1_0-1-1"]
    size = first[0].size
    latest = (first[0].path.rsplit("/", 1)[-1], 1, size)
    second = log_writer.write_slice_log(fs, full, log_writer.SliceLog("p", "fg-0", "20250101000000000", 2, "0-2-2",
                                                                      latest), [[block], [block]], size * 2 + 1,
                                        marked.append)
    if append:   # both calls extend version 1 (it passes the max size only with the last one)
        assert [(o.version, o.existed, o.offset) for o in second] == [(1, True, size)]
        assert second[0].size == 3 * size and (tmp_path / first[0].path).stat().st_size == 3 * size
    else:        # a new version, both calls in it
        assert [(o.version, o.existed, o.calls) for o in second] == [(2, False, [0, 1])]
        assert second[0].path.endswith(".log.2_0-2-2") and (tmp_path / first[0].path).stat().st_size == size
    rolled = log_writer.write_slice_log(fs, full, log_writer.SliceLog("p", "fg-0", "20250101000000000", 3, "0-3-3"),
                                        [[block], [block], [block]], 1, marked.append)
    assert [(o.version, o.calls) for o in rolled] == [(3, [0]), (4, [1]), (5, [2])]


def test_a_log_file_name_another_writer_created_first_rolls_over(tmp_path):
    """Two writers of one slice can name the same new log file (same version and write token): the one that
    creates it second rolls over to the next free version, with a marker for it, and leaves the first's file as it
    was (Hudi's writer rolls over when its file exists)."""
    fs = pafs.LocalFileSystem()
    full = lambda relative: str(tmp_path / relative)     # noqa: E731
    theirs = delete_block([("k", "p", 1)], "20250101000000001", "long")
    ours = delete_block([("k", "p", 2)], "20250101000000002", "long")
    slice_log = log_writer.SliceLog("p", "fg-0", "20250101000000000", 1, "0-1-1")
    log_writer.write_slice_log(fs, full, slice_log, [[theirs]], 1 << 20, lambda _relative: None)
    log_writer.write_slice_log(fs, full, log_writer.SliceLog("p", "fg-0", "20250101000000000", 2, "0-1-1"),
                               [[theirs]], 1 << 20, lambda _relative: None)
    marked = []
    (written,) = log_writer.write_slice_log(fs, full, slice_log, [[ours]], 1 << 20, marked.append)
    assert (written.version, written.path) == (3, "p/.fg-0_20250101000000000.log.3_0-1-1")
    assert marked == ["p/.fg-0_20250101000000000.log.1_0-1-1", "p/.fg-0_20250101000000000.log.2_0-1-1",
                      "p/.fg-0_20250101000000000.log.3_0-1-1"]
    instants = [[b.instant_time for b in read_log_file(fs, full(f"p/.fg-0_20250101000000000.log.{v}_0-1-1"),
                                                        decode=False)] for v in (1, 2, 3)]
    assert instants == [["20250101000000001"], ["20250101000000001"], ["20250101000000002"]]
    assert written.size == (tmp_path / written.path).stat().st_size


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_incompressible_columns_stored_uncompressed_read_everywhere(spark, tmp_path, table_type):
    """A big gzip base file and log block store a column of random doubles UNCOMPRESSED (parquet's codec is per
    column chunk; see parquet_settings.encoding) and gzip the rest; pyhudi, hudi-rs and Spark's reference agree."""
    path = tmp_path / table_type
    options = _options(f"uncompressed_{table_type}", **{"hoodie.datasource.write.table.type": table_type,
                                                         "hoodie.parquet.compression.codec": "gzip"})

    def batch(ids, ts):
        return spark.range(*ids).select(F.col("id"), F.concat(F.lit("n"), F.col("id").cast("string")).alias("name"),
                                        (F.rand(ts * 101) * 1000).alias("price"), F.lit(ts).cast("long").alias("ts"),
                                        F.lit("eu").alias("region"))
    pyhudi.write(batch((0, 10000), 1), str(path), options)
    second = pyhudi.write(batch((0, 10000, 2), 2), str(path), options).instant_time
    action = "deltacommit" if table_type == "MERGE_ON_READ" else "commit"
    meta = json.loads((path / ".hoodie" / f"{second}.{action}").read_text())
    for s in [s for group in meta["partitionToWriteStats"].values() for s in group]:
        data = (path / s["path"]).read_bytes()
        content = data[data.index(b"PAR1"):data.rindex(b"PAR1") + 4] if "logVersion" in s else data
        metadata = pq.ParquetFile(pa.BufferReader(content)).metadata
        codecs = {metadata.schema.column(i).name: metadata.row_group(0).column(i).compression
                  for i in range(metadata.num_columns)}
        assert codecs.pop("price") == "UNCOMPRESSED" and set(codecs.values()) == {"GZIP"}, codecs
    assert rows(pyhudi.read(spark, path).select(*DATA), DATA) == \
        _reference(spark, [(batch((0, 10000), 1), False), (batch((0, 10000, 2), 2), False)])
    assert_same_rows_as_hudi_rs(spark, path, len(DATA))


@pytest.mark.parametrize("codec", ["snappy", "gzip"])
def test_parquet_log_blocks_take_the_table_codec(spark, tmp_path, codec):
    """A parquet data block is compressed with hoodie.parquet.compression.codec (Hudi's HoodieAppendHandle passes
    it to its blocks), and a column whose values all differ (the record key) is written without a dictionary;
    a column with repeats (region) gets one in a block of at least the codec's DICTIONARY_MIN_ROWS."""
    from pyhudi.file_group.parquet_settings import DICTIONARY_MIN_ROWS, DICTIONARY_MIN_ROWS_OTHER
    path = tmp_path / codec
    options = _options(f"codec_{codec}", **{"hoodie.parquet.compression.codec": codec})
    pyhudi.write(_batch(spark, range(10000), 1), str(path), options)
    second = pyhudi.write(_batch(spark, range(0, 10000, 2), 2, "u"), str(path), options).instant_time
    stats = _stats(path, second)
    assert stats and all("logVersion" in s for s in stats)
    for s in stats:   # one data block per log file: its content is the parquet file between the magic bytes
        data = (path / s["path"]).read_bytes()
        content = data[data.index(b"PAR1"):data.rindex(b"PAR1") + 4]
        metadata = pq.ParquetFile(pa.BufferReader(content)).metadata
        names = [metadata.schema.column(i).name for i in range(metadata.num_columns)]
        chunks = [metadata.row_group(0).column(i) for i in range(metadata.num_columns)]
        assert {c.compression for c in chunks} == {codec.upper()}
        key = chunks[names.index("_hoodie_record_key")]
        assert not any("DICTIONARY" in e for e in key.encodings), key.encodings
        region_dictionary = any("DICTIONARY" in e for e in chunks[names.index("region")].encodings)
        assert region_dictionary == (metadata.num_rows >= DICTIONARY_MIN_ROWS.get(codec, DICTIONARY_MIN_ROWS_OTHER))
    assert any(s["numWrites"] >= DICTIONARY_MIN_ROWS["gzip"] for s in stats)   # a block big enough for one in either codec
    assert rows(pyhudi.read(spark, path).select(*DATA), DATA) == \
        _reference(spark, [(_batch(spark, range(10000), 1), False), (_batch(spark, range(0, 10000, 2), 2, "u"), False)])
