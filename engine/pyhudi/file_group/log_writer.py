"""Writing a file slice's log output as Hudi's HoodieLogFormatWriter does: blocks go to the slice's current log
file until it passes ``hoodie.logfile.max.size``, then to the next version.

Hudi 0.14/0.15 (table version 6) decide by the storage scheme (StorageSchemes.supportsAppend):

* storage that can append (hdfs, viewfs, ...): the writer opens the slice's latest log file and appends to it;
* everything else, the local file system ("file") and object stores included: an existing log file is never
  reopened; the writer rolls over to the next version, so every write starts a new log file.

Within one write the writer appends its blocks in calls (a data block each time the buffered records reach
``hoodie.logfile.data.block.max.size``, the last call with the delete block); after each call, when the current
file is larger than ``hoodie.logfile.max.size``, the next call goes to the next version, named with the task's
write token (HoodieLogFile.rollOver). Each file the write touched gets its own write stat.

Here a new file is created in one piece when it is complete (create-if-absent), so a failed task leaves either
whole files or none; a file on append storage is extended by append_log_blocks. A name another writer created
first (two writers of one slice can name the same file: same version and write token) rolls over to the next
version, as Hudi's writer does when its file exists.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Callable

import pyarrow.fs as pafs

from pyhudi.file_group.log_block import LogBlock
from pyhudi.file_group.log_file import LogFileExistsError, append_log_blocks, encode_blocks, write_encoded_log
from pyhudi.file_group.naming import log_file_name

# StorageSchemes entries with supportsAppend=true (Hudi 0.14/0.15); "file" is false.
APPEND_SCHEMES = frozenset({"hdfs", "afs", "maprfs", "igfs", "viewfs", "ofs", "jfs"})


def storage_scheme(fs: pafs.FileSystem) -> str:
    """Hudi's scheme name of a pyarrow file system ("file" for the local one)."""
    name = fs.type_name
    return {"local": "file", "gcs": "gs", "s3": "s3a"}.get(name, name)


def supports_append(fs: pafs.FileSystem) -> bool:
    """StorageSchemes.isAppendSupported for `fs`: false for the local file system and object stores."""
    return storage_scheme(fs) in APPEND_SCHEMES


@dataclass(frozen=True)
class SliceLog:
    """Where a write's log output for one file slice starts."""

    directory: str           # partition directory relative to the table base ('' when non-partitioned)
    file_id: str
    base_instant: str
    next_version: int        # first log version no file of the slice has
    token: str               # this task's write token (new files and rollovers)
    latest: tuple | None = None   # (name, version, size) of the slice's latest log file, for append storage


@dataclass
class LogOutput:
    """One log file a write touched: its path (relative), version, its size afterwards, where this write's
    blocks start in it and which of the write's append calls went there."""

    path: str
    version: int
    size: int = 0
    offset: int = 0
    calls: list[int] = field(default_factory=list)
    existed: bool = False    # an existing file this write appends to (append storage only)


def write_slice_log(fs: pafs.FileSystem, full: Callable[[str], str], target: SliceLog,
                    calls: list[list[LogBlock]], max_size: int,
                    before_file: Callable[[str], None]) -> list[LogOutput]:
    """Write the append `calls` (lists of blocks) for one slice, rolling over past `max_size` bytes.
    `full` maps a relative path to the file system path; `before_file(relative)` runs before a file is first
    written (the marker). Returns the files written, in version order."""
    outputs: list[LogOutput] = []
    append = supports_append(fs) and target.latest is not None
    if append:
        name, version, size = target.latest
        current = LogOutput(_relative(target.directory, name), version, size, size, existed=True)
        if size > max_size:      # already full: the next version
            current = _new(target, version + 1)
    else:
        current = _new(target, target.next_version)
    pending: list[bytes] = []     # encoded calls of a new file not yet written
    for index, blocks in enumerate(calls):
        if not current.calls:
            before_file(current.path)
            outputs.append(current)
        current.calls.append(index)
        if current.existed:   # the slice's latest file, on append storage: extend it
            current.size = append_log_blocks(fs, full(current.path), blocks)
        else:
            data = encode_blocks(blocks)
            pending.append(data)
            current.size += len(data)
        if current.size > max_size and index < len(calls) - 1:
            _flush(fs, full, current, pending, target, before_file)
            pending = []
            current = _new(target, current.version + 1)
    if pending:
        _flush(fs, full, current, pending, target, before_file)
    return outputs


def _new(target: SliceLog, version: int) -> LogOutput:
    name = log_file_name(target.file_id, target.base_instant, version, target.token)
    return LogOutput(_relative(target.directory, name), version)


def _relative(directory: str, name: str) -> str:
    return posixpath.join(directory, name) if directory else name


def _flush(fs: pafs.FileSystem, full: Callable[[str], str], output: LogOutput, pending: list[bytes],
           target: SliceLog, before_file: Callable[[str], None]) -> None:
    """Create `output`'s file from the `pending` encoded calls; a name that exists rolls over to the next version
    (with its own marker)."""
    if not pending:
        return
    data = b"".join(pending)
    for _ in range(MAX_ROLLOVERS):
        try:
            output.size = write_encoded_log(fs, full(output.path), data)
            return
        except LogFileExistsError:
            renamed = _new(target, output.version + 1)
            output.path, output.version = renamed.path, renamed.version
            before_file(output.path)
    raise LogFileExistsError(f"{MAX_ROLLOVERS} log file versions up to {full(output.path)} exist already: other "
                             "writers are writing this file slice; nothing of this write was committed: retry it")


MAX_ROLLOVERS = 100   # versions a write tries past names other writers created first
