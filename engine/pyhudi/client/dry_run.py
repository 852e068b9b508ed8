"""A Storage that reads the table and writes nothing: the real write runs on it to explain itself.

`DryRunStorage` hands out a filesystem whose reads go to the table's real filesystem and whose output streams
only count the bytes they are given; markers, partition metadata and timeline files (write_bytes,
create_if_absent) are dropped. So pyhudi.explain_write runs the very write plan a write would run (index lookup,
small-file packing, the merge, the parquet / log encoding) and learns every file's exact size, yet no byte lands
in the table. It is picklable like Storage, so executors rebuild the same dry filesystem.
"""

from __future__ import annotations

import threading
from functools import cached_property

import pyarrow as pa
import pyarrow.fs as pafs

from pyhudi.storage import Storage

_written: dict[str, int] = {}   # full path -> bytes a dry output stream received (this process)
_lock = threading.Lock()


class _CountingSink:
    """A writable file object that keeps only its size."""

    def __init__(self, path: str):
        self.path, self.size, self.closed = path, 0, False

    def write(self, data: bytes | memoryview) -> int:
        n = memoryview(data).nbytes
        self.size += n
        return n

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with _lock:
                _written[self.path] = self.size


class _DryRunHandler(pafs.FileSystemHandler):
    """Reads from `real`; writes, moves and deletes do nothing (output streams count bytes)."""

    def __init__(self, real: pafs.FileSystem):
        self.real = real

    def __eq__(self, other):
        return isinstance(other, _DryRunHandler) and self.real.equals(other.real)

    def equals(self, other: object) -> bool:
        return self == other

    def get_type_name(self) -> str:
        return "pyhudi-dry-run"

    def normalize_path(self, path: str) -> str:
        return self.real.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self.real.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self.real.get_file_info(selector)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.real.open_input_stream(path)

    def open_input_file(self, path: str) -> pa.NativeFile:
        return self.real.open_input_file(path)

    def open_output_stream(self, path: str, metadata: dict | None = None) -> pa.PythonFile:
        return pa.PythonFile(_CountingSink(path), mode="w")

    def open_append_stream(self, path: str, metadata: dict | None = None) -> pa.PythonFile:
        return pa.PythonFile(_CountingSink(path), mode="w")

    def create_dir(self, path: str, recursive: bool = True) -> None:
        pass

    def delete_dir(self, path: str) -> None:
        pass

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        pass

    def delete_root_dir_contents(self) -> None:
        pass

    def delete_file(self, path: str) -> None:
        pass

    def move(self, src: str, dest: str) -> None:
        pass

    def copy_file(self, src: str, dest: str) -> None:
        pass


class DryRunStorage(Storage):
    """Storage of the table at `base_uri` that never writes (see the module docstring)."""

    @cached_property
    def _dry_fs(self) -> pafs.FileSystem:
        return pafs.PyFileSystem(_DryRunHandler(super().fs))

    @property
    def fs(self) -> pafs.FileSystem:
        return self._dry_fs

    @property
    def is_local(self) -> bool:
        return False   # no os-level shortcuts (hard links, rmtree): everything goes through the dry filesystem

    def uri(self, relative: str = "") -> str:
        return Storage(self.base_uri).uri(relative)   # the same cache keys and Spark paths as the real table

    def file_size(self, relative: str) -> int:
        with _lock:
            size = _written.pop(self.full(relative), None)
        return size if size is not None else super().file_size(relative)

    def makedirs(self, relative: str) -> None:
        pass

    def write_bytes(self, relative: str, data: bytes) -> None:
        pass

    def create_if_absent(self, relative: str, data: bytes, durable: bool = True) -> bool:
        return True

    def delete_file(self, relative: str) -> None:
        pass

    def delete_empty_dirs(self, relative: str) -> None:
        pass

    def delete_dir(self, relative: str) -> None:
        pass
