"""CREATE OR REPLACE TABLE over a Hudi table in the same folder: swap in a table built and committed in a staging
folder, so that readers never see a mix of the two tables.

A reader cannot be shown the new timeline while the old data files are still there: their instants are older than
the new timeline's first one, so Hudi readers (pyhudi, hudi-rs, Java Hudi) take them for archived commits and would
read both tables. Hence:

- Local folder holding only the table's own files (the managed-table case): the folder is renamed aside and the
  staging folder renamed into its place. Remaining window: between the two renames the path does not exist (two
  metadata operations); readers fail there, never read wrong rows.
- Otherwise (other owners' files in the folder, or an object store without folder renames): the staged data files
  move in first (their instant is later than the old timeline's, so they stay invisible), then the old `.hoodie`
  is renamed aside, the old table's own files are deleted, and the staged `.hoodie` moves in. Remaining window:
  while the old files are deleted the folder has no `.hoodie`; readers get "not a Hudi table" for that time
  (proportional to the number of old files), never a mix. Other owners' files are never touched.

A crash inside the window leaves the old timeline as `.hoodie.pyhudi-replaced-*` (or the old folder as
`<folder>.pyhudi-replaced-*`) beside the new files, for a person to restore.
"""

from __future__ import annotations

import uuid

from pyarrow import fs as pafs

from pyhudi.file_group.naming import PARTITION_METAFILE
from pyhudi.client.drop import is_table_file
from pyhudi.storage import Storage
from pyhudi.timeline import METAFOLDER


def _own_files(storage: Storage) -> list[str]:
    """Relative paths of the table's own files outside `.hoodie`."""
    base = storage.full("").rstrip("/")
    selector = pafs.FileSelector(base, allow_not_found=True, recursive=True)
    out = []
    for info in storage.fs.get_file_info(selector):
        relative = info.path[len(base) + 1:]
        if info.type == pafs.FileType.File and not relative.startswith(METAFOLDER + "/") and is_table_file(relative):
            out.append(relative)
    return out


def _only_table_files(storage: Storage) -> bool:
    base = storage.full("").rstrip("/")
    selector = pafs.FileSelector(base, allow_not_found=True, recursive=True)
    return all(info.type != pafs.FileType.File or is_table_file(info.path[len(base) + 1:])
               for info in storage.fs.get_file_info(selector))


def swap_in(staging: str, target: str) -> None:
    """Replace the Hudi table at `target` by the one committed at `staging` (which is gone afterwards)."""
    source, table = Storage(staging), Storage(target)
    if table.is_local and _only_table_files(table):
        retired = f"{table.base_path.rstrip('/')}.pyhudi-replaced-{uuid.uuid4().hex[:12]}"
        table.fs.move(table.base_path, retired)
        table.fs.move(source.base_path, table.base_path)
        Storage(retired).delete_dir("")
        return
    old_files = set(_own_files(table))
    for relative in _own_files(source):
        if relative.rsplit("/", 1)[-1].startswith(PARTITION_METAFILE) and relative in old_files:
            old_files.discard(relative)          # the partition is in both tables: its metadata file stays
            continue
        parent = relative.rsplit("/", 1)[0] if "/" in relative else ""
        table.makedirs(parent)
        source.fs.move(source.full(relative), table.full(relative))
    retired = f"{METAFOLDER}.pyhudi-replaced-{uuid.uuid4().hex[:12]}"
    table.fs.move(table.full(METAFOLDER), table.full(retired))
    for relative in sorted(old_files):
        table.delete_file(relative)
    table.fs.move(source.full(METAFOLDER), table.full(METAFOLDER))
    for relative in sorted(old_files, key=lambda p: p.count("/"), reverse=True):
        if "/" in relative:
            table.delete_empty_dirs(relative.rsplit("/", 1)[0])
    table.delete_dir(retired)
    source.delete_dir("")
