"""Markers in Hudi's two layouts: pyhudi writes the timeline-server-based one on local storage (MARKERS.type and
MARKERS<n> files of one marker per line) and reads both, as Hudi's MarkerUtils does."""

from __future__ import annotations

import threading

import pytest

from pyhudi.commit import markers
from pyhudi.commit.markers import create_marker, marked_files
from pyhudi.storage import Storage

T = "20250101000000000"


def _hudi_reads(folder) -> dict[str, list[str]]:
    """The marker files as Hudi's readTimelineServerBasedMarkersFromFileSystem picks them: every file whose name
    starts with MARKERS except MARKERS.type; each holds one marker per line."""
    return {p.name: p.read_text().splitlines() for p in folder.iterdir()
            if p.name.startswith("MARKERS") and p.name != "MARKERS.type"}


def test_local_markers_are_lines_of_a_markers_file_hudi_reads(tmp_path):
    storage = Storage(str(tmp_path))
    written = [f"2024/01/0{i}/f{i}_0-1-2_{T}.parquet" for i in range(3)] + [f"2024/01/01/.f9_{T}.log.1_0-1-2"]
    for path, io in zip(written, ("CREATE", "MERGE", "CREATE", "APPEND")):
        create_marker(storage, T, path, io)
    folder = tmp_path / ".hoodie" / ".temp" / T
    assert (folder / "MARKERS.type").read_text() == "TIMELINE_SERVER_BASED"
    assert sorted(p.name for p in folder.iterdir()) == ["MARKERS.type", f"MARKERS{markers.DRIVER_MARKERS_INDEX}"]
    assert _hudi_reads(folder) == {f"MARKERS{markers.DRIVER_MARKERS_INDEX}": [
        f"{written[0]}.marker.CREATE", f"{written[1]}.marker.MERGE", f"{written[2]}.marker.CREATE",
        f"{written[3]}.marker.APPEND"]}
    assert marked_files(storage, T) == written


def test_direct_markers_and_both_layouts_together_are_read(tmp_path):
    storage = Storage(str(tmp_path))
    folder = tmp_path / ".hoodie" / ".temp" / T
    direct = folder / "p1" / f"a_1-2-3_{T}.parquet.marker.CREATE"    # as Hudi's DIRECT markers lay them out
    direct.parent.mkdir(parents=True)
    direct.write_bytes(b"")
    assert marked_files(storage, T) == [f"p1/a_1-2-3_{T}.parquet"]
    (folder / "MARKERS0").write_text(f"p2/b_0-1-1_{T}.parquet.marker.MERGE\np1/a_1-2-3_{T}.parquet.marker.CREATE\n")
    (folder / "MARKERS3").write_text(f"p2/.c_{T}.log.1_0-1-1.marker.APPEND\np2/d_0-1-1_{T}.parq")   # cut short
    assert sorted(marked_files(storage, T)) == sorted([f"p1/a_1-2-3_{T}.parquet", f"p2/b_0-1-1_{T}.parquet",
                                                       f"p2/.c_{T}.log.1_0-1-1"])


def test_markers_of_concurrent_threads_are_whole_lines(tmp_path):
    storage = Storage(str(tmp_path))
    names = [[f"p{t}/f{i}_{t}-1-1_{T}.parquet" for i in range(100)] for t in range(4)]
    threads = [threading.Thread(target=lambda ns=ns: [create_marker(storage, T, n, "CREATE") for n in ns])
               for ns in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(marked_files(storage, T)) == sorted(n for ns in names for n in ns)


def test_an_instant_marked_again_after_its_folder_went_gets_its_type_file_again(tmp_path):
    """A compaction re-run keeps its instant time: its first attempt's marker folder is deleted on failure."""
    storage = Storage(str(tmp_path))
    create_marker(storage, T, f"p/a_0-1-1_{T}.parquet", "MERGE")
    markers.delete_markers(storage, T)
    create_marker(storage, T, f"p/a_0-1-2_{T}.parquet", "MERGE")
    folder = tmp_path / ".hoodie" / ".temp" / T
    assert (folder / "MARKERS.type").read_text() == "TIMELINE_SERVER_BASED"
    assert marked_files(storage, T) == [f"p/a_0-1-2_{T}.parquet"]


def test_object_stores_get_direct_markers(tmp_path, monkeypatch):
    """No append on an object store: one empty file per marker, Hudi's DIRECT layout (no MARKERS.type)."""
    monkeypatch.setattr(Storage, "is_local", property(lambda self: False))
    storage = Storage(str(tmp_path))
    create_marker(storage, T, f"p/a_0-1-1_{T}.parquet", "CREATE")
    folder = tmp_path / ".hoodie" / ".temp" / T
    assert [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()] == \
        [f"p/a_0-1-1_{T}.parquet.marker.CREATE"]
    assert marked_files(storage, T) == [f"p/a_0-1-1_{T}.parquet"]


@pytest.mark.parametrize("io", ["CREATE", "MERGE", "APPEND"])
def test_every_io_type_reads_back(tmp_path, io):
    storage = Storage(str(tmp_path))
    create_marker(storage, T, "p/x", io)
    assert marked_files(storage, T) == ["p/x"]
