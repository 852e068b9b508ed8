"""File groups and file slices: how Hudi versions the files of one record-key range.

A file group (partition, fileId) holds the versions of one set of records. Each write that touches it opens a
new file slice, keyed by its base instant: a base file, plus (merge-on-read) log files appended after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyhudi.file_group.naming import write_token_order


@dataclass(frozen=True)
class BaseFile:
    path: str            # relative to the table base path
    file_id: str
    write_token: str
    instant_time: str
    size: int

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def newer_attempt_than(self, other: "BaseFile") -> bool:
        """Of two base files of one slice (a retried task), the later attempt: greater write token, numerically."""
        return write_token_order(self.write_token) > write_token_order(other.write_token)


@dataclass(frozen=True)
class LogFile:
    path: str
    file_id: str
    base_instant: str
    version: int
    write_token: str
    size: int

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def sort_key(self):
        """Hudi's HoodieLogFile comparator: the instant in the name, then the version, then the write token. Table
        version 6 names every log of a slice by its base instant; Hudi 1.x by the delta commit that wrote it, so a
        slice's logs merge in the order their delta commits were made."""
        return (self.base_instant, self.version, write_token_order(self.write_token))


@dataclass
class FileSlice:
    partition_path: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: list[LogFile] = field(default_factory=list)

    @property
    def log_size(self) -> int:
        """Bytes of the slice's log files (a size not known, negative, counts 0, as Hudi's FileSliceMetricUtils)."""
        return sum(log.size for log in self.log_files if log.size >= 0)

    @property
    def total_size(self) -> int:
        return (self.base_file.size if self.base_file else 0) + self.log_size


@dataclass
class FileGroup:
    partition_path: str
    file_id: str
    slices: list[FileSlice] = field(default_factory=list)   # oldest first

    @property
    def latest_slice(self) -> FileSlice | None:
        return self.slices[-1] if self.slices else None
