"""A Hudi table on storage: its properties (`.hoodie/hoodie.properties`), timeline and file-system view.

A process keeps what it learned about a table warm between actions (Hudi's timeline server keeps such a view):
hoodie.properties is parsed again only when the file changed (size, mtime), commit metadata is read once per
instant file (timeline.METADATA_CACHE), and the table's file listing is brought up to date from the instants
completed since the last look, listing only the partitions they touched (table/listing.py). Every
`timeline()` still lists `.hoodie/`, so what other writers did is always seen.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from datetime import datetime, timezone
from typing import Any, Mapping

import pyarrow.fs as pafs

from pyhudi import config as C
from pyhudi.errors import NotAHudiTableError, UnsupportedTableVersionError
from pyhudi.file_group.naming import PARTITION_METAFILE
from pyhudi.storage import Storage
from pyhudi.timeline import METAFOLDER, Timeline, has_archived_instants, layout_for
from pyhudi.timeline.commit_metadata import FileStamp

from pyhudi.table.properties import (COPY_ON_WRITE, MERGE_ON_READ, PROPERTIES_BACKUP,  # noqa: F401 (re-exports)
                                     PROPERTIES_FILE, READABLE_TABLE_VERSIONS, TableProperties, dump_properties,
                                     WRITABLE_TABLE_VERSIONS, HUDI_1X_TABLE_VERSIONS, check_writable_version, load_properties, read_table_properties,
                                     table_checksum, update_table_properties)


# --- the table --------------------------------------------------------------------------------------------
def check_table_folder(storage: Storage) -> None:
    """A table path must be a folder (or not exist yet): a regular file there is a wrong path, not a table."""
    if storage.fs.get_file_info(storage.full("")).type == pafs.FileType.File:
        raise NotAHudiTableError(f"{storage.base_uri} is a file, not a Hudi table folder; check the path (a table "
                                 "path names the folder that holds .hoodie/)")


def check_readable(props: TableProperties, where: str) -> None:
    """A table version pyhudi reads, with the timeline layout that version has."""
    version = props.version
    if version not in READABLE_TABLE_VERSIONS:
        raise UnsupportedTableVersionError(
            f"table {props.name or where} has hoodie.table.version={version or '?'}; pyhudi reads table versions "
            f"{', '.join(READABLE_TABLE_VERSIONS)} and writes {', '.join(WRITABLE_TABLE_VERSIONS)}. Read it with "
            "the Hudi release that wrote it, or convert it with Hudi's `upgrade`/`downgrade` CLI commands.")
    base_format = (props.get(C.TABLE_BASE_FILE_FORMAT.key) or "PARQUET").strip().upper()
    if base_format != "PARQUET":
        raise UnsupportedTableVersionError(
            f"table {props.name or where} has hoodie.table.base.file.format={base_format}; pyhudi reads and writes "
            "parquet base files only. Read it with the Hudi release that wrote it (or hudi-rs), or rewrite it with "
            "hoodie.table.base.file.format=PARQUET.")
    layout = props.timeline_layout_version
    if (layout == "2") != (version in ("8", "9")):
        raise UnsupportedTableVersionError(
            f"table {props.name or where} has hoodie.table.version={version} with hoodie.timeline.layout.version="
            f"{layout}, a combination Hudi does not write (versions 5 and 6 have layout 1, versions 8 and 9 layout "
            "2); its hoodie.properties was edited or damaged: restore it from .hoodie/hoodie.properties.backup or "
            "a copy.")


# --- the table --------------------------------------------------------------------------------------------
class HudiTable:
    """An existing Hudi table. `HudiTable.load(path)` fails clearly on anything that is not one."""

    def __init__(self, storage: Storage, properties: TableProperties):
        self.storage = storage
        self.properties = properties

    @classmethod
    def load(cls, path: str | Storage) -> "HudiTable":
        storage = path if isinstance(path, Storage) else Storage(str(path))
        info = storage.fs.get_file_info(storage.full(PROPERTIES_FILE))
        if info.type != pafs.FileType.File and storage.exists(PROPERTIES_BACKUP):   # an update under way
            info = storage.fs.get_file_info(storage.full(PROPERTIES_BACKUP))
        if info.type != pafs.FileType.File:
            check_table_folder(storage)
            raise NotAHudiTableError(
                f"{storage.base_uri} is not a Hudi table: {PROPERTIES_FILE} is missing. Write to it with "
                "pyhudi.write(...) (or CREATE TABLE ... USING hudi) first, or check the path.")
        props = _PROPERTIES_CACHE.get(storage, (info.size, info.mtime_ns))
        check_readable(props, storage.base_uri)
        return cls(storage, props)

    def check_writable(self, action: str = "write to") -> None:
        """Refuse to change a table whose format pyhudi reads but does not write, before anything is written."""
        check_writable_version(self.properties.values, self.storage.base_uri, action)

    @property
    def writes_log_per_commit(self) -> bool:
        """Table version 8+ (Hudi 1.x): each delta commit writes new log files named by its instant time."""
        return self.properties.version in HUDI_1X_TABLE_VERSIONS

    @staticmethod
    def exists(path: str) -> bool:
        storage = Storage(str(path))
        if storage.exists(PROPERTIES_FILE) or storage.exists(PROPERTIES_BACKUP):
            return True
        check_table_folder(storage)
        return False

    @classmethod
    def create(cls, path: str, values: Mapping[str, str]) -> "HudiTable":
        storage = Storage(str(path))
        check_table_folder(storage)
        storage.check_conditional_writes(PROPERTIES_FILE)   # on an object store: before anything is written
        props = dict(values)
        for prop in (C.TABLE_VERSION, C.TIMELINE_LAYOUT_VERSION, C.ARCHIVELOG_FOLDER, C.TABLE_PROP_TYPE,
                     C.DATABASE_NAME):   # Hudi's defaults of a new table
            props.setdefault(prop.key, prop.default)
        props[C.TABLE_CHECKSUM.key] = str(table_checksum(props.get(C.DATABASE_NAME.key), props[C.TABLE_NAME.key]))
        layout = layout_for(props.get(C.TIMELINE_LAYOUT_VERSION.key), props.get(C.TIMELINE_PATH.key),
                            props.get(C.TIMELINE_HISTORY_PATH.key))
        for folder in (layout.folder, layout.history_folder) if layout.version == 2 else ():
            storage.makedirs(folder)
        storage.makedirs(f"{METAFOLDER}/archived")
        storage.makedirs(f"{METAFOLDER}/.temp")
        storage.makedirs(f"{METAFOLDER}/.aux")
        storage.write_bytes(PROPERTIES_FILE, dump_properties(props))
        return cls(storage, TableProperties(props))

    @property
    def name(self) -> str:
        return self.properties.name or self.storage.base_path.rsplit("/", 1)[-1]

    def timeline(self) -> Timeline:
        return Timeline.load(self.storage)

    def view(self, as_of: str | None = None, timeline: Timeline | None = None) -> "FileSystemView":
        return FileSystemView(self, timeline or self.timeline(), as_of)

    def has_archived_instants(self) -> bool:
        """The archiver moved instants out of the active timeline (into hoodie.archivelog.folder; for timeline
        layout 2 into the LSM timeline of hoodie.timeline.history.path)."""
        if self.properties.timeline_layout_version == "2":
            layout = layout_for("2", self.properties.get(C.TIMELINE_PATH.key),
                                self.properties.get(C.TIMELINE_HISTORY_PATH.key))
            return any(not info.base_name.startswith(".") for info in self.storage.list_files(layout.history_folder))
        folder = self.properties.get(C.ARCHIVELOG_FOLDER.key) or C.ARCHIVELOG_FOLDER.default
        return has_archived_instants(self.storage, folder)

    def latest_avro_schema(self, timeline: Timeline | None = None) -> dict[str, Any] | None:
        """Writer schema (Avro JSON, no meta columns) of the latest completed write, else the create schema."""
        timeline = timeline or self.timeline()
        for instant in reversed(timeline.completed_writes()):
            schema = timeline.read_commit(instant).schema
            if schema:
                return json.loads(schema)
        create = self.properties.get(C.TABLE_CREATE_SCHEMA.key)
        return json.loads(create) if create else None


class _PropertiesCache:
    """Parsed hoodie.properties per table, reused while the file's (size, mtime) stay the same."""

    def __init__(self, limit: int = 256):
        self.limit = limit
        self._entries: OrderedDict[str, tuple[FileStamp, dict[str, str]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, storage: Storage, stamp: FileStamp) -> TableProperties:
        with self._lock:
            hit = self._entries.get(storage.base_uri)
        if hit is None or hit[0] != stamp or stamp[1] is None:
            values = read_table_properties(storage).values
            hit = (stamp, values)
            with self._lock:
                self._entries[storage.base_uri] = hit
                while len(self._entries) > self.limit:
                    self._entries.popitem(last=False)
        return TableProperties(dict(hit[1]))    # a copy: callers may change their TableProperties


_PROPERTIES_CACHE = _PropertiesCache()


def write_partition_metadata(storage: Storage, partition_path: str, instant_time: str) -> None:
    """`.hoodie_partition_metadata` marks a folder as a partition (written once, by the first writer)."""
    relative = f"{partition_path}/{PARTITION_METAFILE}" if partition_path else PARTITION_METAFILE
    if storage.exists(relative):
        return
    depth = len([p for p in partition_path.split("/") if p]) if partition_path else 0
    text = (f"#partition metadata\n#{datetime.now(timezone.utc).strftime('%a %b %d %H:%M:%S UTC %Y')}\n"
            f"commitTime={instant_time}\npartitionDepth={depth}\n")
    storage.create_if_absent(relative, text.encode("utf-8"))




from pyhudi.table.view import FileSystemView  # noqa: E402,F401 (the view needs HudiTable only for typing)
