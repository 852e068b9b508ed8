"""File slices (pyhudi/file_group/model.py): the sizes that compaction and clustering plans, the health report and
the show_fsview procedures all read from one place."""

from __future__ import annotations

from pyhudi.file_group.model import BaseFile, FileSlice, LogFile


def test_a_slice_counts_only_known_log_sizes():
    """A log file planned before its size is known (a compaction task's, -1) counts 0 bytes, as Hudi's
    FileSliceMetricUtils; the slice's total is its base file plus those bytes."""
    base = BaseFile("p/f1_0-1-1_001.parquet", "f1", "0-1-1", "001", 1000)
    logs = [LogFile("p/.f1_001.log.1_0-1-1", "f1", "001", 1, "0-1-1", 300),
            LogFile("p/.f1_001.log.2_0-1-1", "f1", "001", 2, "0-1-1", -1)]
    file_slice = FileSlice("p", "f1", "001", base, logs)
    assert file_slice.log_size == 300 and file_slice.total_size == 1300
    assert FileSlice("p", "f1", "001", None, []).log_size == 0


def test_log_files_merge_in_the_order_of_the_instant_in_their_names():
    """Hudi's HoodieLogFile comparator: instant, then version, then write token. A Hudi 1.x slice holds the log
    files of several delta commits, each named by its own instant; ordering them by write token alone once let an
    older upsert land after a newer delete (the settings model found it when it drew table version 8)."""
    def log(instant, version, token):
        return LogFile(f"p/.f1_{instant}.log.{version}_{token}", "f1", instant, version, token, 10)

    upsert, delete = log("20261129053946432", 1, "1-124-294"), log("20261129053947301", 1, "0-127-301")
    assert sorted([delete, upsert], key=LogFile.sort_key) == [upsert, delete]
    v6 = [log("001", 2, "0-1-1"), log("001", 1, "1-1-1"), log("001", 1, "0-1-1")]   # one slice's rolled-over logs
    assert [(f.version, f.write_token) for f in sorted(v6, key=LogFile.sort_key)] == [
        (1, "0-1-1"), (1, "1-1-1"), (2, "0-1-1")]
