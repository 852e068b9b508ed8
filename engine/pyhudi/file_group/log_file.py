"""Hudi log files for merge-on-read: names, reading and writing of ``#HUDI#`` blocks (log format version 1).

File name: ``.<fileId>_<baseInstant>.log.<version>_<writeToken>``. A file is a sequence of blocks, each framed
as Apache Hudi's ``HoodieLogFormatWriter`` writes it (all integers big-endian)::

    MAGIC "#HUDI#"                    6 bytes
    block size                        long   bytes that follow this field, up to and including the last long
    log format version                int    1
    block type                        int    BlockType ordinal
    header                            int count, then per entry: int HeaderMetadataType ordinal, int length, UTF-8
    content length                    long
    content                           bytes  (see pyhudi.file_group.log_block)
    footer                            same layout as the header (empty in practice)
    total block length                long   bytes from MAGIC up to (not including) this field = block size + 6

A block is intact when its size stays inside the file, the trailing total length agrees with the size and its
fields parse to exactly that size. A torn or corrupt block (a writer crash mid-append, flipped bytes) is skipped
with a :class:`CorruptLogBlockWarning` naming the file and offset, and reading resumes at the next ``#HUDI#``
magic, like Hudi's ``HoodieLogFileReader`` (which turns the bytes up to the next magic into a corrupt block that
the scanner ignores). Blocks before and after stay readable.
"""

from __future__ import annotations

import logging
import os
import posixpath
import struct
import warnings
from typing import Iterator

import pyarrow as pa
import pyarrow.fs as pafs

from pyhudi.errors import CorruptFileError, PyHudiError, SchemaError
from pyhudi.storage.object_store import create_object, uri_of
from pyhudi.file_group import naming as _naming
from pyhudi.file_group.naming import LogFileNameError, log_file_name
from pyhudi.file_group.log_block import (
    LOG_FORMAT_VERSION,
    MAGIC,
    BlockType,
    CommandBlockType,
    DeleteRecord,
    HeaderMetadataType,
    LogBlock,
    avro_data_block,
    decode_content,
    decode_metadata,
    delete_block,
    encode_content,
    encode_metadata,
    ordering_branch_for,
    parquet_data_block,
    rollback_command_block,
)

log = logging.getLogger(__name__)

DEFAULT_WRITE_TOKEN = "1-0-1"   # HoodieLogFormat.DEFAULT_WRITE_TOKEN (rollover / rollback command blocks)
_LONG = struct.Struct(">q")
_INT = struct.Struct(">i")
_MIN_BLOCK_SIZE = 4 + 4 + 4 + 8 + 4 + 8   # version, type, empty header, content length, empty footer, length
_PREFIX_READ = 1 << 20
_SCAN_CHUNK = 1 << 20


class CorruptLogBlockWarning(UserWarning):
    """A log block was torn or corrupt and has been skipped (reading went on at the next block)."""


class LogFileExistsError(PyHudiError, FileExistsError):
    """write_log_file was asked to create a log file that already exists."""


class LogAppendNotSupportedError(PyHudiError):
    """The file system cannot append; the caller must roll over to the next log file version."""


# --------------------------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------------------------

def parse_log_file_path(name: str) -> tuple[str, str, int, str]:
    """(file_id, base_instant, version, write_token) of a log file's path or bare name; raises LogFileNameError
    when it is not a log file. naming.parse_log_file_name is the lenient form (a bare name; None otherwise) for
    listings that hold other files too."""
    base = posixpath.basename(name.rstrip("/"))
    parsed = _naming.parse_log_file_name(base)
    if parsed is None:
        raise LogFileNameError(
            f"{name!r} is not a Hudi log file name; expected '.<fileId>_<baseInstant>.log.<version>_<writeToken>'")
    return parsed


def is_log_file_name(name: str) -> bool:
    return _naming.parse_log_file_name(posixpath.basename(name.rstrip("/"))) is not None


def rollover_log_file_name(name: str, write_token: str = DEFAULT_WRITE_TOKEN) -> str:
    """The next version of a log file (same directory, file id and base instant), as HoodieLogFile.rollOver names it."""
    file_id, base_instant, version, _ = parse_log_file_path(name)
    directory = posixpath.dirname(name)
    rolled = log_file_name(file_id, base_instant, version + 1, write_token)
    return posixpath.join(directory, rolled) if directory else rolled


