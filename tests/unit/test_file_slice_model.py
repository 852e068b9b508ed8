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
