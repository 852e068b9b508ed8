"""A corrupt log block is the torn tail of a failed write, skipped as Hudi's scanner does, unless a completed
commit wrote those bytes: then the reader refuses (committed records would be silently lost)."""

from __future__ import annotations

import warnings

import pyarrow.fs as pafs
import pytest

from pyhudi.errors import CorruptFileError
from pyhudi.file_group.log_file import CorruptLogBlockWarning, delete_block, DeleteRecord, write_log_file
from pyhudi.file_group.model import LogFile
from pyhudi.reader.file_slice_reader import scan_log_blocks
from pyhudi.storage import Storage

T1 = "20240101000000000"
NAME = f".f1-0_{T1}.log.1_0-1-1"


@pytest.fixture()
def log(tmp_path):
    storage = Storage(str(tmp_path))
    size = write_log_file(pafs.LocalFileSystem(), storage.full(NAME),
                          [delete_block([DeleteRecord("k1", "")], T1, None, None)])
    with open(storage.full(NAME), "ab") as out:     # a failed writer's torn append
        out.write(b"#HUDI#\x00\x00\x00\x00\x00\x00\x10\x00partial")
    return storage, LogFile(NAME, "f1-0", T1, 1, "0-1-1", size + 21), size


def test_torn_tail_after_the_committed_bytes_is_skipped(log):
    storage, log_file, committed = log
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        blocks = scan_log_blocks(storage, [log_file], {T1}, committed_extents={NAME: [(0, committed)]})
    assert [b.block.delete_keys[0].record_key for b in blocks] == ["k1"]
    assert any(issubclass(w.category, CorruptLogBlockWarning) for w in caught)


def test_corrupt_bytes_inside_a_committed_range_raise(log):
    storage, log_file, committed = log
    with pytest.raises(CorruptFileError, match=f"{NAME}.*completed commit"):
        scan_log_blocks(storage, [log_file], {T1}, committed_extents={NAME: [(0, committed + 21)]})
