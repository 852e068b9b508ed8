"""A SQL table's folder: what CREATE TABLE ... LOCATION accepts (what DROP / TRUNCATE may delete is the client's:
pyhudi.client.drop).

A LOCATION may hold other things than the table (a shared bucket prefix, a user's folder), so a drop never
deletes the folder whole: only the Hudi table's own files go (its `.hoodie` folder, base and log files named as
Hudi names them, partition metadata files), then the folders those deletions leave empty.
"""

from __future__ import annotations

from pyarrow import fs as pafs

from pyhudi.errors import SqlError
from pyhudi.storage import Storage
from pyhudi.timeline import METAFOLDER


def check_new_location(location: str, table_name: str) -> None:
    """CREATE TABLE ... LOCATION: an empty string, a file, or a non-empty folder without a Hudi table is
    refused (a later DROP ... PURGE must never be able to take someone else's files with it)."""
    if not str(location).strip():
        raise SqlError(f"CREATE TABLE {table_name}: LOCATION '' is empty; give the table's folder, e.g. "
                       f"LOCATION '/data/{table_name}', or leave LOCATION out for a managed table")
    storage = Storage(str(location))
    info = storage.fs.get_file_info(storage.base_path)
    if info.type == pafs.FileType.NotFound:
        return
    if info.type != pafs.FileType.Directory:
        raise SqlError(f"CREATE TABLE {table_name}: LOCATION {location} is a file, not a folder; "
                       "give a new or empty folder (or one that holds a Hudi table)")
    if storage.exists(f"{METAFOLDER}/hoodie.properties"):
        return
    selector = pafs.FileSelector(storage.base_path, allow_not_found=True)
    entries = [e.base_name for e in storage.fs.get_file_info(selector)]
    if entries:
        shown = ", ".join(sorted(entries)[:5]) + (" ..." if len(entries) > 5 else "")
        raise SqlError(f"CREATE TABLE {table_name}: LOCATION {location} is not empty and holds no Hudi table "
                       f"({shown}); give a new or empty folder, or move those files away")
