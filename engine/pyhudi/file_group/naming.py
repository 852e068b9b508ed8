"""Hudi data file names.

Base file: `<fileId>_<writeToken>_<instantTime>.parquet`.
Log file:  `.<fileId>_<baseInstantTime>.log.<version>_<writeToken>`.
A write token is `<taskPartitionId>-<stageId>-<taskAttemptId>`; a file id is a UUID plus `-<n>`.
"""

from __future__ import annotations

import re
import uuid

from pyhudi.errors import PyHudiError

BASE_FILE_EXTENSION = ".parquet"
PARTITION_METAFILE = ".hoodie_partition_metadata"

_BASE_RE = re.compile(r"^(?P<file_id>[^_]+)_(?P<token>\d+-\d+-\d+)_(?P<instant>\d+)\.parquet$")
_LOG_RE = re.compile(r"^\.(?P<file_id>[^_]+)_(?P<instant>\d+)\.log\.(?P<version>\d+)(?:_(?P<token>\d+-\d+-\d+))?$")


def new_file_id() -> str:
    return f"{uuid.uuid4()}-0"


def write_token(task_partition_id: int, stage_id: int, task_attempt_id: int) -> str:
    return f"{task_partition_id}-{stage_id}-{task_attempt_id}"


def write_token_order(token: str) -> tuple[int, ...]:
    """Sort key of a write token: its three numbers, so a retried attempt "0-5-10" sorts after "0-5-9"
    (as strings it would sort first). An empty token (old log files) sorts before every other."""
    return tuple(int(part) for part in token.split("-") if part.isdigit()) if token else ()


def base_file_name(file_id: str, token: str, instant_time: str) -> str:
    return f"{file_id}_{token}_{instant_time}{BASE_FILE_EXTENSION}"


def parse_base_file_name(name: str) -> tuple[str, str, str] | None:
    """(file_id, write_token, instant_time) or None when `name` is not a base file."""
    match = _BASE_RE.match(name)
    return (match["file_id"], match["token"], match["instant"]) if match else None


class LogFileNameError(PyHudiError, ValueError):
    """A file name is not a Hudi log file name (or a log version below 1 was asked for)."""


def log_file_name(file_id: str, base_instant: str, version: int, token: str) -> str:
    """``.<fileId>_<baseInstant>.log.<version>_<writeToken>``; versions start at 1 (HoodieLogFile.LOGFILE_BASE_VERSION).
    The one place a log file is named (file_group.log_file re-exports it)."""
    if version < 1:
        raise LogFileNameError(f"Log file versions start at 1, got {version} for file group {file_id}")
    return f".{file_id}_{base_instant}.log.{version}_{token}"


def parse_log_file_name(name: str) -> tuple[str, str, int, str] | None:
    """(file_id, base_instant, version, write_token) of a bare file name, or None when it is not a log file (so
    listings can test names with it). log_file.parse_log_file_path is the strict form: paths too, and an error."""
    match = _LOG_RE.match(name)
    if not match:
        return None
    return match["file_id"], match["instant"], int(match["version"]), match["token"] or ""


def partition_file(partition: str, name: str) -> str:
    """A file's path relative to the table base: `<partition>/<name>`, or the name alone when non-partitioned."""
    return f"{partition}/{name}" if partition else name


def partition_of(relative_path: str) -> str:
    """Partition path of a file path relative to the table base ('' for non-partitioned tables)."""
    return relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""
