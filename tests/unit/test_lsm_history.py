"""The LSM archived timeline (pyhudi.timeline.lsm_history) in Java Hudi's format: the round trip, the bytes Java
writes (parquet schema and footer, Jackson's manifest JSON, the version file), compaction and cleaning as
LSMTimelineWriter does them, snapshot reads, crash points and corrupt files.

The expected literals come from Java Hudi's sources: HoodieLSMTimelineInstant.avsc (with avro-maven-plugin's
stringType=String), TestHoodieLSMTimelineManifest's expected JSON, LSMTimelineWriter's names and clean rule."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import fastavro
import pyarrow.parquet as pq
import pytest

import pyhudi.timeline.lsm_history as lsm
from pyhudi.errors import CorruptFileError
from pyhudi.storage import Storage
from pyhudi.testing import CRASH_ENV, CRASH_EXIT_CODE
from pyhudi.timeline.lsm_history import ArchivedInstant, read_history, write_history

HISTORY = ".hoodie/timeline/history"

# HoodieLSMTimelineInstant.getClassSchema().toString() (Avro's compact form; every string carries
# "avro.java.string":"String" because Hudi generates its Avro classes with <stringType>String</stringType>).
JAVA_AVRO_SCHEMA = (
    '{"type":"record","name":"HoodieLSMTimelineInstant","namespace":"org.apache.hudi.avro.model","fields":['
    '{"name":"instantTime","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},'
    '{"name":"completionTime","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},'
    '{"name":"action","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},'
    '{"name":"metadata","type":["null","bytes"],"default":null},'
    '{"name":"plan","type":["null","bytes"],"default":null},'
    '{"name":"version","type":"int","default":1}]}'
)

# TestHoodieLSMTimelineManifest.testSerializeDeserialize's expected string (Jackson's default pretty printer).
JAVA_MANIFEST = ('{\n'
                 '  "files" : [ {\n'
                 '    "fileName" : "file1",\n'
                 '    "fileLen" : 1024\n'
                 '  }, {\n'
                 '    "fileName" : "file2",\n'
                 '    "fileLen" : 2048\n'
                 '  } ]\n'
                 '}')


def _time(n: int) -> str:
    return f"2025{n:013d}"


def _batch(start: int, size: int = 2, action: str = "commit") -> list[ArchivedInstant]:
    return [ArchivedInstant(_time(start + i), f"2026{start + i:013d}", action, f'{{"n": {start + i}}}'.encode(), None)
            for i in range(size)]


def _folder(storage: Storage) -> Path:
    return Path(storage.full(HISTORY))


def _names(storage: Storage) -> list[str]:
    return sorted(p.name for p in _folder(storage).iterdir() if not p.name.startswith("."))


def _manifest_files(storage: Storage, version: int) -> list[str]:
    return [e["fileName"] for e in json.loads((_folder(storage) / f"manifest_{version}").read_text())["files"]]


def _write_batches(storage: Storage, count: int, batch_size: int = 10, size: int = 2) -> list[ArchivedInstant]:
    written: list[ArchivedInstant] = []
    for k in range(count):
        batch = _batch(k * size, size)
        write_history(storage, HISTORY, batch, batch_size)
        written += batch
    return written


@pytest.fixture
def storage(tmp_path):
    return Storage(str(tmp_path / "tbl"))


# --- round trip -----------------------------------------------------------------------------------------------------
def test_every_field_round_trips(storage):
    instants = [
        ArchivedInstant(_time(5), _time(6), "clean", b"\x00\x01avro-clean-metadata\xff", b"\x00clean-plan"),
        ArchivedInstant(_time(1), _time(9), "commit", b'{"partitionToWriteStats": {}}', None),
        ArchivedInstant(_time(2), _time(3), "replacecommit", b"replace", b"\x00" * 3),
        ArchivedInstant(_time(4), _time(4), "rollback", None, None),
        ArchivedInstant(_time(3), _time(8), "deltacommit", b"", b"compaction-plan"),
    ]
    name = write_history(storage, HISTORY, instants)
    assert name == f"{_time(1)}_{_time(5)}_0.parquet"      # first and last instant time once sorted by time
    assert read_history(storage, HISTORY) == sorted(instants, key=lambda i: (i.time, i.action))
    listing = read_history(storage, HISTORY, with_payloads=False)
    assert [(i.time, i.completion_time, i.action, i.metadata, i.plan) for i in listing] == \
        [(i.time, i.completion_time, i.action, None, None) for i in sorted(instants, key=lambda i: i.time)]
    # records lie in the file in instant-time order, each with version 1 (LSM_TIMELINE_INSTANT_VERSION_1)
    table = pq.read_table(_folder(storage) / name)
    assert table.column("instantTime").to_pylist() == sorted(i.time for i in instants)
    assert table.column("version").to_pylist() == [1] * len(instants)


def test_listing_reads_only_the_three_columns(storage, monkeypatch):
    write_history(storage, HISTORY, _batch(0, 3))
    read_columns = []
    original = pq.ParquetFile.read

    def spy(self, columns=None, **kwargs):
        read_columns.append(columns)
        return original(self, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", spy)
    read_history(storage, HISTORY, with_payloads=False)
    assert read_columns == [["instantTime", "completionTime", "action"]]


def test_one_instant_per_time_across_files(storage):
    """A batch archived again after a crash can overlap another file: Java keeps one instant per instant time."""
    write_history(storage, HISTORY, _batch(0, 2))
    again = [ArchivedInstant(_time(1), "20260000000000001", "commit", b"archived again", None)] + _batch(2, 1)
    write_history(storage, HISTORY, again)
    history = read_history(storage, HISTORY)
    assert [i.time for i in history] == [_time(0), _time(1), _time(2)]
    assert history[1] == _batch(0, 2)[1]                        # the first in manifest order


def test_no_history_reads_empty(storage):
    assert read_history(storage, HISTORY) == []
    _folder(storage).mkdir(parents=True)
    assert read_history(storage, HISTORY) == []


# --- Java's bytes ---------------------------------------------------------------------------------------------------
def test_parquet_schema_and_footer_are_javas(storage):
    name = write_history(storage, HISTORY, _batch(0, 2))
    parquet = pq.ParquetFile(_folder(storage) / name)
    # parquet-avro's AvroSchemaConverter: a ["null", T] union an optional column, string a BINARY annotated STRING,
    # bytes a plain BINARY, a non-null int a required INT32.
    columns = [parquet.schema.column(i) for i in range(len(parquet.schema))]
    assert [(c.name, c.physical_type, str(c.logical_type), c.max_definition_level, c.max_repetition_level)
            for c in columns] == [
        ("instantTime", "BYTE_ARRAY", "String", 1, 0),
        ("completionTime", "BYTE_ARRAY", "String", 1, 0),
        ("action", "BYTE_ARRAY", "String", 1, 0),
        ("metadata", "BYTE_ARRAY", "None", 1, 0),
        ("plan", "BYTE_ARRAY", "None", 1, 0),
        ("version", "INT32", "None", 0, 0),
    ]
    # parquet-mr's footer: the Avro schema and the object model, nothing else (no ARROW:schema, no bloom filter)
    assert parquet.metadata.metadata == {b"parquet.avro.schema": JAVA_AVRO_SCHEMA.encode(),
                                         b"writer.model.name": b"avro"}
    fastavro.parse_schema(json.loads(JAVA_AVRO_SCHEMA))
    # hoodie.parquet.compression.codec's default
    row_group = parquet.metadata.row_group(0)
    assert {row_group.column(i).compression for i in range(row_group.num_columns)} == {"GZIP"}


def test_compression_follows_the_codec(storage):
    name = write_history(storage, HISTORY, _batch(0, 2), compression="snappy")
    assert pq.ParquetFile(_folder(storage) / name).metadata.row_group(0).column(0).compression == "SNAPPY"


def test_manifest_json_is_jacksons():
    entries = [lsm._Entry("file1", 1024), lsm._Entry("file2", 2048)]
    assert lsm.manifest_json(entries) == JAVA_MANIFEST
    assert lsm._parse_manifest(JAVA_MANIFEST.encode(), "m") == entries
    assert lsm._parse_manifest(b"", "m") == []          # fromJsonString: an empty file is an empty manifest


def test_manifest_and_version_files_on_disk(storage):
    first = write_history(storage, HISTORY, _batch(0, 2))
    second = write_history(storage, HISTORY, _batch(2, 2))
    folder = _folder(storage)
    assert _names(storage) == sorted([first, second, "_version_", "manifest_1", "manifest_2"])
    assert (folder / "_version_").read_bytes() == b"2"
    sizes = [(folder / n).stat().st_size for n in (first, second)]
    assert (folder / "manifest_2").read_bytes().decode() == (
        '{\n  "files" : [ {\n'
        f'    "fileName" : "{first}",\n    "fileLen" : {sizes[0]}\n'
        '  }, {\n'
        f'    "fileName" : "{second}",\n    "fileLen" : {sizes[1]}\n'
        '  } ]\n}')
    assert (folder / "manifest_1").read_bytes().decode() == \
        f'{{\n  "files" : [ {{\n    "fileName" : "{first}",\n    "fileLen" : {sizes[0]}\n  }} ]\n}}'


# --- compaction and cleaning --------------------------------------------------------------------------------------
def test_ten_files_compact_into_layer_1_and_clean_as_java(storage):
    written = _write_batches(storage, 9)
    assert [lsm.file_layer(n) for n in _manifest_files(storage, 9)] == [0] * 9
    assert [n for n in _names(storage) if n.startswith("manifest_")] == ["manifest_7", "manifest_8", "manifest_9"]
    layer0 = _manifest_files(storage, 9)

    written += _write_batches_from(storage, 9, 1)            # the 10th layer-0 file triggers the compaction
    compacted = f"{_time(0)}_{_time(19)}_1.parquet"
    assert (_folder(storage) / "_version_").read_bytes() == b"11"
    assert _manifest_files(storage, 11) == [compacted]
    # clean after one compaction keeps 3 + 1 versions: manifests 8..11; the layer-0 files stay (8..10 name them)
    manifests = [n for n in _names(storage) if n.startswith("manifest_")]
    assert sorted(manifests) == sorted(f"manifest_{v}" for v in (8, 9, 10, 11))
    assert set(layer0) < set(_names(storage))
    assert read_history(storage, HISTORY) == written
    assert pq.read_table(_folder(storage) / compacted).column("instantTime").to_pylist() == [i.time for i in written]

    written += _write_batches_from(storage, 10, 2)            # versions 12, 13: manifests 8..10 go, then the files
    assert sorted(n for n in _names(storage) if n.startswith("manifest_")) == \
        ["manifest_11", "manifest_12", "manifest_13"]
    assert not set(layer0 + [f"{_time(18)}_{_time(19)}_0.parquet"]) & set(_names(storage))
    assert [lsm.file_layer(n) for n in _manifest_files(storage, 13)] == [1, 0, 0]
    assert read_history(storage, HISTORY) == written


def _write_batches_from(storage: Storage, start: int, count: int, batch_size: int = 10) -> list[ArchivedInstant]:
    written: list[ArchivedInstant] = []
    for k in range(start, start + count):
        batch = _batch(k * 2, 2)
        write_history(storage, HISTORY, batch, batch_size)
        written += batch
    return written


def test_compaction_cascades_to_layer_2(storage):
    written = _write_batches(storage, 4, batch_size=2)
    # write 2: L0 a,b -> L1 ab; write 4: L0 c,d -> L1 cd, then L1 ab,cd -> L2 abcd: 4 writes + 3 compactions
    assert (_folder(storage) / "_version_").read_bytes() == b"7"
    assert _manifest_files(storage, 7) == [f"{_time(0)}_{_time(7)}_2.parquet"]
    assert _manifest_files(storage, 6) == [f"{_time(0)}_{_time(3)}_1.parquet", f"{_time(4)}_{_time(7)}_1.parquet"]
    assert read_history(storage, HISTORY) == written
    written += _write_batches_from(storage, 4, 1, batch_size=2)
    assert [lsm.file_layer(n) for n in _manifest_files(storage, 8)] == [2, 0]
    assert read_history(storage, HISTORY) == written


def test_clean_keeps_three_plus_compactions_versions(storage):
    _write_batches(storage, 4, batch_size=2)
    # the 4th write made versions 5 (its file), 6 (L1 cd) and 7 (L2): 2 compactions, so 3 + 2 = 5 versions stay
    assert sorted(n for n in _names(storage) if n.startswith("manifest_")) == [f"manifest_{v}" for v in range(3, 8)]
    kept = {f for v in range(3, 8) for f in _manifest_files(storage, v)}
    assert {n for n in _names(storage) if n.endswith(".parquet")} == kept
    assert f"{_time(0)}_{_time(1)}_0.parquet" not in kept and f"{_time(4)}_{_time(5)}_0.parquet" in kept
    _write_batches_from(storage, 4, 1, batch_size=2)            # no compaction: 3 versions stay, c and d go
    assert sorted(n for n in _names(storage) if n.startswith("manifest_")) == ["manifest_6", "manifest_7",
                                                                                "manifest_8"]
    assert {n for n in _names(storage) if n.endswith(".parquet")} == {
        f"{_time(0)}_{_time(3)}_1.parquet", f"{_time(4)}_{_time(7)}_1.parquet", f"{_time(0)}_{_time(7)}_2.parquet",
        f"{_time(8)}_{_time(9)}_0.parquet"}


def test_batch_size_below_two_never_compacts(storage):
    written = _write_batches(storage, 3, batch_size=1)
    assert [lsm.file_layer(n) for n in _manifest_files(storage, 3)] == [0, 0, 0]
    assert read_history(storage, HISTORY) == written


def test_candidates_stop_at_the_size_cap():
    big = lsm.COMPACTION_MAX_BYTES + 1
    entries = [lsm._Entry(f"f{i}", size) for i, size in enumerate([big, 1, 1, big, 1])]
    assert lsm._candidates(entries, 3) == ["f1", "f2", "f3"]     # a lone oversized file is skipped
    assert lsm._candidates(entries[1:], 10) == ["f1", "f2", "f3"]  # the batch ends once past the cap
    assert lsm._candidates(entries[3:], 10) == ["f4"]             # one file: doCompact then compacts nothing
    assert lsm._candidates([lsm._Entry(f"f{i}", 1) for i in range(12)], 10) == [f"f{i}" for i in range(10)]


def test_orphan_files_go_when_manifests_are_cleaned(storage):
    _write_batches(storage, 1)
    orphan = f"{_time(900)}_{_time(901)}_0.parquet"            # a write that stopped before its manifest
    (_folder(storage) / orphan).write_bytes(b"half a file")
    stray = _folder(storage) / "notes.txt"
    stray.write_text("kept")
    _write_batches_from(storage, 1, 2)                          # versions 2, 3: nothing cleaned yet
    assert orphan in _names(storage)
    _write_batches_from(storage, 3, 1)                          # version 4: manifest_1 and the orphan go
    assert orphan not in _names(storage) and "manifest_1" not in _names(storage)
    assert stray.exists()


# --- snapshots --------------------------------------------------------------------------------------------------------
def test_reader_reads_only_the_latest_manifests_files(storage):
    written = _write_batches(storage, 2)
    folder = _folder(storage)
    # a valid file the manifest does not name, and a newer manifest _version_ does not name (a write that stopped
    # before its version file): neither is read
    extra = f"{_time(500)}_{_time(501)}_0.parquet"
    (folder / extra).write_bytes(lsm._encode(lsm._to_table(_batch(500, 2)), "gzip"))
    (folder / "manifest_3").write_text(lsm.manifest_json([lsm._Entry(extra, 1)]))
    assert read_history(storage, HISTORY) == written
    # the next write replaces that manifest_3 (Java deletes a leftover of the new version first)
    written += _write_batches_from(storage, 2, 1)
    assert read_history(storage, HISTORY) == written
    assert extra not in _manifest_files(storage, 3)


@pytest.mark.parametrize("content", [None, b"x\n", b"3 ", b""])
def test_unreadable_version_file_falls_back_to_the_newest_manifest(storage, content):
    written = _write_batches(storage, 3)
    version = _folder(storage) / "_version_"
    if content is None:
        version.unlink()
    else:
        version.write_bytes(content)
    assert read_history(storage, HISTORY) == written
    (_folder(storage) / "manifest_3").unlink()
    assert read_history(storage, HISTORY) == written[:4]       # manifest_2 is now the newest


def test_committed_file_is_not_written_again(storage):
    batch = _batch(0, 3)
    name = write_history(storage, HISTORY, batch)
    before = (_folder(storage) / name).stat().st_mtime_ns
    assert write_history(storage, HISTORY, list(reversed(batch))) == name
    assert (_folder(storage) / "_version_").read_bytes() == b"1"
    assert (_folder(storage) / name).stat().st_mtime_ns == before
    assert read_history(storage, HISTORY) == batch


def test_uncommitted_file_of_the_same_name_is_replaced(storage):
    batch = _batch(0, 3)
    _folder(storage).mkdir(parents=True)
    name = f"{_time(0)}_{_time(2)}_0.parquet"
    (_folder(storage) / name).write_bytes(b"torn")
    assert write_history(storage, HISTORY, batch) == name
    assert read_history(storage, HISTORY) == batch


@pytest.mark.parametrize("instants, match", [
    ([], "at least one instant"),
    ([ArchivedInstant(_time(1), None, "commit", None, None)], "no completion time"),
    ([ArchivedInstant("2025-01-01", _time(1), "commit", None, None)], "numeric instant time"),
])
def test_write_refuses_what_java_cannot_read(storage, instants, match):
    with pytest.raises(ValueError, match=match):
        write_history(storage, HISTORY, instants)
    assert not Path(storage.full(HISTORY)).exists()


# --- corrupt files ------------------------------------------------------------------------------------------------
def _break_version_file(folder: Path) -> str:
    (folder / "_version_").write_bytes(b"7")
    return "manifest_7"


def _break_manifest_json(folder: Path) -> str:
    (folder / "manifest_2").write_bytes(b'{"files" : [ {')
    return "manifest_2"


def _break_manifest_shape(folder: Path) -> str:
    (folder / "manifest_2").write_bytes(b'{"files": [{"fileLen": 3}]}')
    return "manifest_2"


def _delete_data_file(folder: Path) -> str:
    name = json.loads((folder / "manifest_2").read_text())["files"][0]["fileName"]
    (folder / name).unlink()
    return name


def _truncate_data_file(folder: Path) -> str:
    name = json.loads((folder / "manifest_2").read_text())["files"][1]["fileName"]
    data = (folder / name).read_bytes()
    (folder / name).write_bytes(data[: len(data) // 2])
    return name


@pytest.mark.parametrize("breaker", [_break_version_file, _break_manifest_json, _break_manifest_shape,
                                     _delete_data_file, _truncate_data_file])
@pytest.mark.parametrize("with_payloads", [True, False])
def test_corrupt_history_names_the_file(storage, breaker, with_payloads):
    _write_batches(storage, 2)
    culprit = breaker(_folder(storage))
    with pytest.raises(CorruptFileError, match=re.escape(f"{HISTORY}/{culprit}")) as caught:
        read_history(storage, HISTORY, with_payloads=with_payloads)
    assert "restore" in str(caught.value)
    if culprit.startswith("manifest_"):
        with pytest.raises(CorruptFileError, match=re.escape(culprit)):     # the writer stops too, as Java's does
            write_history(storage, HISTORY, _batch(100, 1))


# --- crash points ---------------------------------------------------------------------------------------------------
class _Crash(BaseException):
    """Stands for the kill: a BaseException, so nothing on the way catches it."""


# point -> (writes before the crashing one, with batch size 3; the snapshot the crash leaves: "old" or "new")
CRASH_CASES = {
    "lsm_history.write.after_data_file": (3, "old"),
    "lsm_history.write.after_manifest": (3, "old"),
    "lsm_history.write.after_version": (3, "new"),
    "lsm_history.compaction.after_data_file": (2, "new"),
    "lsm_history.compaction.after_manifest": (2, "new"),
    "lsm_history.compaction.after_version": (2, "new"),
    "lsm_history.clean.after_manifests": (3, "new"),
}


def test_every_crash_point_has_a_case():
    source = Path(lsm.__file__).read_text()
    assert set(re.findall(r"crash_point\(\"([^\"]+)\"\)", source)) == set(CRASH_CASES)


@pytest.mark.parametrize("point", sorted(CRASH_CASES))
def test_crash_point_leaves_old_or_new_snapshot(storage, monkeypatch, point):
    before, expected = CRASH_CASES[point]
    old = _write_batches(storage, before, batch_size=3)
    batch = _batch(before * 2, 2)
    new = old + batch
    reached = []

    def crash(name: str) -> None:
        if name == point:
            reached.append(name)
            raise _Crash(name)

    monkeypatch.setattr(lsm, "crash_point", crash)
    with pytest.raises(_Crash):
        write_history(storage, HISTORY, batch, 3)
    assert reached == [point]
    assert read_history(storage, HISTORY) == (old if expected == "old" else new)
    assert read_history(storage, HISTORY, with_payloads=False) == \
        [ArchivedInstant(i.time, i.completion_time, i.action, None, None) for i in (old if expected == "old" else new)]

    monkeypatch.setattr(lsm, "crash_point", lambda name: None)
    write_history(storage, HISTORY, batch, 3)                    # the archiver retries the same batch
    assert read_history(storage, HISTORY) == new
    later = _write_batches_from(storage, before + 1, 3, batch_size=3)
    assert read_history(storage, HISTORY) == new + later
    version = int((_folder(storage) / "_version_").read_text())
    named = set(_manifest_files(storage, version))
    assert named <= set(_names(storage))


def test_crash_point_ends_the_process(storage):
    """The real thing: PYHUDI_CRASH_AT kills the writer (exit 137) and the history still reads."""
    old = _write_batches(storage, 1)
    script = ("import sys; from pyhudi.storage import Storage; from pyhudi.timeline.lsm_history import *; "
              f"write_history(Storage(sys.argv[1]), {HISTORY!r}, "
              f"[ArchivedInstant({_time(50)!r}, {_time(51)!r}, 'commit', b'm', None)])")
    env = {**os.environ, CRASH_ENV: "lsm_history.write.after_manifest"}
    result = subprocess.run([sys.executable, "-c", script, storage.base_path], env=env, capture_output=True,
                            timeout=120)
    assert result.returncode == CRASH_EXIT_CODE, result.stderr.decode()
    assert "manifest_2" in _names(storage) and (_folder(storage) / "_version_").read_bytes() == b"1"
    assert read_history(storage, HISTORY) == old
