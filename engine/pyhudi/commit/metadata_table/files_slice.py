"""The `files` partition of a metadata table as it stands: its one file group (`files-0000-0`), the latest file
slice (an HFile base file and the log files after it), and the records they merge to.

Only what a reader may trust counts: a log file of a metadata delta commit that completed (or was archived, so
completed: in the metadata table's LSM history, or older than its active timeline), for a data instant that
completed too, or that was archived after it completed (in the data table's history, or older than its active
timeline: Java archives only what its metadata table has compacted, and undoes the metadata delta commit of what it
rolls back). Cleans and commits are archived apart, so an archived instant can be younger than an active clean.
The metadata table's own initialising instants have no data instant and are trusted as they are (Java's metadata
reader does the same). Log files belong to the slice of the latest completed base file whose instant is before their
delta commit's completion (Hudi 1.x slices by completion time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pyhudi.commit.metadata_table.records import FILES_PARTITION, FilesRecord, decode_record
from pyhudi.errors import CorruptFileError
from pyhudi.file_group.hfile import HFileReader
from pyhudi.file_group.log_block.model import BlockType
from pyhudi.file_group.log_file import parse_log_file_path, read_log_bytes
from pyhudi.storage import Storage
from pyhudi.timeline import COMMIT, DELTA_COMMIT, Timeline

FILE_GROUP = "files-0000-0"
_BASE = re.compile(rf"^{FILE_GROUP}_(?P<token>\d+-\d+-\d+)_(?P<instant>\d+)\.hfile$")
# Instants the metadata table makes on its own, with no data instant: its initialisation (0000...0 + partition).
INITIAL_INSTANT_PREFIX = "00000000000000"


def is_metadata_only(instant_time: str) -> bool:
    return instant_time.startswith(INITIAL_INSTANT_PREFIX)


@dataclass
class FilesSlice:
    base_file: str | None                 # name, inside files/
    base_instant: str
    log_files: list[tuple[str, str]] = field(default_factory=list)   # (name, deltacommit instant), in order

    def relative(self, name: str) -> str:
        return f"{FILES_PARTITION}/{name}"


def trusted_instants(data_timeline: Timeline):
    """Whether a metadata delta commit's instant may be trusted, given the data table's timeline."""
    done = {i.time for i in data_timeline.completed()}
    oldest = data_timeline.instants[0].time if data_timeline.instants else ""

    def trusted(instant: str) -> bool:
        if is_metadata_only(instant) or instant in done or instant < oldest:
            return True
        return not data_timeline.has_time(instant) and data_timeline.completion_time(instant) is not None

    return trusted


def partition_files(mdt: Storage, mdt_timeline: Timeline, data_timeline: Timeline
                    ) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """The files partition's completed base files, (instant, name), and trusted log files, (completion time of
    their delta commit, name, delta commit), from one listing (see the module docstring)."""
    trusted = trusted_instants(data_timeline)
    completed = {i.time: i.completion_time or i.time for i in mdt_timeline.completed([COMMIT, DELTA_COMMIT])}
    start = mdt_timeline.instants[0].time if mdt_timeline.instants else ""

    def done_at(instant: str) -> str | None:
        """When the metadata instant completed; one archived (in the history, or older than the active timeline)
        completed; one pending on the active timeline did not."""
        if instant in completed:
            return completed[instant]
        if mdt_timeline.has_time(instant):
            return None
        return mdt_timeline.completion_time(instant) or (instant if instant < start else None)

    bases, logs = [], []
    for info in mdt.list_files(FILES_PARTITION):
        match = _BASE.match(info.base_name)
        if match and done_at(match["instant"]) is not None:
            bases.append((match["instant"], info.base_name))
        elif info.base_name.startswith(f".{FILE_GROUP}_") and ".log." in info.base_name:
            instant = parse_log_file_path(info.base_name)[1]
            finished = done_at(instant)
            if finished is not None and trusted(instant):
                logs.append((finished, info.base_name, instant))
    return sorted(bases), sorted(logs)


def latest_slice(mdt: Storage, mdt_timeline: Timeline, data_timeline: Timeline) -> FilesSlice:
    """The latest file slice of the files partition, with only trusted log files (see the module docstring)."""
    bases, logs = partition_files(mdt, mdt_timeline, data_timeline)
    if not bases:
        raise CorruptFileError(f"{mdt.base_uri}/{FILES_PARTITION} has no completed base file; set "
                               "hoodie.metadata.enable=false to drop the metadata table and let Java rebuild it")
    base_instant, base_name = bases[-1]
    return FilesSlice(base_name, base_instant,
                      [(name, instant) for done_at, name, instant in logs if done_at > base_instant])


def read_files_records(mdt: Storage, files_slice: FilesSlice) -> dict[str, FilesRecord]:
    """The slice's records merged per key: base file first, then each log file's HFile blocks in order."""
    merged: dict[str, FilesRecord] = {}
    if files_slice.base_file:
        where = f"{mdt.base_uri}/{files_slice.relative(files_slice.base_file)}"
        reader = HFileReader(mdt.read_bytes(files_slice.relative(files_slice.base_file)), where)
        schema = _schema(reader, where)
        for key, value in reader.records():
            _fold(merged, decode_record(key.decode(), value, schema, where))
    for name, _ in files_slice.log_files:
        where = f"{mdt.base_uri}/{files_slice.relative(name)}"
        for block in read_log_bytes(mdt.read_bytes(files_slice.relative(name)), where):
            if block.block_type != BlockType.HFILE_DATA_BLOCK or block.content is None:
                continue
            reader = HFileReader(block.content, where)
            schema = block.schema or _schema(reader, where)
            for key, value in reader.records():
                _fold(merged, decode_record(key.decode(), value, schema, where))
    return merged


def _fold(merged: dict[str, FilesRecord], record: FilesRecord | None) -> None:
    if record is None:
        return
    if record.key in merged:
        merged[record.key].merge(record)
    else:
        merged[record.key] = record


def _schema(reader: HFileReader, where: str) -> str:
    schema = reader.file_info.get(b"schema")
    if not schema:
        raise CorruptFileError(f"{where} names no Avro schema (HFile file info 'schema'); set "
                               "hoodie.metadata.enable=false to drop the metadata table and let Java rebuild it")
    return schema.decode()
