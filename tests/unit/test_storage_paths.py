"""Storage keeps every path inside the table: `full` refuses escapes, `inside` checks paths read from timeline
files, and a relative base path is resolved once (on the driver) to an absolute one."""

from __future__ import annotations

import os
import pickle

import pytest

from pyhudi.errors import CorruptFileError
from pyhudi.storage import Storage


def test_relative_base_path_is_resolved_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    storage = Storage("tbl")
    assert storage.base_uri == str(tmp_path / "tbl")
    monkeypatch.chdir("/")           # an executor's working directory differs from the driver's
    copy = pickle.loads(pickle.dumps(storage))
    assert copy.base_path == str(tmp_path / "tbl")
    assert copy.uri("a/f.parquet") == f"file://{tmp_path}/tbl/a/f.parquet"


def test_full_refuses_paths_outside_the_base(tmp_path):
    storage = Storage(str(tmp_path / "tbl"))
    assert storage.full("a/b/f.parquet") == f"{tmp_path}/tbl/a/b/f.parquet"
    for bad in ("../victim", "a/../../victim", "/etc/passwd", ".."):
        with pytest.raises(CorruptFileError, match="not inside the table base path"):
            storage.full(bad)


def test_inside_names_the_source_file(tmp_path):
    storage = Storage(str(tmp_path / "tbl"))
    base = storage.base_path
    assert storage.inside(f"file://{base}/p/f.parquet", "plan") == "p/f.parquet"
    assert storage.inside(f"file:{base}/p/f.parquet", "plan") == "p/f.parquet"
    assert storage.inside(f"{base}/p/q/f.parquet", "plan") == "p/q/f.parquet"
    assert storage.inside("p/f.parquet", "plan") == "p/f.parquet"
    assert storage.inside("", "plan", allow_base=True) == ""
    for bad in ("../victim", f"{base}/../victim", f"file://{base}/p/../../victim", "/tmp/elsewhere/f.parquet",
                f"{base}x/f.parquet", "s3://bucket/f.parquet", "", "p/./../../x"):
        with pytest.raises(CorruptFileError) as raised:
            storage.inside(bad, ".hoodie/001.clean.requested")
        assert ".hoodie/001.clean.requested" in str(raised.value) and repr(bad) in str(raised.value)


def test_delete_empty_dirs_stops_at_a_non_empty_folder(tmp_path):
    storage = Storage(str(tmp_path / "tbl"))
    os.makedirs(tmp_path / "tbl" / "a" / "b" / "c")
    (tmp_path / "tbl" / "a" / "keep").write_text("x")
    storage.delete_empty_dirs("a/b/c")
    assert not (tmp_path / "tbl" / "a" / "b").exists()
    assert (tmp_path / "tbl" / "a" / "keep").exists()
    assert (tmp_path / "tbl").exists()
