"""Dropping a table's files (DROP TABLE of a managed table, DROP ... PURGE, CREATE OR REPLACE, TRUNCATE).

A table's folder may hold other things than the table (a shared bucket prefix, a user's folder), so a drop never
deletes the folder whole: only the Hudi table's own files go (its `.hoodie` folder, base and log files named as
Hudi names them, partition metadata files), then the folders those deletions leave empty.
"""

from __future__ import annotations

from pyarrow import fs as pafs

from pyhudi.cdc.logging import parse_cdc_log_name
from pyhudi.file_group.naming import PARTITION_METAFILE, parse_base_file_name, parse_log_file_name
from pyhudi.storage import Storage
from pyhudi.timeline import METAFOLDER


def is_table_file(relative: str) -> bool:
    """Whether a path (relative to the base) is one of a Hudi table's own files."""
    if relative == METAFOLDER or relative.startswith(METAFOLDER + "/"):
        return True
    name = relative.rsplit("/", 1)[-1]
    return name.startswith(PARTITION_METAFILE) or parse_base_file_name(name) is not None \
        or parse_log_file_name(name) is not None or parse_cdc_log_name(name) is not None


def delete_table_files(location: str) -> int:
    """Delete the Hudi table's own files under `location`, then the folders left empty (the base folder too
    when nothing else is in it). Returns how many files were deleted."""
    storage = Storage(str(location))
    if not storage.exists(""):
        return 0
    base = storage.base_path
    selector = pafs.FileSelector(base, allow_not_found=True, recursive=True)
    infos = storage.fs.get_file_info(selector)
    deleted = 0
    for info in infos:
        relative = info.path[len(base) + 1:]
        if info.type == pafs.FileType.File and is_table_file(relative):
            storage.delete_file(relative)
            deleted += 1
    storage.delete_dir(METAFOLDER)
    folders = sorted((i.path[len(base) + 1:] for i in infos if i.type == pafs.FileType.Directory),
                     key=lambda p: p.count("/"), reverse=True)
    for relative in folders + [""]:
        if not relative.startswith(METAFOLDER) and storage.exists(relative) and _is_empty(storage, relative):
            storage.delete_dir(relative)
    return deleted


def _is_empty(storage: Storage, relative: str) -> bool:
    selector = pafs.FileSelector(storage.full(relative), allow_not_found=True)
    return not storage.fs.get_file_info(selector)
