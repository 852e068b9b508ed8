"""Markers: before a task creates a data file of instant t, it names that file in the marker folder
`.hoodie/.temp/t` as `<relative path>.marker.<IO>` (IO = CREATE, MERGE or APPEND). The markers name every file an
instant's tasks may have written, including those of failed, retried or speculative attempts, so a commit can
reconcile its write stats against them and an abort or rollback can delete exactly those files.

Hudi has two layouts, and pyhudi reads both (a Hudi writer's failed instant may use either):
- direct: one empty file per marker, at `.hoodie/.temp/t/<relative path>.marker.<IO>`;
- timeline-server based (Hudi's default for Spark): `MARKERS.type` holds `TIMELINE_SERVER_BASED` and files
  `MARKERS<n>` hold one marker per line (Hudi's MarkerUtils reads every `MARKERS*` file but the type file).

On local storage pyhudi writes the second layout, one `MARKERS<n>` file per task attempt (n = Spark's task attempt
id), appended to line by line: a marker is then a short append to an existing file instead of a new file and its
folder (creating a file cost 0.2-0.8 ms of kernel time per marker here, ~15% of a merge-on-read task's time per
touched file group). Each line is written by one `write` call before the data file is created, as a direct marker
file would be. Object stores cannot append: there pyhudi writes direct markers.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable

from pyhudi.storage import Storage
from pyhudi.timeline import TEMP_FOLDER

IO_TYPES = ("CREATE", "MERGE", "APPEND")
MARKER_TYPE_FILE = "MARKERS.type"
TIMELINE_SERVER_BASED = "TIMELINE_SERVER_BASED"
# outside a Spark task (a restore names its planned files on the driver): a MARKERS<n> no task attempt id reaches
DRIVER_MARKERS_INDEX = 2_000_000_000
_SUFFIX = re.compile(r"\.marker\.(CREATE|MERGE|APPEND)$")
_MARKERS_FILE = re.compile(r"^MARKERS\d+$")


def marker_folder(instant_time: str) -> str:
    return f"{TEMP_FOLDER}/{instant_time}"


def create_marker(storage: Storage, instant_time: str, relative_path: str, io_type: str) -> None:
    """Announce the data file `relative_path` of `instant_time` (call before creating the file)."""
    marker = f"{relative_path}.marker.{io_type}"
    if not storage.is_local:
        storage.write_bytes(f"{marker_folder(instant_time)}/{marker}", b"")
        return
    folder = storage.full(marker_folder(instant_time))
    if not os.path.exists(f"{folder}/{MARKER_TYPE_FILE}"):   # before any marker line: Hudi reads MARKERS files
        # only where MARKERS.type says TIMELINE_SERVER_BASED (published whole; its temporary name starts with a dot,
        # not with MARKERS, which Hudi would read as markers)
        storage.create_if_absent(f"{marker_folder(instant_time)}/{MARKER_TYPE_FILE}",
                                 TIMELINE_SERVER_BASED.encode("ascii"), durable=False)
    line = (marker + "\n").encode("utf-8")
    path = f"{folder}/MARKERS{_markers_index()}"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        if os.write(fd, line) != len(line):
            raise OSError(f"short write of marker {marker!r} to {path}")
    finally:
        os.close(fd)


def _markers_index() -> int:
    """This task attempt's MARKERS file number: Spark's task attempt id, unique within the application."""
    from pyspark import TaskContext
    task = TaskContext.get()
    return task.taskAttemptId() if task is not None else DRIVER_MARKERS_INDEX


def marked_files(storage: Storage, instant_time: str) -> list[str]:
    """Data files (paths relative to the table) named by the markers of `instant_time`, in either layout."""
    root = marker_folder(instant_time)
    prefix = storage.full(root) + "/"
    out: dict[str, None] = {}
    for info in storage.list_files(root, recursive=True):
        name = info.path[len(prefix):]
        if _SUFFIX.search(name):
            out[_SUFFIX.sub("", name)] = None
        elif _MARKERS_FILE.match(name):
            for line in storage.read_bytes(f"{root}/{name}").decode("utf-8").splitlines():
                if _SUFFIX.search(line):   # a line cut short by a crash names no file we wrote
                    out[_SUFFIX.sub("", line)] = None
    return list(out)


def own_files(storage: Storage, instant_time: str, paths: Iterable[str]) -> list[str]:
    """Of `paths` (files `instant_time`'s markers name), those that are its own to delete: not a log file holding
    blocks of other instants. Two writers of one file slice can name the same new log file; the one whose create
    loses rolls over, but its marker still names the winner's file, which its reconcile or abort must leave alone.
    A log file that cannot be read is kept too (never deleted on a guess)."""
    from pyhudi.file_group.log_file import block_instants
    from pyhudi.file_group.naming import parse_log_file_name

    own = []
    for path in paths:
        if parse_log_file_name(path.rsplit("/", 1)[-1]) and storage.exists(path):
            try:
                instants = block_instants(storage.fs, storage.full(path))
            except Exception as error:   # noqa: BLE001 - kept, and said why
                warnings.warn(f"the log file {storage.full(path)} that {instant_time}'s markers name could not be "
                              f"read ({error}); it is left in place", stacklevel=2)
                continue
            if instants - {instant_time}:
                continue
        own.append(path)
    return own


def delete_markers(storage: Storage, instant_time: str) -> None:
    storage.delete_dir(marker_folder(instant_time))
