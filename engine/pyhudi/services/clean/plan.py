"""The clean planner: which file slices are due. Policies (``hoodie.cleaner.policy``, options and the earliest commit
to retain in commit/retention.py, shared with the archiver), after Hudi's CleanPlanner and CleanerUtils:

* ``KEEP_LATEST_COMMITS`` (default): the *earliest commit to retain* is the Nth-latest completed commit
  (N = ``hoodie.cleaner.commits.retained``), or the last completed commit before the oldest pending one. Per file
  group the latest slice, every slice at or after that commit, and the newest slice before it (which a query that
  started at the earliest retained commit still reads) stay; older slices go.
* ``KEEP_LATEST_BY_HOURS``: the same, with the first commit of the last ``hoodie.cleaner.hours.retained`` hours.
* ``KEEP_LATEST_FILE_VERSIONS``: the newest ``hoodie.cleaner.fileversions.retained`` slices of each file group.

Never deleted: a slice some savepoint pins, a slice a pending compaction needs. File groups replaced by a
replacecommit go entirely once the replacecommit is older than the earliest commit to retain (any age for
KEEP_LATEST_FILE_VERSIONS). A slice is its base file and log files, deleted together; a CDC table's `-cdc` logs
are log files of the slice of the commit that wrote them (as Hudi's file system view counts them), so they go with it.

With KEEP_LATEST_COMMITS the planner only looks at partitions written since the last clean's earliest commit to
retain (Hudi's incremental cleaning), so the check after each commit costs one timeline listing when nothing is due.
Data files come from the process's cached listing of the table (table/listing.py), which lists again only the
partitions new instants touched, also those of other processes.
The plan is a HoodieCleanerPlan record; services/clean/run.py writes and executes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from pyhudi.timeline.compaction_plan import read_compaction_plan
from pyhudi.commit.retention import (COMMITS_AND_COMPACTION, KEEP_LATEST_BY_HOURS, KEEP_LATEST_COMMITS,
                                      KEEP_LATEST_FILE_VERSIONS, CleanOptions, earliest_commit_to_retain)
from pyhudi.commit.timeline_metadata import (cleaner_plan, last_clean_metadata,  # noqa: F401 - re-exported
                                              read_clean_metadata, read_cleaner_plan, savepointed_files)
from pyhudi.cdc.logging import parse_cdc_log_name
from pyhudi.file_group.naming import parse_base_file_name, parse_log_file_name, partition_file, partition_of
from pyhudi.table import HudiTable
from pyhudi.table.listing import table_listing
from pyhudi.table.view import slice_logs_by_completion
from pyhudi.timeline import COMPACTION, REPLACE_COMMIT, Instant, Timeline
from pyhudi.timeline.clean_plan import CleanerPlan

SAVEPOINTED_TIMESTAMPS = "savepointed_timestamps"


def plan_clean(table: HudiTable, timeline: Timeline, opts: CleanOptions) -> CleanerPlan | None:
    """The HoodieCleanerPlan of a clean now, or None when no file is due (CleanPlanActionExecutor)."""
    storage = table.storage
    retain = earliest_commit_to_retain(timeline, opts)
    if opts.policy in (KEEP_LATEST_COMMITS, KEEP_LATEST_BY_HOURS) and retain is None:
        return None
    savepoints = [i.time for i in timeline.completed(["savepoint"])]
    partitions = _partitions_to_clean(table, timeline, opts, retain, savepoints)
    if partitions is not None and not partitions:
        return None
    pinned = savepointed_files(storage, timeline) if savepoints else set()
    files = _list_data_files(table, timeline, partitions)
    planner = _Planner(table, timeline, opts, retain, pinned)
    to_delete: dict[str, list[str]] = {}
    partitions_to_delete = []
    for partition, names in sorted(files.items()):
        doomed = planner.files_to_delete(partition, names)
        if doomed:
            to_delete[partition] = doomed
            if planner.partition_left_empty(partition, names, doomed):
                partitions_to_delete.append(partition)
    if not to_delete:
        return None
    files_by_partition = {partition: [storage.uri(partition_file(partition, name)) for name in names]
                          for partition, names in to_delete.items()}
    return cleaner_plan(retain, opts.policy, files_by_partition, partitions_to_delete,
                        {SAVEPOINTED_TIMESTAMPS: ",".join(savepoints)})


def _partitions_to_clean(table: HudiTable, timeline: Timeline, opts: CleanOptions, retain: Instant | None,
                         savepoints: list[str]) -> set[str] | None:
    """Incremental cleaning (CleanPlanner.getPartitionPathsForIncrementalCleaning): the partitions written by
    commits in [last clean's earliest commit to retain, new one). None means every partition."""
    if opts.policy == KEEP_LATEST_FILE_VERSIONS or not opts.incremental or retain is None:
        return None
    last = last_clean_metadata(table.storage, timeline)
    previous = last.earliest_commit_to_retain if last is not None else ""
    writes = timeline.completed_writes()
    if not previous or not writes or previous < writes[0].time:
        return None      # no earlier clean, or its commit was archived: look at everything
    extra = (last.extra_metadata if last is not None else None) or {}
    sp_before = [s for s in (extra.get(SAVEPOINTED_TIMESTAMPS) or "").split(",") if s]
    if set(sp_before) - set(savepoints):
        return None      # a savepoint was deleted since: its files may now be due anywhere
    partitions: set[str] = set()
    for instant in writes:
        if previous <= instant.time < retain.time:
            meta = timeline.read_commit(instant)
            partitions.update(meta.partitions)
            partitions.update((meta.replaced_file_ids or {}).keys())
    return partitions


def _list_data_files(table: HudiTable, timeline: Timeline, partitions: Iterable[str] | None) -> dict[str, list[str]]:
    """partition -> names of base and log files (with -cdc logs), from the process's listing of the table kept in step with
    `timeline` (table/listing.py: only partitions that new instants touched are listed again, so another process's
    commit is seen); restricted to `partitions` unless None."""
    wanted = None if partitions is None else set(partitions)
    out: dict[str, list[str]] = {}
    for relative, name, _size in table_listing(table.storage).files(timeline):
        partition = partition_of(relative)
        if wanted is not None and partition not in wanted:
            continue
        if parse_base_file_name(name) or parse_log_file_name(name) or parse_cdc_log_name(name):
            out.setdefault(partition, []).append(name)
    return out


@dataclass
class _Slice:
    base_instant: str
    files: list[str]        # names: base file (if any) and log files (-cdc logs included)


class _Planner:
    """CleanPlanner for one timeline: which committed slices of a partition's file groups are due."""

    def __init__(self, table: HudiTable, timeline: Timeline, opts: CleanOptions, retain: Instant | None,
                 pinned: set[str]):
        self.table = table
        self.timeline = timeline
        self.opts = opts
        self.retain = retain
        self.pinned = pinned
        writes = timeline.completed_writes()
        self.committed = {i.time for i in writes}
        self.timeline_start = next((i.time for i in timeline.instants if i.action in COMMITS_AND_COMPACTION), None)
        self.pending_compactions = {i.time for i in timeline.pending([COMPACTION])}
        self.replaced = self._replaced(writes)
        self.compaction_bases, self.compaction_groups = self._pending_compaction_groups()

    def _replaced(self, writes) -> dict[tuple[str, str], str]:
        """(partition, file id) -> time of the completed replacecommit that replaced it."""
        out = {}
        for instant in writes:
            if instant.action == REPLACE_COMMIT:
                meta = self.timeline.read_commit(instant)
                for partition, ids in (meta.replaced_file_ids or {}).items():
                    for file_id in ids:
                        out.setdefault((partition, file_id), instant.time)
        return out

    def _pending_compaction_groups(self) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
        """Per (partition, file id) a pending compaction reads: the base instant of the slice it reads, and the
        compaction's own instant, which opens the next slice."""
        bases: dict[tuple[str, str], str] = {}
        groups: dict[tuple[str, str], str] = {}
        for t in sorted(self.pending_compactions):
            for op in read_compaction_plan(self.table.storage, t).operations:
                bases[op.file_group] = op.base_instant
                groups[op.file_group] = t
        return bases, groups

    def _committed(self, instant_time: str) -> bool:
        return instant_time in self.committed or (self.timeline_start is not None
                                                  and instant_time < self.timeline_start)

    def _groups(self, partition: str, names: list[str]) -> dict[str, list[_Slice]]:
        """file id -> committed slices, newest first. Files of pending or failed writes are not the cleaner's."""
        slices: dict[tuple[str, str], _Slice] = {}
        logs: list[tuple[str, str, str]] = []      # (file id, instant in the log's name, name)
        for name in names:
            parsed = parse_base_file_name(name)
            if parsed:
                file_id, _, instant_time = parsed
                if not self._committed(instant_time):
                    continue
                slices.setdefault((file_id, instant_time), _Slice(instant_time, [])).files.insert(0, name)
                continue
            file_id, named_instant, _, _ = parse_log_file_name(name) or parse_cdc_log_name(name)
            logs.append((file_id, named_instant, name))
        if self.timeline.layout.version == 2:
            self._slice_logs_by_completion(partition, slices, logs)
        else:   # layout 1: a log file is named by the base instant of its slice
            for file_id, base_instant, name in logs:
                slices.setdefault((file_id, base_instant), _Slice(base_instant, [])).files.append(name)
        groups: dict[str, list[_Slice]] = {}
        for (file_id, base_instant), slice_ in slices.items():
            has_base = parse_base_file_name(slice_.files[0]) is not None
            if not has_base and not (self._committed(base_instant) or base_instant in self.pending_compactions):
                continue
            groups.setdefault(file_id, []).append(slice_)
        for group in groups.values():
            group.sort(key=lambda s: s.base_instant, reverse=True)
        return groups

    def _slice_logs_by_completion(self, partition: str, slices: dict[tuple[str, str], _Slice],
                                  logs: list[tuple[str, str, str]]) -> None:
        """Timeline layout 2 (Hudi 1.x): a log file is named by its delta commit and joins the slice open when that
        delta commit completed, as the file-system view slices it (a log of a failed write is the rollback's)."""
        starts: dict[str, list[str]] = {}
        for file_id, base_instant in slices:
            starts.setdefault(file_id, []).append(base_instant)
        for (group_partition, file_id), compaction_time in self.compaction_groups.items():
            if group_partition == partition:
                starts.setdefault(file_id, []).append(compaction_time)
        committed = [(file_id, written, name) for file_id, written, name in logs if self._committed(written)]
        for file_id, base_instant, name in slice_logs_by_completion(starts, committed, self._completion_of):
            slices.setdefault((file_id, base_instant), _Slice(base_instant, [])).files.append(name)

    def _completion_of(self, instant_time: str) -> str:
        return self.timeline.completion_time(instant_time) or instant_time

    def _is_pinned(self, partition: str, slice_: _Slice) -> bool:
        return any(partition_file(partition, name) in self.pinned for name in slice_.files)

    def _needed_for_compaction(self, partition: str, file_id: str, slice_: _Slice) -> bool:
        base = self.compaction_bases.get((partition, file_id))
        return base is not None and slice_.base_instant >= base

    def files_to_delete(self, partition: str, names: list[str]) -> list[str]:
        out: list[str] = []
        for file_id, group in sorted(self._groups(partition, names).items()):
            replaced_at = self.replaced.get((partition, file_id))
            if replaced_at is not None:
                # getReplacedFilesEligibleToClean: whole group once the replacecommit is before the retained one
                if self.retain is None or replaced_at < self.retain.time:
                    for slice_ in group:
                        if not self._is_pinned(partition, slice_):
                            out += slice_.files
                continue
            if self.opts.policy == KEEP_LATEST_FILE_VERSIONS:
                out += self._by_versions(partition, file_id, group)
            else:
                out += self._by_commits(partition, file_id, group)
        return out

    def _by_versions(self, partition: str, file_id: str, group: list[_Slice]) -> list[str]:
        keep = self.opts.file_versions_retained
        candidates = [s for s in group if not self._needed_for_compaction(partition, file_id, s)]
        if (partition, file_id) in self.compaction_bases:
            keep -= 1        # the slice under compaction is kept already
        out = []
        for slice_ in candidates[max(keep, 0):]:
            if not self._is_pinned(partition, slice_):
                out += slice_.files
        return out

    def _by_commits(self, partition: str, file_id: str, group: list[_Slice]) -> list[str]:
        retain = self.retain.time
        latest = group[0].base_instant
        before_retain = next((s.base_instant for s in group if s.base_instant < retain), None)
        out = []
        for slice_ in group:
            if slice_.base_instant in (latest, before_retain) or self._is_pinned(partition, slice_):
                continue
            if slice_.base_instant < retain and not self._needed_for_compaction(partition, file_id, slice_):
                out += slice_.files
        return out

    def partition_left_empty(self, partition: str, names: list[str], doomed: list[str]) -> bool:
        """True when the clean removes every data file of the partition (what is left is a replaced-away
        partition, e.g. after delete_partition); Hudi then deletes the partition folder."""
        return bool(partition) and set(names) <= set(doomed)


__all__ = ["CleanOptions", "plan_clean", "earliest_commit_to_retain", "read_clean_metadata", "read_cleaner_plan",
           "last_clean_metadata", "partition_file", "KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS",
           "KEEP_LATEST_BY_HOURS", "SAVEPOINTED_TIMESTAMPS"]