# --------------------------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------------------------

def encode_block(block: LogBlock) -> bytes:
    """The bytes of one block, magic to trailing length, as HoodieLogFormatWriter.appendBlocks writes it."""
    if block.block_type == BlockType.CORRUPT_BLOCK:
        raise PyHudiError("Corrupt blocks cannot be written; drop them before writing the log file")
    header = encode_metadata(block.header)
    footer = encode_metadata(block.footer)
    content = encode_content(block)
    size = 4 + 4 + len(header) + 8 + len(content) + len(footer) + 8
    return b"".join((
        MAGIC,
        _LONG.pack(size),
        _INT.pack(LOG_FORMAT_VERSION),
        _INT.pack(int(block.block_type)),
        header,
        _LONG.pack(len(content)),
        content,
        footer,
        _LONG.pack(len(MAGIC) + 8 + size - 8),
    ))


def encode_blocks(blocks: list[LogBlock]) -> bytes:
    return b"".join(encode_block(b) for b in blocks)


def write_log_file(fs: pafs.FileSystem, path: str, blocks: list[LogBlock]) -> int:
    """Create the log file ``path`` holding ``blocks``; returns its size. Every block is encoded before anything
    is written, so bad input leaves no file. Raises LogFileExistsError when ``path`` exists (roll over instead:
    :func:`rollover_log_file_name`)."""
    return write_encoded_log(fs, path, encode_blocks(blocks))


def write_encoded_log(fs: pafs.FileSystem, path: str, data: bytes) -> int:
    """Create the log file ``path`` from already encoded blocks (:func:`encode_blocks`); see write_log_file."""
    if isinstance(fs, pafs.LocalFileSystem):   # one exclusive create: no separate existence check
        return _create_local(path, data)
    uri = uri_of(fs, path)
    if uri is not None:   # an object store: one conditional create, as for the timeline (two writers whose log
        if not create_object(uri, data):   # files have one name must not both write it: the loser rolls over)
            raise _exists(path)
        return len(data)
    if fs.get_file_info(path).type != pafs.FileType.NotFound:
        raise _exists(path)
    parent = posixpath.dirname(path)
    if parent:
        fs.create_dir(parent, recursive=True)
    with fs.open_output_stream(path) as out:
        out.write(data)
    return len(data)


def _create_local(path: str, data: bytes) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        try:
            fd = os.open(path, flags, 0o666)
        except FileNotFoundError:   # the partition folder is new
            os.makedirs(posixpath.dirname(path), exist_ok=True)
            fd = os.open(path, flags, 0o666)
    except FileExistsError:
        raise _exists(path) from None
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return len(data)


def _exists(path: str) -> LogFileExistsError:
    return LogFileExistsError(
        f"Log file {path} already exists; append to it (append_log_blocks) or write the next version "
        f"({posixpath.basename(rollover_log_file_name(path))})")


def append_log_blocks(fs: pafs.FileSystem, path: str, blocks: list[LogBlock]) -> int:
    """Append ``blocks`` to the log file ``path`` (created when absent); returns the file size afterwards (the
    appended blocks start at the size it had before). Raises LogAppendNotSupportedError on file systems without
    append (object stores): write the blocks to the next log file version instead."""
    data = encode_blocks(blocks)
    try:
        out = fs.open_append_stream(path)
    except (NotImplementedError, pa.ArrowNotImplementedError) as exc:
        raise LogAppendNotSupportedError(
            f"{type(fs).__name__} cannot append to {path}; write the blocks to a new log file "
            f"({posixpath.basename(rollover_log_file_name(path))}) instead") from exc
    with out:
        out.write(data)
    return fs.get_file_info(path).size


# --------------------------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------------------------

