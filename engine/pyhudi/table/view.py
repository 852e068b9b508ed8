"""The file-system view: which files make up the table as of an instant.

It takes the table's files from the process's listing cache (table/listing.py, kept in step with the timeline),
keeps base files written by completed write instants at or before T, groups them into file groups and slices, and
drops file groups replaced by a completed replacecommit.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, TypeVar

from pyhudi.errors import CorruptFileError
from pyhudi.file_group.model import BaseFile, FileGroup, FileSlice, LogFile
from pyhudi.file_group.naming import parse_base_file_name, parse_log_file_name
from pyhudi.table.listing import avro_records, table_listing
from pyhudi.timeline import CLUSTERING, COMPACTION, REPLACE_COMMIT, WRITE_ACTIONS, Instant, State, Timeline
from pyhudi.timeline.clustering_plan import RequestedReplaceMetadata
from pyhudi.timeline.compaction_plan import CompactionPlan

if TYPE_CHECKING:
    from pyhudi.table import HudiTable


K = TypeVar("K")
L = TypeVar("L")


def slice_logs_by_completion(starts: dict[K, list[str]], logs: Iterable[tuple[K, str, L]],
                             completion_of: Callable[[str], str]) -> Iterator[tuple[K, str, L]]:
    """Hudi 1.x's file slicing (timeline layout 2), for the view and the cleaner alike: a log file is named by the
    delta commit that wrote it and belongs to the slice of its file group with the greatest base instant at or
    before that delta commit's completion time (`starts`: the file group's base instants, pending compactions'
    included; grown here). A file group of log files only starts its slice at its first delta commit. `logs` are
    (file group, delta commit time, log) of completed delta commits; yields (file group, slice base instant, log)."""
    for group, written, log in sorted(logs, key=lambda item: completion_of(item[1])):
        completed = completion_of(written)
        candidates = [t for t in starts.get(group, ()) if t <= completed]
        if not candidates:
            starts.setdefault(group, []).append(written)
        yield group, max(candidates) if candidates else written, log


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

    def _replaced_file_ids(self, writes: Iterable[Instant]) -> set[tuple[str, str]]:
        replaced: set[tuple[str, str]] = set()
        for instant in writes:
            if instant.action != REPLACE_COMMIT:
                continue
            meta = self.timeline.read_commit(instant)
            for partition, file_ids in (meta.replaced_file_ids or {}).items():
                replaced.update((partition, file_id) for file_id in file_ids)
        return replaced

    @cached_property
    def file_groups(self) -> dict[tuple[str, str], FileGroup]:
        slices: dict[tuple[str, str, str], FileSlice] = {}
        logs: list[tuple[str, LogFile]] = []
        self._listed: set[str] = set()
        for relative, name, size in table_listing(self.table.storage).files(self.timeline):
            self._listed.add(relative)
            partition = relative.rsplit("/", 1)[0] if "/" in relative else ""
            parsed = parse_base_file_name(name)
            if parsed:
                file_id, token, instant_time = parsed
                if instant_time not in self.visible_instants and not self.before_timeline_start(instant_time):
                    continue
                key = (partition, file_id, instant_time)
                slice_ = slices.setdefault(key, FileSlice(partition, file_id, instant_time))
                candidate = BaseFile(relative, file_id, token, instant_time, size)
                # Two base files for one slice only happen after a failed retry; keep the newest write token.
                if slice_.base_file is None or candidate.newer_attempt_than(slice_.base_file):
                    slice_.base_file = candidate
                continue
            parsed_log = parse_log_file_name(name)
            if parsed_log:
                file_id, base_instant, version, token = parsed_log
                logs.append((partition, LogFile(relative, file_id, base_instant, version, token, size)))
        if self.timeline.layout.version == 2:
            self._slice_logs_by_completion(slices, logs)
        else:
            for partition, log in logs:
                if self.as_of is not None and log.base_instant > self.as_of:
                    continue
                key = (partition, log.file_id, log.base_instant)
                slices.setdefault(key, FileSlice(partition, log.file_id, log.base_instant)).log_files.append(log)
        groups: dict[tuple[str, str], FileGroup] = {}
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

    def _slice_logs_by_completion(self, slices: dict[tuple[str, str, str], FileSlice],
                                  logs: list[tuple[str, LogFile]]) -> None:
        """Timeline layout 2 (Hudi 1.x): logs join slices by their delta commit's completion time
        (slice_logs_by_completion), a slice a pending compaction opened included. A log of a delta commit that did
        not complete (or is past `as_of`) is not part of the table."""
        starts: dict[tuple[str, str], list[str]] = {}
        for partition, file_id, base_instant in slices:
            starts.setdefault((partition, file_id), []).append(base_instant)
        for (partition, file_id), compaction_time in self.pending_compaction_groups.items():
            starts.setdefault((partition, file_id), []).append(compaction_time)
        visible = []
        for partition, log in logs:
            written = log.base_instant
            if written in self._pending_compactions:   # a log of layout 1 (before an upgrade) named by its slice
                key = (partition, log.file_id, written)
                slices.setdefault(key, FileSlice(partition, log.file_id, written)).log_files.append(log)
            elif written in self.visible_instants or self.before_timeline_start(written):
                visible.append(((partition, log.file_id), written, log))
        for (partition, file_id), base_instant, log in slice_logs_by_completion(starts, visible, self._completion_of):
            key = (partition, file_id, base_instant)
            slices.setdefault(key, FileSlice(partition, file_id, base_instant)).log_files.append(log)

    def _completion_of(self, instant_time: str) -> str:
        """A write's completion time (its requested time when the timeline does not say: archived or legacy)."""
        return self.timeline.completion_time(instant_time) or instant_time

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
        groups: dict[tuple[str, str], str] = {}
        for instant_time in sorted(self._pending_compactions):
            path = self.timeline.path_of(Instant(instant_time, COMPACTION, State.REQUESTED))
            data = self.table.storage.read_bytes(path)
            if not data:
                continue
            for plan in avro_records(data):
                for op in CompactionPlan.from_avro(plan).operations:
                    groups[(op.partition_path, op.file_id)] = instant_time
        return groups

    @cached_property
    def pending_clustering_groups(self) -> dict[tuple[str, str], str]:
        """(partition, file id) -> instant of the pending clustering (a requested/inflight replacecommit holding
        a clustering plan) that reads it: inserts do not go to it, updates follow the update strategy."""
        groups: dict[tuple[str, str], str] = {}
        for instant in self.timeline.pending([REPLACE_COMMIT, CLUSTERING]):
            name = self.timeline.path_of(instant.with_state(State.REQUESTED))
            data = self.table.storage.read_bytes(name) if self.table.storage.exists(name) else b""
            for record in (avro_records(data) if data else ()):
                plan = RequestedReplaceMetadata.from_avro(record).clustering_plan
                for group in (plan.input_groups or ()) if plan is not None else ():
                    for slice_info in group.slices or ():
                        groups[(slice_info.partition_path or "", slice_info.file_id or "")] = instant.time
        return groups

    @property
    def busy_groups(self) -> dict[tuple[str, str], str]:
        """File groups a pending table service (compaction or clustering) works on: no inserts go to them."""
        return {**self.pending_compaction_groups, **self.pending_clustering_groups}

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
            for stat in self.timeline.read_commit(instant).write_stats:
                path, size = stat.path, stat.file_size_in_bytes
                if path in wanted and isinstance(size, int) and size > 0:
                    start = stat.log_offset if isinstance(stat.log_offset, int) else 0
                    extents.setdefault(path, []).append((start, start + size))
        return extents

    def check_committed_sizes(self, slices: list[FileSlice]) -> dict[str, list[tuple[int, int]]]:
        """Refuse files shorter than their commits wrote them (truncated after the commit); returns the extents
        so log readers can tell a damaged committed block from the torn tail of a failed write."""
        extents = self.committed_extents(slices)
        files = [(f, s.base_file is None or f is not s.base_file) for s in slices
                 for f in ([s.base_file] if s.base_file is not None else []) + list(s.log_files)]
        sizes = self._sizes_now([f.path for f, _ in files if f.path in extents])
        for file, is_log in files:
            end = max((stop for _, stop in extents.get(file.path, [])), default=0)
            size = sizes.get(file.path, file.size)
            if size < end:
                raise CorruptFileError(
                    f"Hudi {'log' if is_log else 'base'} file {file.path} of table {self.table.name} is {size} "
                    f"bytes but its commit wrote {end}: it was truncated. Restore the file, or roll back the "
                    "instant that wrote it.")
        return extents

    def check_base_files(self, partitions: Iterable[str] | None = None) -> None:
        """check_committed_sizes for the latest base files (of `partitions`, default all): what a write reads
        (index footers, copy-on-write merges). A writer calls it before its instant begins, so a truncated file
        stops it with CorruptFileError naming the file, before anything is written."""
        slices = [FileSlice(s.partition_path, s.file_id, s.base_instant, s.base_file)
                  for s in self.latest_slices(partitions) if s.base_file is not None]
        self.check_committed_sizes(slices)

    def _sizes_now(self, paths: list[str]) -> dict[str, int]:
        """Sizes on storage now (one stat call): the listing may predate damage done outside any instant. A file
        gone meanwhile makes the process list the table again next time."""
        if not paths:
            return {}
        storage = self.table.storage
        infos = storage.fs.get_file_info([storage.full(p) for p in paths])
        if any(info.size is None for info in infos):
            table_listing(storage).invalidate()
        return {p: info.size for p, info in zip(paths, infos) if info.size is not None}

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

