"""The commit protocol without Spark: reconcile deletes exactly the marked files the stats do not list, and
abort undoes an unfinished instant but never a completed one."""

from __future__ import annotations

from pyhudi.commit.instant_commit import InstantCommit
from pyhudi.commit.markers import create_marker, marked_files
from pyhudi.commit.metadata import CommitMetadata, WriteStat
from pyhudi.storage import Storage
from pyhudi.timeline import COMPACTION, DELTA_COMMIT, Instant, State


def _stat(path):
    return WriteStat(path=path, partition_path=path.split("/")[0], file_id=path.split("/")[1].split("_")[0])


def _written(storage, commit, *paths):
    for path in paths:
        create_marker(storage, commit.instant_time, path, "CREATE")
        storage.write_bytes(path, b"data")


def test_complete_reconciles_and_publishes(tmp_path):
    storage = Storage(str(tmp_path))
    commit = InstantCommit.begin(storage, "20250101000000000", DELTA_COMMIT)
    commit.start(CommitMetadata("UPSERT"))
    kept, retried = "p/f1_0-1-1_20250101000000000.parquet", "p/f1_0-1-2_20250101000000000.parquet"
    _written(storage, commit, kept, retried)
    (tmp_path / "p" / "other.parquet").write_bytes(b"not ours")
    metadata = CommitMetadata("UPSERT", (_stat(kept),))
    assert commit.reconcile(metadata) == [retried]
    commit.complete(metadata)
    commit.finish()
    assert (tmp_path / kept).exists() and not (tmp_path / retried).exists()
    assert (tmp_path / "p" / "other.parquet").exists()            # unmarked files are not the commit's
    assert (tmp_path / ".hoodie" / "20250101000000000.deltacommit").exists()
    assert marked_files(storage, commit.instant_time) == []


def test_abort_never_undoes_a_completed_instant(tmp_path):
    storage = Storage(str(tmp_path))
    commit = InstantCommit.begin(storage, "20250101000000000", DELTA_COMMIT)
    commit.start()
    path = "p/f1_0-1-1_20250101000000000.parquet"
    _written(storage, commit, path)
    commit.complete(CommitMetadata("UPSERT", (_stat(path),)))
    # a failure after the commit (lock release, heartbeat, post-commit service) reaches the abort path
    again = InstantCommit(storage, commit.requested)
    assert again.abort() is False
    assert (tmp_path / path).exists()
    assert (tmp_path / ".hoodie" / "20250101000000000.deltacommit").exists()


def test_abort_of_an_unfinished_instant(tmp_path):
    storage = Storage(str(tmp_path))
    commit = InstantCommit.begin(storage, "20250101000000000", DELTA_COMMIT)
    commit.start()
    path = "p/f1_0-1-1_20250101000000000.parquet"
    _written(storage, commit, path)
    assert commit.abort() is True
    assert not (tmp_path / path).exists()
    assert not list((tmp_path / ".hoodie").glob("20250101000000000*"))

    plan = InstantCommit(storage, Instant("20250102000000000", COMPACTION, State.REQUESTED), keep_plan=True)
    storage.write_bytes(".hoodie/20250102000000000.compaction.requested", b"plan")
    plan.start()
    assert plan.abort() is True      # back to the requested plan
    assert [p.name for p in (tmp_path / ".hoodie").glob("20250102000000000*")] == ["20250102000000000.compaction.requested"]


def test_timeline_json_is_indented_down_to_one_line_per_write_stat_and_reads_back_equal():
    """commit_metadata_bytes indents the metadata, the partitions and their stat lists, and writes each stat
    (and anything deeper) on one line with the C encoder; the text parses back to exactly the metadata."""
    import json

    from pyhudi.timeline import commit_metadata_bytes
    stats = {f"p=é{i}": [{"fileId": f"f{i}-{j}", "numWrites": j, "cdcStats": None, "nested": {"a": [1, "x"]}}
                         for j in range(3)] for i in range(2)}
    metadata = {"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {"schema": '{"type": "x"}'},
                "empty": {}, "none": [], "operationType": "UPSERT", "weird": {"a\nb": [1.5, None, True]}}
    text = commit_metadata_bytes(metadata).decode("utf-8")
    assert json.loads(text) == metadata
    lines = text.splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    stat_lines = [line for line in lines if '"fileId"' in line]
    assert len(stat_lines) == 6 and all(json.loads(line.strip().rstrip(",")) in stats[f"p=é{i}"]
                                        for i in range(2) for line in stat_lines if f'"f{i}-' in line)
