"""TRUNCATE TABLE t (no PARTITION clause) as Hudi 0.14/0.15's TruncateHoodieTableCommand runs it: the table's data
and timeline are deleted and the table is initialised again from its own hoodie.properties, so it starts over
with no instants (and later writes start a new history).

Two differences from Hudi, both for safety: only the table's own files go (Hudi deletes the whole folder; a
LOCATION may hold other people's files, see pyhudi.client.drop), and the order keeps the table readable if
the process dies half-way. The completed instants go first, newest first, so every moment in between shows an
earlier snapshot or an empty table (never a commit whose files are gone); then the rest of `.hoodie` (plans,
archive, markers, heartbeats) except hoodie.properties; then the data files; then hoodie.properties is written
again (in the table's own version and timeline layout; a version 8/9 table's metadata table is dropped first and
rebuilt by its next write). All of it runs under the table lock (hoodie.write.lock.*), which is kept. The create schema becomes the table's latest writer schema, so a read of the empty table keeps columns
added since it was created.
"""

from __future__ import annotations

import json
from typing import Mapping

from pyarrow import fs as pafs

from pyhudi import config as C
from pyhudi.client.drop import is_table_file
from pyhudi.transaction.lock import FileSystemLock, table_lock
from pyhudi.storage import Storage
from pyhudi.timeline import METAFOLDER, instant_file

_PROPERTIES = f"{METAFOLDER}/hoodie.properties"


def truncate_table(location: str, options: Mapping[str, str] | None = None) -> None:
    """Delete every instant and data file of the Hudi table at `location` and re-initialise it, holding the table
    lock (hoodie.write.lock.*) so that no commit or table service publishes in between."""
    from pyhudi.table import HudiTable
    from pyhudi.table.metadata_table import drop_metadata_table

    table = HudiTable.load(location)
    table.check_writable("truncate")
    with table_lock(table.storage, options) as lock:
        # first: no reader may list files from it while the instants go
        if drop_metadata_table(table.storage, "as TRUNCATE starts the table over (a version 8/9 table's next write "
                                              "builds it again)"):
            table = HudiTable.load(location)     # its hoodie.properties changed
        values = dict(table.properties.values)
        schema = table.latest_avro_schema()
        if schema is not None:
            values[C.TABLE_CREATE_SCHEMA.key] = json.dumps(schema, separators=(",", ":"))
        storage = table.storage
        for instant in reversed(table.timeline().instants):
            if instant.is_completed:   # in the table's timeline layout (Hudi 1.x: .hoodie/timeline/<t>_<c>.<action>)
                storage.delete_file(instant_file(storage, instant))
        _delete_metadata(storage, lock)
        _delete_data_files(storage)
        HudiTable.create(location, values)


def _entries(storage: Storage, relative: str, recursive: bool = False) -> list[pafs.FileInfo]:
    selector = pafs.FileSelector(storage.full(relative), allow_not_found=True, recursive=recursive)
    return storage.fs.get_file_info(selector)


def _delete_metadata(storage: Storage, lock: FileSystemLock) -> None:
    """Everything under .hoodie except hoodie.properties and the held lock (pending instants, plans, archive,
    markers ...)."""
    held = lock.relative if lock.storage.base_uri == storage.base_uri else None
    for info in _entries(storage, METAFOLDER):
        relative = f"{METAFOLDER}/{info.base_name}"
        if relative in (_PROPERTIES, held):
            continue
        if info.type == pafs.FileType.Directory:
            storage.delete_dir(relative)
        else:
            storage.delete_file(relative)


def _delete_data_files(storage: Storage) -> None:
    """Base and log files and partition metadata, then the partition folders they leave empty."""
    base = storage.full("").rstrip("/")
    folders = []
    for info in _entries(storage, "", recursive=True):
        relative = info.path[len(base) + 1:]
        if relative == METAFOLDER or relative.startswith(METAFOLDER + "/"):
            continue
        if info.type == pafs.FileType.Directory:
            folders.append(relative)
        elif is_table_file(relative):
            storage.delete_file(relative)
    for relative in sorted(folders, key=lambda p: p.count("/"), reverse=True):
        storage.delete_empty_dirs(relative)
