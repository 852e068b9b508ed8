"""Corrupt files and impossible options: each raises a PyHudiError naming the file or option and the fix, for
readers (pyhudi.read, spark.read.format("hudi")) and for a writer, and leaves every file of the table unchanged."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

import pyhudi
from pyhudi import errors

OPTIONS = {"hoodie.table.name": "corrupt", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts"}
SCHEMA = "id long, region string, ts long, v string"


def _snapshot(path: Path) -> dict:
    return {str(p.relative_to(path)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def templates(spark, tmp_path_factory):
    """A copy-on-write and a merge-on-read table, each with an insert and an update commit."""
    root = tmp_path_factory.mktemp("corrupt_templates")
    out = {}
    for kind in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        path = root / kind
        options = {**OPTIONS, "hoodie.datasource.write.table.type": kind}
        pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], SCHEMA), path, options)
        pyhudi.write(spark.createDataFrame([(1, "us", 2, "a2")], SCHEMA), path, options)
        out[kind] = path
    return out


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def table(request, templates, tmp_path):
    path = tmp_path / "t"
    shutil.copytree(templates[request.param], path)
    return path


def _commits(path: Path) -> list[Path]:
    return sorted(p for p in (path / ".hoodie").iterdir() if p.suffix in (".commit", ".deltacommit"))


def _expect_failure(spark, path: Path, error: type, match: str, *, write: str = "ours",
                    in_executor: bool = False) -> None:
    """Reading (both readers) fails with `error` matching `match`, and so does writing (`write="ours"`), or the
    write fails some other way (`"fails"`: the writer does not check file sizes before it begins, see the
    report), or is not tried (`"skip"`); no file changes. Damage found while executors read the files
    (`in_executor`) reaches the caller wrapped by Spark, with our message."""
    before = _snapshot(path)
    with pytest.raises(Exception if in_executor else error, match=match):
        pyhudi.read(spark, path).collect()
    with pytest.raises(Exception, match=match):   # Spark wraps data-source errors; the message is ours
        spark.read.format("hudi").load(str(path)).collect()
    if write == "ours":
        with pytest.raises(error, match=match):
            pyhudi.write(spark.createDataFrame([(3, "us", 3, "c")], SCHEMA), path, OPTIONS)
    elif write == "fails":
        with pytest.raises(Exception):
            pyhudi.write(spark.createDataFrame([(1, "us", 3, "c")], SCHEMA), path, OPTIONS)
    after = _snapshot(path)
    assert after == before, sorted(set(after.items()) ^ set(before.items()))


# --- hoodie.properties --------------------------------------------------------------------------------------
def test_properties_not_utf8(spark, table):
    props = table / ".hoodie" / "hoodie.properties"
    props.write_bytes(props.read_bytes() + b"hoodie.table.comment=caf\xe9 \xff\xfe\n")
    _expect_failure(spark, table, errors.CorruptFileError, r"hoodie\.properties.*(UTF-8|byte)")


@pytest.mark.parametrize("damage", ["bad_escape", "truncated", "empty", "binary", "bad_type"])
def test_properties_malformed(spark, table, damage):
    props = table / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    if damage == "bad_escape":
        props.write_text(text + "hoodie.table.comment=\\uZZ\n")
    elif damage == "truncated":
        props.write_text(text[:len(text) // 3])
    elif damage == "empty":
        props.write_bytes(b"")
    elif damage == "binary":
        props.write_bytes(bytes(range(0, 128)) * 3)
    else:
        props.write_text(text.replace("hoodie.table.type=", "hoodie.table.type=SIDEWAYS_"))
    _expect_failure(spark, table, errors.CorruptFileError, r"hoodie\.properties")


# --- timeline files ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["binary", "array", "truncated", "wrong_shape"])
def test_commit_file_damaged(spark, table, damage):
    latest = _commits(table)[-1]
    data = latest.read_bytes()
    latest.write_bytes({"binary": b"\x00\xff\xfe" + bytes(range(256)),
                        "array": b'[{"partitionToWriteStats": {}}]',
                        "truncated": data[:len(data) // 2],
                        "wrong_shape": b'{"partitionToWriteStats": [1, 2], "extraMetadata": "x"}'}[damage])
    _expect_failure(spark, table, errors.CorruptFileError, latest.name)


# --- data files ----------------------------------------------------------------------------------------------
def test_truncated_base_file(spark, table):
    base = max((table / "us").glob("*.parquet"), key=lambda p: p.name.rsplit("_", 1)[-1])
    base.write_bytes(base.read_bytes()[:-100])
    _expect_failure(spark, table, errors.CorruptFileError, base.name, write="fails")


def _log_file(table: Path) -> Path:
    logs = sorted((table / "us").glob(".*.log.*"))
    if not logs:
        pytest.skip("copy-on-write table has no log files")
    return logs[-1]


@pytest.mark.parametrize("damage", ["truncated", "magic", "size"])
def test_corrupt_committed_log_block(spark, table, damage):
    log = _log_file(table)
    data = bytearray(log.read_bytes())
    if damage == "truncated":
        data = data[:len(data) - 40]
    elif damage == "magic":
        data[0:6] = b"#HUDX#"
    else:
        data[6:14] = (len(data) * 7).to_bytes(8, "big")
    log.write_bytes(bytes(data))
    # a write that appends a new log file does not read this one, so it is not expected to fail
    _expect_failure(spark, table, errors.CorruptFileError, log.name, write="skip", in_executor=damage != "truncated")


# --- paths and options ---------------------------------------------------------------------------------------
def test_table_path_is_a_regular_file(spark, tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("not a table")
    with pytest.raises(errors.NotAHudiTableError, match="is a file"):
        pyhudi.read(spark, path)
    with pytest.raises(Exception, match="is a file"):
        spark.read.format("hudi").load(str(path)).collect()
    with pytest.raises(errors.PyHudiError, match="is a file"):
        pyhudi.write(spark.createDataFrame([(3, "us", 3, "c")], SCHEMA), path, OPTIONS)
    assert path.read_text() == "not a table"


@pytest.mark.parametrize("key,value", [
    ("hoodie.client.heartbeat.interval_in_ms", "0"),
    ("hoodie.client.heartbeat.interval_in_ms", "-5"),
    ("hoodie.client.heartbeat.tolerable.misses", "0"),
    ("hoodie.parquet.max.file.size", "0"),
    ("hoodie.parquet.small.file.limit", "-1"),
    ("hoodie.copyonwrite.record.size.estimate", "0"),
    ("hoodie.index.bloom.fpp", "1.5"),
    ("hoodie.index.bloom.num_entries", "0"),
    ("hoodie.bucket.index.num.buckets", "0"),
    ("hoodie.cleaner.fileversions.retained", "0"),
    ("hoodie.compact.inline.max.delta.commits", "0"),
    ("hoodie.logfile.max.size", "-1"),
])
def test_impossible_numeric_option(spark, table, key, value):
    before = _snapshot(table)
    with pytest.raises(errors.ConfigError, match=key.replace(".", r"\.")):
        pyhudi.write(spark.createDataFrame([(3, "us", 3, "c")], SCHEMA), table, {**OPTIONS, key: value})
    assert _snapshot(table) == before
