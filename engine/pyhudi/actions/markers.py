"""Markers: before a task creates a data file of instant t, it creates `.hoodie/.temp/t/<relative path>.marker.<IO>`
(IO = CREATE, MERGE or APPEND), Hudi's direct marker layout. The markers name every file an instant's tasks may
have written, including those of failed, retried or speculative attempts, so a commit can reconcile its write
stats against them and an abort or rollback can delete exactly those files."""

from __future__ import annotations

import re

from pyhudi.storage import Storage
from pyhudi.timeline import TEMP_FOLDER

IO_TYPES = ("CREATE", "MERGE", "APPEND")
_SUFFIX = re.compile(r"\.marker\.(CREATE|MERGE|APPEND)$")


def marker_folder(instant_time: str) -> str:
    return f"{TEMP_FOLDER}/{instant_time}"


def create_marker(storage: Storage, instant_time: str, relative_path: str, io_type: str) -> None:
    """Announce the data file `relative_path` of `instant_time` (call before creating the file)."""
    storage.write_bytes(f"{marker_folder(instant_time)}/{relative_path}.marker.{io_type}", b"")


def marked_files(storage: Storage, instant_time: str) -> list[str]:
    """Data files (paths relative to the table) named by the markers of `instant_time`."""
    root = marker_folder(instant_time)
    prefix = storage.full(root) + "/"
    out = []
    for info in storage.list_files(root, recursive=True):
        name = info.path[len(prefix):]
        if _SUFFIX.search(name):
            out.append(_SUFFIX.sub("", name))
    return out


def delete_markers(storage: Storage, instant_time: str) -> None:
    storage.delete_dir(marker_folder(instant_time))