class _Source:
    """Random access to a log file's bytes (a pyarrow file or an in-memory buffer)."""

    def __init__(self, data: bytes | None = None, handle=None, size: int | None = None) -> None:
        self._data = data
        self._handle = handle
        self.size = len(data) if data is not None else int(size)

    def read_at(self, offset: int, nbytes: int) -> bytes:
        nbytes = max(0, min(nbytes, self.size - offset))
        if nbytes == 0:
            return b""
        if self._data is not None:
            return self._data[offset:offset + nbytes]
        data = self._handle.read_at(nbytes, offset)
        return data if isinstance(data, bytes) else data.to_pybytes()

    def find_magic(self, start: int) -> int:
        """Offset of the next MAGIC at or after ``start``; the file size when there is none."""
        pos = start
        while pos < self.size:
            chunk = self.read_at(pos, _SCAN_CHUNK + len(MAGIC) - 1)
            hit = chunk.find(MAGIC)
            if hit >= 0:
                return pos + hit
            if len(chunk) < len(MAGIC):
                break
            pos += len(chunk) - (len(MAGIC) - 1)
        return self.size


class _Corrupt(Exception):
    """A block whose framing is broken: skip it and resume at the next magic."""


def _parse_frame(src: _Source, pos: int):
    """Parse the framing of the block starting (with its magic) at ``pos``.

    Returns (block_type, header, footer, content_offset, content_length, end, whole) where ``whole`` is the
    block's bytes after the size field when they were read in one go (else None); raises _Corrupt.
    """
    if pos + len(MAGIC) + 8 > src.size:
        raise _Corrupt("the block size field is cut off (file truncated)")
    (size,) = _LONG.unpack(src.read_at(pos + len(MAGIC), 8))
    body = pos + len(MAGIC) + 8
    end = body + size
    if size < _MIN_BLOCK_SIZE:
        raise _Corrupt(f"implausible block size {size}")
    if end > src.size:
        raise _Corrupt(f"the block size {size} runs past the end of the file ({src.size} bytes; file truncated)")
    (total,) = _LONG.unpack(src.read_at(end - 8, 8))
    if total != size + len(MAGIC):
        raise _Corrupt(f"the trailing block length {total} disagrees with the block size {size}")

    prefix = src.read_at(body, min(size, _PREFIX_READ))
    try:
        try:
            version, type_ordinal = struct.unpack_from(">ii", prefix, 0)
            header, hpos = decode_metadata(prefix, 8)
        except (struct.error, ValueError):
            if len(prefix) == size:
                raise
            prefix = src.read_at(body, size)     # a header larger than the first read
            version, type_ordinal = struct.unpack_from(">ii", prefix, 0)
            header, hpos = decode_metadata(prefix, 8)
        if version != LOG_FORMAT_VERSION:
            raise _Corrupt(f"log format version {version} (pyhudi reads version {LOG_FORMAT_VERSION})")
        try:
            block_type = BlockType(type_ordinal)
        except ValueError:
            raise _Corrupt(f"unknown block type {type_ordinal}") from None
        if hpos + 8 > len(prefix):
            prefix = src.read_at(body, size)
        (content_length,) = _LONG.unpack_from(prefix, hpos)
        content_offset = body + hpos + 8
        content_end = content_offset + content_length
        if content_length < 0 or content_end + 4 > end - 8:
            raise _Corrupt(f"content length {content_length} does not fit the block size {size}")
        tail = prefix[content_end - body:size - 8] if len(prefix) == size else \
            src.read_at(content_end, end - 8 - content_end)
        footer, fpos = decode_metadata(tail, 0)
        if fpos != len(tail):
            raise _Corrupt(f"{len(tail) - fpos} stray bytes after the footer")
    except (struct.error, ValueError, UnicodeDecodeError) as exc:
        raise _Corrupt(f"unreadable header/footer ({exc})") from None
    whole = prefix if len(prefix) == size else None
    return block_type, header, footer, content_offset, content_length, end, whole


def _warn_corrupt(name: str, offset: int, next_offset: int, size: int, reason: str) -> None:
    resume = f"resuming at the next block at offset {next_offset}" if next_offset < size else \
        "no further block follows"
    message = (f"Hudi log file {name}: skipped a corrupt block at offset {offset} ({reason}); "
               f"{next_offset - offset} bytes ignored, {resume}. Blocks of a failed write are expected to be "
               "torn; if this file belongs to a completed commit, restore it or roll that commit back.")
    log.warning(message)
    warnings.warn(CorruptLogBlockWarning(message), stacklevel=3)


