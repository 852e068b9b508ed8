"""timeline.WriteStat / timeline.CommitMetadata: the commits pyhudi writes keep their bytes (the JSON of the typed
values is what the dict-building code wrote before them), and commits written by Java Hudi survive a round trip
(keys pyhudi does not model, key order, null values)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from pyhudi.commit.metadata import write_stat
from pyhudi.timeline import CommitMetadata, WriteStat, commit_metadata_bytes, parse_commit, parse_commit_metadata
from pyhudi.timeline.commit_avro import commit_metadata_avro_bytes

ROOT = Path(__file__).resolve().parents[2]


def _legacy_write_stat(row) -> dict:
    """commit/metadata.write_stat as it was before the typed WriteStat (the reference for byte identity)."""
    def get(name):
        return row.get(name)
    cdc = get("cdc_stats")
    stat = {
        "fileId": row["file_id"], "path": row["path"], "cdcStats": json.loads(cdc) if cdc else None,
        "prevCommit": row["prev_commit"],
        "numWrites": row["num_writes"], "numDeletes": row["num_deletes"], "numUpdateWrites": row["num_updates"],
        "numInserts": row["num_inserts"], "totalWriteBytes": row["file_size"], "totalWriteErrors": 0,
        "tempPath": None, "partitionPath": row["partition_path"], "totalLogRecords": 0,
        "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0,
        "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
        "fileSizeInBytes": row["file_size"], "minEventTime": get("min_event_time"),
        "maxEventTime": get("max_event_time"),
        "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
    }
    if row["log_version"] is not None:
        stat.update({"logVersion": row["log_version"], "logOffset": get("log_offset") or 0,
                     "baseFile": row["base_file"], "logFiles": [row["path"].rsplit("/", 1)[-1]]})
    return stat


def _legacy_commit(operation, stats, extra, replaced=None, compacted=False) -> dict:
    by_partition: dict = {}
    for stat in stats:
        by_partition.setdefault(stat["partitionPath"], []).append(stat)
    out = {"partitionToWriteStats": by_partition, "compacted": compacted, "extraMetadata": dict(extra),
           "operationType": operation}
    if replaced is not None:
        out["partitionToReplaceFileIds"] = replaced
    return out


def _row(**over):
    row = {"partition_path": "p=1", "file_id": "f1", "path": "p=1/f1_0-1-1_100.parquet", "prev_commit": "null",
           "num_writes": 10, "num_inserts": 10, "num_updates": 0, "num_deletes": 0, "file_size": 4096,
           "min_key": "a", "max_key": "z", "log_version": None, "base_file": None, "min_event_time": None,
           "max_event_time": None, "cdc_stats": None, "log_offset": None}
    row.update(over)
    return row


ROWS = [
    _row(),
    _row(partition_path="p=2", file_id="f2", path="p=2/f2_0-1-1_100.parquet", prev_commit="090",
         num_updates=3, num_inserts=0, num_deletes=1, min_event_time=5, max_event_time=9,
         cdc_stats=json.dumps({"p=2/f2_0-1-1_100.parquet-cdc": 77})),
    _row(file_id="f3", path="p=1/.f3_090.log.1_0-1-1", prev_commit="090", log_version=1, base_file="f3_090.parquet",
         log_offset=None, num_updates=2, num_inserts=1),
    _row(file_id="f4", path="p=1/.f4_090.log.2_0-1-1", prev_commit="090", log_version=2, base_file="",
         log_offset=1200, min_event_time=1, max_event_time=2, cdc_stats=json.dumps({"p=1/x-cdc": 5})),
]


@pytest.mark.parametrize("row", ROWS)
def test_write_stat_json_is_the_legacy_dict(row):
    new = write_stat(row).to_json()
    old = _legacy_write_stat(row)
    assert new == old and list(new) == list(old)


@pytest.mark.parametrize("replaced", [None, {"p=1": ["f0"]}])
def test_commit_bytes_are_unchanged(replaced):
    extra = {"schema": "{}", "k": "v"}
    typed = CommitMetadata("UPSERT", tuple(write_stat(r) for r in ROWS), extra, replaced)
    legacy = _legacy_commit("UPSERT", [_legacy_write_stat(r) for r in ROWS], extra, replaced)
    assert commit_metadata_bytes(typed.to_json()) == commit_metadata_bytes(legacy)
    # an Avro container file has a random sync marker: its records are compared
    assert parse_commit_metadata(commit_metadata_avro_bytes(typed.to_json(), replaced is not None), "new") == \
        parse_commit_metadata(commit_metadata_avro_bytes(legacy, replaced is not None), "old")
    # parsed back, the typed value gives the same bytes again (JSON and Avro layouts)
    for data in (commit_metadata_bytes(legacy), commit_metadata_avro_bytes(legacy, replaced is not None)):
        parsed = parse_commit(data, "test")
        assert parsed.to_json() == parse_commit_metadata(data, "test")
        assert commit_metadata_bytes(parsed.to_json()) == commit_metadata_bytes(parse_commit_metadata(data, "test"))
    assert typed.file_ids() == {"f1", "f2", "f3", "f4"} | ({"f0"} if replaced else set())
    assert typed.paths == {r["path"] for r in ROWS} | {"p=2/f2_0-1-1_100.parquet-cdc", "p=1/x-cdc"}


def test_unknown_keys_and_nulls_survive():
    stat = {"recordsStats": {"x": 1}, "fileId": "f", "path": None, "logVersion": None, "numWrites": 3}
    meta = {"version": 1, "partitionToWriteStats": {"": [stat], "q": []}, "extraMetadata": None,
            "operationType": None, "compacted": None}
    typed = CommitMetadata.from_json(meta)
    assert typed.write_stats[0].rest == {"recordsStats": {"x": 1}}
    assert not typed.write_stats[0].is_log_file and typed.write_stats[0].num_writes == 3
    assert list(typed.to_json()) == list(meta) and typed.to_json() == meta
    assert list(typed.write_stats[0].to_json()) == list(stat)
    assert CommitMetadata.from_json({}).empty and CommitMetadata.from_json({}).to_json() == {}
    assert WriteStat.from_json(stat).to_json() == stat


def _java_commit_files():
    zips = sorted((ROOT / "tests" / "fixtures" / "hudi-rs").glob("*.zip"))
    shared = Path("/work/shared/fixtures/hudi-tables")
    if shared.is_dir():
        zips += sorted(shared.glob("*.zip"))
    for z in zips:
        with zipfile.ZipFile(z) as archive:
            for name in archive.namelist():
                if "__MACOSX" in name or "/.hoodie/" not in name or "/metadata/" in name:
                    continue
                if name.endswith((".commit", ".deltacommit", ".replacecommit")):
                    yield f"{z.name}:{name}", archive.read(name)


def test_java_commits_round_trip():
    seen = 0
    for where, data in _java_commit_files():
        raw = parse_commit_metadata(data, where)
        typed = parse_commit(data, where)
        assert typed.to_json() == raw, where
        assert json.dumps(typed.to_json()) == json.dumps(raw), where   # same key order too
        seen += 1
    if seen == 0:
        pytest.skip("no Java Hudi test tables here")


def test_timeline_parses_a_commit_once_and_caches_the_typed_value(tmp_path):
    from pyhudi.storage import Storage
    from pyhudi.timeline import METADATA_CACHE, Timeline, create_requested, transition_to_completed, \
        transition_to_inflight

    storage = Storage(str(tmp_path))
    inflight = transition_to_inflight(storage, create_requested(storage, "20240101000000000", "commit"))
    written = CommitMetadata("UPSERT", tuple(write_stat(r) for r in ROWS), {"schema": "{}"})
    transition_to_completed(storage, inflight, written.to_json())
    reads = METADATA_CACHE.reads
    first = Timeline.load(storage).read_commit(Timeline.load(storage).instants[0])
    again = Timeline.load(storage)
    assert again.read_commit(again.instants[0]) is first            # one parse per process
    assert METADATA_CACHE.reads - reads == 1
    assert first.to_json() == written.to_json()   # (the stats come back grouped by partition)
    assert again.read_metadata(again.instants[0]) == written.to_json()
    assert first.stats_by_partition()["p=1"][0].file_id == "f1" and first.schema == "{}"


class _Timeline:
    """The two calls average_record_size makes, over commits given as JSON."""

    def __init__(self, *commits):
        self.commits = [CommitMetadata.from_json(c) for c in commits]

    def completed_writes(self):
        return list(range(len(self.commits)))

    def read_commit(self, instant):
        return self.commits[instant]


@pytest.mark.parametrize("layout", [1, 2])
def test_average_record_size_counts_base_files_in_both_layouts(layout):
    """Layout 2's Avro records name every field, so a base file's stat holds logVersion null: it is still a base
    file's stat (counted), and a log file's stat is not, in either layout."""
    from pyhudi import config as C
    from pyhudi.writer.planning import average_record_size

    base = {"fileId": "f1", "path": "p/f1_0-1-2_001.parquet", "partitionPath": "p", "numWrites": 1000,
            "totalWriteBytes": 500_000, **({"logVersion": None} if layout == 2 else {})}
    log = {"fileId": "f2", "path": "p/.f2_001.log.1_0-1-2", "partitionPath": "p", "numWrites": 10,
           "totalWriteBytes": 900_000, "logVersion": 1}
    commit = {"partitionToWriteStats": {"p": [base, log]}, "operationType": "UPSERT"}
    wc = C.WriteConfig.from_options({"hoodie.parquet.small.file.limit": "1000"})
    assert average_record_size(_Timeline(commit), wc) == 500
