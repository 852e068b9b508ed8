"""A Hudi table on storage: its properties (`.hoodie/hoodie.properties`), timeline and file-system view.

The file-system view answers "which files make up the table as of instant T": it lists the partitions once,
keeps base files written by completed write instants at or before T, groups them into file groups and slices,
and drops file groups replaced by a completed replacecommit.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from typing import Iterable, Mapping

import pyarrow.fs as pafs

from pyhudi.errors import CorruptFileError, NotAHudiTableError, UnsupportedTableVersionError
from pyhudi.file_group.model import BaseFile, FileGroup, FileSlice, LogFile
from pyhudi.file_group.naming import (PARTITION_METAFILE, parse_base_file_name, parse_log_file_name,
                                      partition_of)
from pyhudi.storage import Storage
from pyhudi.timeline import COMPACTION, METAFOLDER, REPLACE_COMMIT, WRITE_ACTIONS, Timeline

PROPERTIES_FILE = f"{METAFOLDER}/hoodie.properties"
SUPPORTED_TABLE_VERSIONS = ("5", "6")

COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"


# --- java.util.Properties text format ---------------------------------------------------------------------
def _escape(text: str, is_key: bool) -> str:
    out = []
    for index, char in enumerate(text):
        if char in "\\:=#!" or (char == " " and (is_key or index == 0)):
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) > 0xFFFF:  # Java strings are UTF-16: escape both surrogates
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        elif ord(char) > 126 or ord(char) < 32:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


def dump_properties(props: Mapping[str, str], comment: str | None = None) -> bytes:
    now = datetime.now(timezone.utc)
    lines = [f"#{comment}" if comment else "#Properties saved on " + now.isoformat().replace("+00:00", "Z"),
             "#" + now.strftime("%a %b %d %H:%M:%S UTC %Y")]
    lines += [f"{_escape(k, True)}={_escape(str(v), False)}" for k, v in sorted(props.items())]
    return ("\n".join(lines) + "\n").encode("latin-1", errors="backslashreplace")


def load_properties(text: str) -> dict[str, str]:
    """Parse java.util.Properties text (comments, continuations, escapes, `=`/`:` separators)."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip() if not pending else raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        backslashes = len(line) - len(line.rstrip("\\"))
        if backslashes % 2 == 1:
            pending += line[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    props = {}
    for line in logical:
        key, value = _split_property(line)
        props[key] = value
    return props


def _split_property(line: str) -> tuple[str, str]:
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=: \t":
            break
        index += 1
    key = line[:index]
    rest = line[index:].lstrip(" \t")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t")
    return _unescape(key), _unescape(rest)


def _unescape(text: str) -> str:
    out = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            nxt = text[index + 1]
            if nxt == "u":
                digits = text[index + 2:index + 6]
                if len(digits) < 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                    raise ValueError(f"malformed \\uxxxx escape {text[index:index + 6]!r}")
                out.append(chr(int(digits, 16)))
                index += 6
                continue
            out.append({"n": "\n", "t": "\t", "r": "\r", "f": "\f"}.get(nxt, nxt))
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")


def table_checksum(database: str | None, table: str) -> int:
    """Hudi's hoodie.table.checksum: CRC32 of "<database>.<table>" (just the table when no database)."""
    name = f"{database}.{table}" if database else table
    return zlib.crc32(name.encode("utf-8"))


@dataclass
class TableProperties:
    """Typed view of hoodie.properties."""

    values: dict[str, str]

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    @property
    def name(self) -> str:
        return self.values.get("hoodie.table.name", "")

    @property
    def table_type(self) -> str:
        return self.values.get("hoodie.table.type", COPY_ON_WRITE)

    @property
    def is_mor(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def version(self) -> str:
        return self.values.get("hoodie.table.version", "")

    @property
    def record_key_fields(self) -> list[str]:
        return _split_fields(self.values.get("hoodie.table.recordkey.fields"))

    @property
    def partition_fields(self) -> list[str]:
        return _split_fields(self.values.get("hoodie.table.partition.fields"))

    @property
    def precombine_field(self) -> str | None:
        return self.values.get("hoodie.table.precombine.field") or None

    @property
    def keygen_class(self) -> str | None:
        return self.values.get("hoodie.table.keygenerator.class") or None

    @property
    def hive_style(self) -> bool:
        return self.values.get("hoodie.datasource.write.hive_style_partitioning", "false").lower() == "true"

    @property
    def url_encode(self) -> bool:
        return self.values.get("hoodie.datasource.write.partitionpath.urlencode", "false").lower() == "true"

    @property
    def populate_meta_fields(self) -> bool:
        return self.values.get("hoodie.populate.meta.fields", "true").lower() == "true"

    @property
    def drop_partition_columns(self) -> bool:
        return self.values.get("hoodie.datasource.write.drop.partition.columns", "false").lower() == "true"

    def write_options(self) -> dict[str, str]:
        """The table's identity expressed as datasource write options (what every writer must agree on)."""
        options = {
            "hoodie.table.name": self.name,
            "hoodie.datasource.write.table.type": self.table_type,
            "hoodie.datasource.write.recordkey.field": ",".join(self.record_key_fields),
            "hoodie.datasource.write.partitionpath.field": ",".join(self.partition_fields),
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style).lower(),
            "hoodie.datasource.write.partitionpath.urlencode": str(self.url_encode).lower(),
        }
        if self.precombine_field:
            options["hoodie.datasource.write.precombine.field"] = self.precombine_field
        if self.keygen_class:
            options["hoodie.datasource.write.keygenerator.class"] = self.keygen_class
        options.update({k: v for k, v in self.values.items() if k.startswith("hoodie.keygen.")})
        # A BUCKET table's index settings (pyhudi.index.BUCKET_TABLE_KEYS): writers must hash keys alike.
        options.update({k: v for k, v in self.values.items()
                        if k in ("hoodie.index.type", "hoodie.index.bucket.engine", "hoodie.bucket.index.num.buckets",
                                 "hoodie.bucket.index.hash.field")})
        return options


def _split_fields(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def read_table_properties(storage: Storage) -> TableProperties:
    """hoodie.properties, checked: decodable text, well-formed escapes, the keys every Hudi table has."""
    where = f"{storage.base_uri}/{PROPERTIES_FILE}"
    fix = "restore it from a backup (Hudi keeps .hoodie/hoodie.properties.backup while it updates the file)"
    data = storage.read_bytes(PROPERTIES_FILE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(
            f"{where} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); Hudi writes it as "
            f"ASCII with \\uXXXX escapes. Fix that value or {fix}.") from None
    try:
        values = load_properties(text)
    except ValueError as exc:
        raise CorruptFileError(f"{where} cannot be parsed as java.util.Properties ({exc}); fix the line or "
                               f"{fix}.") from None
    missing = [k for k in ("hoodie.table.name", "hoodie.table.version") if not values.get(k)]
    if missing:
        raise CorruptFileError(f"{where} is incomplete or damaged: {', '.join(missing)} missing; {fix}.")
    table_type = values.get("hoodie.table.type", COPY_ON_WRITE)
    if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise CorruptFileError(f"{where} has hoodie.table.type={table_type!r}, which is neither {COPY_ON_WRITE} nor "
                               f"{MERGE_ON_READ}; fix the value or {fix}.")
    return TableProperties(values)


def check_table_folder(storage: Storage) -> None:
    """A table path must be a folder (or not exist yet): a regular file there is a wrong path, not a table."""
    if storage.fs.get_file_info(storage.full("")).type == pafs.FileType.File:
        raise NotAHudiTableError(f"{storage.base_uri} is a file, not a Hudi table folder; check the path (a table "
                                 "path names the folder that holds .hoodie/)")


# --- the table --------------------------------------------------------------------------------------------
class HudiTable:
    """An existing Hudi table. `HudiTable.load(path)` fails clearly on anything that is not one."""

    def __init__(self, storage: Storage, properties: TableProperties):
        self.storage = storage
        self.properties = properties

    @classmethod
    def load(cls, path: str) -> "HudiTable":
        storage = path if isinstance(path, Storage) else Storage(str(path))
        check_table_folder(storage)
        if not storage.exists(PROPERTIES_FILE):
            raise NotAHudiTableError(
                f"{storage.base_uri} is not a Hudi table: {PROPERTIES_FILE} is missing. Write to it with "
                "pyhudi.write(...) (or CREATE TABLE ... USING hudi) first, or check the path.")
        props = read_table_properties(storage)
        version = props.version
        if version not in SUPPORTED_TABLE_VERSIONS:
            raise UnsupportedTableVersionError(
                f"table {props.name or storage.base_uri} has hoodie.table.version={version or '?'}; pyhudi reads "
                f"and writes table versions {', '.join(SUPPORTED_TABLE_VERSIONS)} (timeline layout 1). Downgrade "
                "it with Hudi's `downgrade` CLI command to version 6, or read it with Hudi 1.x.")
        return cls(storage, props)

    @staticmethod
    def exists(path: str) -> bool:
        storage = Storage(str(path))
        check_table_folder(storage)
        return storage.exists(PROPERTIES_FILE)

    @classmethod
    def create(cls, path: str, values: Mapping[str, str]) -> "HudiTable":
        storage = Storage(str(path))
        check_table_folder(storage)
        props = dict(values)
        props.setdefault("hoodie.table.version", "6")
        props.setdefault("hoodie.timeline.layout.version", "1")
        props.setdefault("hoodie.archivelog.folder", "archived")
        props.setdefault("hoodie.table.type", COPY_ON_WRITE)
        props.setdefault("hoodie.database.name", "default")
        props["hoodie.table.checksum"] = str(table_checksum(props.get("hoodie.database.name"),
                                                             props["hoodie.table.name"]))
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

    def latest_avro_schema(self, timeline: Timeline | None = None) -> dict | None:
        """Writer schema (Avro JSON, no meta columns) of the latest completed write, else the create schema."""
        timeline = timeline or self.timeline()
        for instant in reversed(timeline.completed_writes()):
            schema = timeline.read_metadata(instant).get("extraMetadata", {}).get("schema")
            if schema:
                return json.loads(schema)
        create = self.properties.get("hoodie.table.create.schema")
        return json.loads(create) if create else None


def write_partition_metadata(storage: Storage, partition_path: str, instant_time: str) -> None:
    """`.hoodie_partition_metadata` marks a folder as a partition (written once, by the first writer)."""
    relative = f"{partition_path}/{PARTITION_METAFILE}" if partition_path else PARTITION_METAFILE
    if storage.exists(relative):
        return
    depth = len([p for p in partition_path.split("/") if p]) if partition_path else 0
    text = (f"#partition metadata\n#{datetime.now(timezone.utc).strftime('%a %b %d %H:%M:%S UTC %Y')}\n"
            f"commitTime={instant_time}\npartitionDepth={depth}\n")
    storage.create_if_absent(relative, text.encode("utf-8"))


class FileSystemView:
    """The table's file groups as of an instant (default: the latest completed write)."""

    def __init__(self, table: HudiTable, timeline: Timeline, as_of: str | None = None):
        self.table = table
        self.timeline = timeline
        self.as_of = as_of
        writes = [i for i in timeline.completed_writes() if as_of is None or i.time <= as_of]
        self.visible_instants = {i.time for i in writes}
        # Files older than the first write on the (active) timeline belong to archived commits: committed.
        self.timeline_start = next((i.time for i in timeline.instants if i.action in WRITE_ACTIONS + (COMPACTION,)),
                                   None)
        self._replaced = self._replaced_file_ids(writes)
        # Slices opened by a requested/inflight compaction collect new log files before their base exists.
        self._pending_compactions = {i.time for i in timeline.pending([COMPACTION])}

    def _replaced_file_ids(self, writes: Iterable) -> set[tuple[str, str]]:
        replaced = set()
        for instant in writes:
            if instant.action != REPLACE_COMMIT:
                continue
            meta = self.timeline.read_metadata(instant)
            for partition, file_ids in (meta.get("partitionToReplaceFileIds") or {}).items():
                replaced.update((partition, file_id) for file_id in file_ids)
        return replaced

    @cached_property
    def file_groups(self) -> dict[tuple[str, str], FileGroup]:
        groups: dict[tuple[str, str], FileGroup] = {}
        slices: dict[tuple[str, str, str], FileSlice] = {}
        base_path = self.table.storage.base_path
        self._listed: set[str] = set()
        for info in self.table.storage.list_files("", recursive=True):
            relative = info.path[len(base_path) + 1:]
            self._listed.add(relative)
            if relative.startswith(METAFOLDER + "/") or relative.startswith(".hoodie/"):
                continue
            partition = partition_of(relative)
            parsed = parse_base_file_name(info.base_name)
            if parsed:
                file_id, token, instant_time = parsed
                if instant_time not in self.visible_instants and not self.before_timeline_start(instant_time):
                    continue
                key = (partition, file_id, instant_time)
                slice_ = slices.setdefault(key, FileSlice(partition, file_id, instant_time))
                candidate = BaseFile(relative, file_id, token, instant_time, info.size)
                # Two base files for one slice only happen after a failed retry; keep the newest write token.
                if slice_.base_file is None or candidate.newer_attempt_than(slice_.base_file):
                    slice_.base_file = candidate
                continue
            parsed_log = parse_log_file_name(info.base_name)
            if parsed_log:
                file_id, base_instant, version, token = parsed_log
                if self.as_of is not None and base_instant > self.as_of:
                    continue
                key = (partition, file_id, base_instant)
                slice_ = slices.setdefault(key, FileSlice(partition, file_id, base_instant))
                slice_.log_files.append(LogFile(relative, file_id, base_instant, version, token, info.size))
        for (partition, file_id, base_instant), slice_ in slices.items():
            if (partition, file_id) in self._replaced:
                continue
            if slice_.base_file is None and not self._log_slice_visible(base_instant):
                continue
            slice_.log_files.sort(key=LogFile.sort_key)
            group = groups.setdefault((partition, file_id), FileGroup(partition, file_id))
            group.slices.append(slice_)
        for group in groups.values():
            group.slices.sort(key=lambda s: s.base_instant)
        return groups

    def is_replaced(self, partition: str, file_id: str) -> bool:
        """The file group was replaced by a completed replacecommit visible in this view."""
        return (partition, file_id) in self._replaced

    def is_listed(self, relative_path: str) -> bool:
        """The file exists (it was in the listing this view was built from)."""
        _ = self.file_groups
        return relative_path in self._listed

    def before_timeline_start(self, instant_time: str) -> bool:
        """Hudi's isBeforeTimelineStarts: an instant older than the active timeline was archived, so committed."""
        return self.timeline_start is not None and instant_time < self.timeline_start \
            and (self.as_of is None or instant_time <= self.as_of)

    def _log_slice_visible(self, base_instant: str) -> bool:
        """A slice with only log files exists once its base instant is a completed write or pending compaction."""
        return base_instant in self.visible_instants or base_instant in self._pending_compactions \
            or self.before_timeline_start(base_instant) \
            or self.timeline.is_completed_write(base_instant)

    @cached_property
    def pending_compaction_groups(self) -> dict[tuple[str, str], str]:
        """(partition, file id) -> instant of the requested/inflight compaction whose plan includes it."""
        import io

        import fastavro

        groups = {}
        for instant_time in sorted(self._pending_compactions):
            data = self.table.storage.read_bytes(f"{METAFOLDER}/{instant_time}.compaction.requested")
            if not data:
                continue
            for plan in fastavro.reader(io.BytesIO(data)):
                for op in plan.get("operations") or []:
                    groups[(op.get("partitionPath") or "", op["fileId"])] = instant_time
        return groups

    def merged_latest_slices(self, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        """Latest slices for reading: a slice opened by a pending compaction (logs only, no base yet) is read
        together with the slice before it, as Hudi's merged file-slice view does."""
        out = []
        for slice_ in self.latest_slices(partitions):
            group = self.file_groups[(slice_.partition_path, slice_.file_id)]
            if slice_.base_file is None and slice_.base_instant in self._pending_compactions \
                    and len(group.slices) > 1:
                previous = group.slices[-2]
                slice_ = FileSlice(previous.partition_path, previous.file_id, previous.base_instant,
                                   previous.base_file, previous.log_files + slice_.log_files)
            out.append(slice_)
        return out

    def committed_extents(self, slices: Iterable[FileSlice]) -> dict[str, list[tuple[int, int]]]:
        """Byte ranges [start, end) the visible commits on the active timeline wrote in the slices' files: a
        base file from 0 to its size, a log file each append's [logOffset, logOffset + fileSizeInBytes)."""
        wanted = {}
        for slice_ in slices:
            if slice_.base_file is not None:
                wanted[slice_.base_file.path] = slice_.base_instant
            for log in slice_.log_files:
                wanted[log.path] = log.base_instant
        if not wanted:
            return {}
        first = min(wanted.values())
        extents: dict[str, list[tuple[int, int]]] = {}
        for instant in self.timeline.completed_writes():
            if instant.time not in self.visible_instants or instant.time < first:
                continue
            for stats in (self.timeline.read_metadata(instant).get("partitionToWriteStats") or {}).values():
                for stat in stats:
                    path, size = stat.get("path"), stat.get("fileSizeInBytes")
                    if path in wanted and isinstance(size, int) and size > 0:
                        start = stat.get("logOffset") if isinstance(stat.get("logOffset"), int) else 0
                        extents.setdefault(path, []).append((start, start + size))
        return extents

    def check_committed_sizes(self, slices: list[FileSlice]) -> dict[str, list[tuple[int, int]]]:
        """Refuse files shorter than their commits wrote them (truncated after the commit); returns the extents
        so log readers can tell a damaged committed block from the torn tail of a failed write."""
        extents = self.committed_extents(slices)
        for slice_ in slices:
            files = ([slice_.base_file] if slice_.base_file is not None else []) + list(slice_.log_files)
            for file in files:
                end = max((stop for _, stop in extents.get(file.path, [])), default=0)
                if file.size < end:
                    raise CorruptFileError(
                        f"Hudi {'log' if file in slice_.log_files else 'base'} file {file.path} of table "
                        f"{self.table.name} is {file.size} bytes but its commit wrote {end}: it was truncated. "
                        "Restore the file, or roll back the instant that wrote it.")
        return extents

    def partitions(self) -> list[str]:
        return sorted({partition for partition, _ in self.file_groups})

    def latest_slices(self, partitions: Iterable[str] | None = None) -> list[FileSlice]:
        wanted = set(partitions) if partitions is not None else None
        out = []
        for (partition, _), group in sorted(self.file_groups.items()):
            if wanted is not None and partition not in wanted:
                continue
            if group.latest_slice is not None:
                out.append(group.latest_slice)
        return out

    def latest_base_files(self, partitions: Iterable[str] | None = None) -> list[BaseFile]:
        """Latest base file of every file group (copy-on-write's snapshot)."""
        wanted = set(partitions) if partitions is not None else None
        out = []
        for (partition, _), group in sorted(self.file_groups.items()):
            if wanted is not None and partition not in wanted:
                continue
            for slice_ in reversed(group.slices):
                if slice_.base_file is not None:
                    out.append(slice_.base_file)
                    break
        return out