def _iter_blocks(src: _Source, name: str, decode: bool, include_corrupt: bool) -> Iterator[LogBlock]:
    pos = 0
    while pos < src.size:
        magic = src.read_at(pos, len(MAGIC))
        if magic != MAGIC:
            nxt = src.find_magic(pos + 1)
            reason = "the file ends inside a block magic" if len(magic) < len(MAGIC) and nxt == src.size \
                else "no #HUDI# magic where a block should start"
            _warn_corrupt(name, pos, nxt, src.size, reason)
            if include_corrupt:
                yield LogBlock(BlockType.CORRUPT_BLOCK, offset=pos, length=nxt - pos)
            pos = nxt
            continue
        try:
            block_type, header, footer, content_offset, content_length, end, whole = _parse_frame(src, pos)
        except _Corrupt as exc:
            nxt = src.find_magic(pos + len(MAGIC))
            _warn_corrupt(name, pos, nxt, src.size, str(exc))
            if include_corrupt:
                yield LogBlock(BlockType.CORRUPT_BLOCK, offset=pos, length=nxt - pos)
            pos = nxt
            continue
        block = LogBlock(block_type, header, footer, offset=pos, length=end - pos)
        if block_type == BlockType.COMMAND_BLOCK or decode:
            if whole is not None:
                start = content_offset - (pos + len(MAGIC) + 8)
                content = whole[start:start + content_length]
            else:
                content = src.read_at(content_offset, content_length)
            try:
                payload = decode_content(block_type, header, content)
            except SchemaError as exc:
                raise SchemaError(f"Hudi log file {name}: the {block_type.name} at offset {pos} (instant "
                                  f"{header.get('INSTANT_TIME')}) uses a schema pyhudi cannot read: {exc}") from exc
            except Exception as exc:  # parquet/avro/struct decoders raise many types
                raise CorruptFileError(
                    f"Hudi log file {name}: the {block_type.name} at offset {pos} (instant "
                    f"{header.get('INSTANT_TIME')}) is framed correctly but its content cannot be decoded: {exc}. "
                    "The file was written by an incompatible writer or damaged inside the block; restore it, or "
                    "roll back that instant.") from exc
            for key, value in payload.items():
                setattr(block, key, value)
        yield block
        pos = end


def read_log_file(fs: pafs.FileSystem, path: str, *, decode: bool = True,
                  include_corrupt: bool = False) -> Iterator[LogBlock]:
    """The blocks of the log file ``path``, in file order.

    ``decode=False`` reads only headers/footers (records/delete keys stay None; command blocks are still
    resolved), for cheap scans of instant times. Corrupt blocks are skipped with a CorruptLogBlockWarning, or
    yielded as CORRUPT_BLOCK blocks (no payload) with ``include_corrupt=True``. A block whose framing is intact
    but whose content cannot be decoded raises CorruptFileError.
    """
    with fs.open_input_file(path) as handle:
        yield from _iter_blocks(_Source(handle=handle, size=handle.size()), path, decode, include_corrupt)


def block_instants(fs: pafs.FileSystem, path: str) -> set[str]:
    """The instants whose blocks the log file holds (headers only; corrupt blocks skipped): whether a file is one
    instant's own or shared with others (Java appends, and two writers can race to create one name)."""
    return {b.instant_time for b in read_log_file(fs, path, decode=False) if b.instant_time is not None}


def read_log_bytes(data: bytes, name: str = "<bytes>", *, decode: bool = True,
                   include_corrupt: bool = False) -> Iterator[LogBlock]:
    """Like :func:`read_log_file` over the bytes of a log file already in memory."""
    yield from _iter_blocks(_Source(data=bytes(data)), name, decode, include_corrupt)


__all__ = [
    "BlockType", "HeaderMetadataType", "CommandBlockType", "DeleteRecord", "LogBlock",
    "CorruptLogBlockWarning", "LogFileExistsError", "LogAppendNotSupportedError", "LogFileNameError",
    "DEFAULT_WRITE_TOKEN", "MAGIC",
    "log_file_name", "parse_log_file_path", "is_log_file_name", "rollover_log_file_name",
    "encode_block", "encode_blocks", "write_log_file", "write_encoded_log", "append_log_blocks", "read_log_file", "read_log_bytes",
    "parquet_data_block", "avro_data_block", "delete_block", "rollback_command_block", "ordering_branch_for",
]
