"""File I/O shared by the driver and the executors, on pyarrow filesystems.

`Storage` is small and picklable (it holds only the base URI), so executors rebuild the filesystem themselves.
Timeline files are published with `create_if_absent`, which is atomic on local disks (write a temporary file,
then hard-link it to the final name: link fails if the name exists and never exposes a half-written file) and on
object stores (a conditional write, `object_store`).

Every path is relative to the base path and stays inside it: `full` refuses `..` and absolute paths, and
`inside` turns a path read from a timeline file (a plan, commit metadata) into a contained relative path or raises
CorruptFileError naming the file it came from. A relative local base path is made absolute once, on the driver,
so executors never resolve it against their own working directory.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import uuid
from dataclasses import dataclass
from functools import cached_property

import pyarrow.fs as pafs

from pyhudi.errors import CorruptFileError
from pyhudi.storage.object_store import check_conditional_writes, create_object, filesystem


@dataclass(frozen=True)
class Storage:
    """Access to one table's base path. `base_uri` may be a local path, file:// URI or an object-store URI."""

    base_uri: str

    def __post_init__(self) -> None:
        uri = str(self.base_uri)
        if "://" not in uri and not uri.startswith("file:"):
            uri = os.path.abspath(uri)       # resolved here, on the driver: executors get the absolute path
        object.__setattr__(self, "base_uri", uri)

    @cached_property
    def _resolved(self) -> tuple[pafs.FileSystem, str]:
        uri = self.base_uri.rstrip("/")
        if "://" not in uri:
            return pafs.LocalFileSystem(), os.path.abspath(uri).rstrip("/")
        return filesystem(uri)

    def __getstate__(self) -> dict[str, str]:
        return {"base_uri": self.base_uri}

    def __setstate__(self, state: dict[str, str]) -> None:
        object.__setattr__(self, "base_uri", state["base_uri"])

    @property
    def fs(self) -> pafs.FileSystem:
        return self._resolved[0]

    @property
    def base_path(self) -> str:
        return self._resolved[1]

    @property
    def is_local(self) -> bool:
        return isinstance(self.fs, pafs.LocalFileSystem)

    def full(self, relative: str) -> str:
        """Absolute filesystem path of a path relative to the table base (never outside it)."""
        if not relative:
            return self.base_path
        if relative.startswith("/") or ".." in relative.split("/"):
            raise CorruptFileError(f"path {relative!r} is not inside the table base path {self.base_path}; "
                                   "pyhudi only touches files of the table")
        return f"{self.base_path}/{relative}"

    def inside(self, path: str, source: str, allow_base: bool = False) -> str:
        """The relative path, inside the base path, of `path` read from the timeline file `source` (a full URI,
        an absolute path or a relative one). CorruptFileError naming both when it points outside the table."""
        relative = str(path)
        outside = False     # an absolute path or URI not under the base path
        for prefix in (self.uri(""), "file:" + self.base_path, self.base_path):
            if relative == prefix:
                relative = ""
                break
            if relative.startswith(prefix + "/"):
                relative = relative[len(prefix) + 1:]
                break
        else:
            outside = "://" in relative or relative.startswith(("/", "file:"))
        normal = posixpath.normpath(relative) if relative and not outside else ""
        if outside or normal.startswith("../") or normal == ".." or normal.startswith("/") \
                or (normal in ("", ".") and not allow_base) or normal != relative.rstrip("/"):
            raise CorruptFileError(f"{source} names the path {path!r}, which is not inside the table base path "
                                   f"{self.base_path}; the file is corrupt or was tampered with: restore it from "
                                   "a backup or remove it (pyhudi never follows such a path)")
        return "" if normal == "." else normal

    def uri(self, relative: str = "") -> str:
        """A URI Spark can read (file:// for local paths)."""
        full = self.full(relative)
        if self.is_local:
            return "file://" + full
        base = self.base_uri.rstrip("/")     # the scheme and authority as given (s3a://, abfss://container@...)
        return f"{base}/{relative}" if relative else base

    # --- reads ------------------------------------------------------------------------------------------
    def exists(self, relative: str) -> bool:
        return self.fs.get_file_info(self.full(relative)).type != pafs.FileType.NotFound

    def read_bytes(self, relative: str) -> bytes:
        with self.fs.open_input_stream(self.full(relative)) as stream:
            return stream.read()

    def read_text(self, relative: str) -> str:
        return self.read_bytes(relative).decode("utf-8")

    def list_files(self, relative: str, recursive: bool = False) -> list[pafs.FileInfo]:
        """Files (not directories) under a folder; empty when the folder does not exist."""
        selector = pafs.FileSelector(self.full(relative), allow_not_found=True, recursive=recursive)
        return [info for info in self.fs.get_file_info(selector) if info.type == pafs.FileType.File]

    def list_dirs(self, relative: str) -> list[str]:
        selector = pafs.FileSelector(self.full(relative), allow_not_found=True)
        return [info.base_name for info in self.fs.get_file_info(selector) if info.type == pafs.FileType.Directory]

    def file_size(self, relative: str) -> int:
        return self.fs.get_file_info(self.full(relative)).size

    # --- writes -----------------------------------------------------------------------------------------
    def makedirs(self, relative: str) -> None:
        self.fs.create_dir(self.full(relative), recursive=True)

    def write_bytes(self, relative: str, data: bytes) -> None:
        """Write a whole file; its folder is created when missing (tried first: most folders exist, and a write
        makes dozens of files, e.g. one marker per data file)."""
        try:
            self._write(relative, data)
        except FileNotFoundError:
            self.makedirs(relative.rsplit("/", 1)[0] if "/" in relative else "")
            self._write(relative, data)

    def replace(self, relative: str, data: bytes) -> None:
        """Write a whole file so a reader sees the old content or the new, never a missing or partial file: on a
        local disk a durable temporary file renamed over it; an object store's PUT is atomic already."""
        if not self.is_local:
            self.write_bytes(relative, data)
            return
        final = self.full(relative)
        os.replace(_temporary_copy(final, data, durable=True), final)

    def _write(self, relative: str, data: bytes) -> None:
        with self.fs.open_output_stream(self.full(relative)) as out:
            out.write(data)

    def create_if_absent(self, relative: str, data: bytes, durable: bool = True) -> bool:
        """Publish a file only if no file of that name exists. Returns False when it already existed.

        `durable`: the content reaches the disk before the name appears (fsync), so a power loss cannot leave a
        published name with missing content; an empty file has no content to lose and skips it, as may callers
        whose file only announces a state (the next writer never reads it back)."""
        if self.is_local:
            final = self.full(relative)
            os.makedirs(os.path.dirname(final), exist_ok=True)
            temp = _temporary_copy(final, data, durable)
            try:
                os.link(temp, final)
                return True
            except FileExistsError:
                return False
            finally:
                os.unlink(temp)
        return create_object(self.uri(relative), data)   # a conditional write (If-None-Match: *)

    def check_conditional_writes(self, relative: str) -> None:
        """Before a table's first file: its store must decide conditional creates (local disks always do), else
        ConditionalWriteError naming `relative`'s URI."""
        if not self.is_local:
            check_conditional_writes(self.uri(relative))

    def delete_file(self, relative: str) -> None:
        try:
            self.fs.delete_file(self.full(relative))
        except FileNotFoundError:
            pass

    def delete_empty_dirs(self, relative: str) -> None:
        """Remove the folder `relative` and then its parents (never the base path) while they are empty."""
        while relative:
            if self.is_local:
                try:
                    os.rmdir(self.full(relative))
                except FileNotFoundError:
                    pass
                except OSError:
                    return       # not empty
            else:
                selector = pafs.FileSelector(self.full(relative), allow_not_found=True)
                if self.fs.get_file_info(selector):
                    return
                self.delete_dir(relative)
            relative = relative.rsplit("/", 1)[0] if "/" in relative else ""

    def delete_dir(self, relative: str) -> None:
        """Delete a folder and everything below it (locally with shutil: pyarrow's delete_dir is ~10x slower on
        a marker folder of a few files, a fixed cost of every commit)."""
        try:
            if self.is_local:
                shutil.rmtree(self.full(relative))
            else:
                self.fs.delete_dir(self.full(relative))
        except FileNotFoundError:
            pass


def _temporary_copy(final: str, data: bytes, durable: bool) -> str:
    """A hidden temporary file beside local path `final` holding `data` (on disk before this returns when
    `durable` and not empty), for the caller to link or rename into place."""
    temp = f"{os.path.dirname(final)}/.{os.path.basename(final)}.{uuid.uuid4().hex}.tmp"
    with open(temp, "wb") as out:
        out.write(data)
        if durable and data:
            out.flush()
            os.fsync(out.fileno())
    return temp
