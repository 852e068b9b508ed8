"""Cleaning the metadata table's `files` partition, as Java's metadata writer does (cleanIfNecessary): once
AFTER_COMPACTION instants have completed on the metadata timeline since its last compaction (a reader may still be
reading the slice before it), the file slices the data table's cleaner policy no longer retains go, with 1.2x its
retention (options.py): under KEEP_LATEST_COMMITS and KEEP_LATEST_BY_HOURS the slices older than the earliest
retained commit, except the newest one before it; under KEEP_LATEST_FILE_VERSIONS all but the newest slices, under a
clean instant of the metadata table. Without it every compaction's base HFile and every delta commit's log file would
stay forever. A clean that a crash interrupted is finished by the next sync (its plan deletes what is still there).
"""

from __future__ import annotations

import time

from pyhudi.timeline import avro_record as avro
from pyhudi.timeline.clean_plan import CleanerPlan
from pyhudi.commit.metadata_table.files_slice import FILE_GROUP, partition_files
from pyhudi.commit.metadata_table.options import KEEP_LATEST_FILE_VERSIONS, MetadataTableOptions
from pyhudi.commit.metadata_table.records import FILES_PARTITION
from pyhudi.commit.retention import earliest_commit_to_retain
from pyhudi.commit.timeline_metadata import clean_metadata, cleaner_plan
from pyhudi.storage import Storage
from pyhudi.table.view import slice_logs_by_completion
from pyhudi.testing import crash_point
from pyhudi.timeline import (CLEAN, COMMIT, Instant, State, Timeline, complete_instant, create_requested,
                             instant_file, new_instant_time, transition_to_inflight)

AFTER_COMPACTION = 3     # HoodieBackedTableMetadataWriter.cleanIfNecessary's buffer for readers


def clean_if_due(mdt: Storage, mdt_timeline: Timeline, data_timeline: Timeline, after: str,
                 options: MetadataTableOptions) -> Instant | None:
    """Finish a clean a crash left pending, then clean the files partition if due, at an instant time after
    `after`; returns the completed clean instant, or None when nothing was due."""
    for pending in mdt_timeline.pending([CLEAN]):
        _execute(mdt, pending, mdt_timeline)
    compactions = mdt_timeline.completed([COMMIT])
    if compactions and sum(1 for i in mdt_timeline.completed() if i.time > compactions[-1].time) < AFTER_COMPACTION:
        return None
    retain = None
    if options.cleaner_policy == KEEP_LATEST_FILE_VERSIONS:
        slices = file_slices(mdt, mdt_timeline, data_timeline)
        doomed = [name for t in sorted(slices)[:-options.file_versions_retained] for name in slices[t]]
    else:
        retain = earliest_commit_to_retain(mdt_timeline, options.clean_options())
        if retain is None:   # nothing is old enough: no listing of the partition
            return None
        doomed = files_before(file_slices(mdt, mdt_timeline, data_timeline), retain.time)
    if not doomed:
        return None
    files = {FILES_PARTITION: [mdt.uri(f"{FILES_PARTITION}/{name}") for name in sorted(doomed)]}
    plan = cleaner_plan(retain, options.cleaner_policy, files, [], {})
    requested = create_requested(mdt, new_instant_time(after=after, zone=mdt_timeline.zone), CLEAN,
                                 plan.to_bytes())
    return _execute(mdt, requested, mdt_timeline)


def file_slices(mdt: Storage, mdt_timeline: Timeline, data_timeline: Timeline) -> dict[str, list[str]]:
    """The files partition's file slices: base instant -> names of its base file and log files (logs sliced by
    completion time, as readers slice them)."""
    bases, logs = partition_files(mdt, mdt_timeline, data_timeline)
    slices: dict[str, list[str]] = {instant: [name] for instant, name in bases}
    starts = {FILE_GROUP: list(slices)}
    completion = {instant: done_at for done_at, _, instant in logs}
    in_groups = [(FILE_GROUP, instant, name) for _, name, instant in logs]
    for _, base_instant, name in slice_logs_by_completion(starts, in_groups, lambda t: completion.get(t, t)):
        slices.setdefault(base_instant, []).append(name)
    return slices


def files_before(slices: dict[str, list[str]], retain: str) -> list[str]:
    """Names of the files in slices older than the slice open at `retain` (KEEP_LATEST_COMMITS over the one file
    group: the latest slice and the newest slice before `retain` stay)."""
    ordered = sorted(slices)
    before_retain = [t for t in ordered if t < retain]
    keep = {ordered[-1], before_retain[-1]} if before_retain else set(ordered)
    return sorted(name for t in ordered if t < retain and t not in keep for name in slices[t])


def _execute(mdt: Storage, requested: Instant, mdt_timeline: Timeline) -> Instant:
    """requested -> inflight (the same plan), delete the planned files, completed with its clean metadata."""
    started = time.monotonic()
    source = instant_file(mdt, requested.with_state(State.REQUESTED))
    plan_bytes = mdt.read_bytes(source)
    plan = CleanerPlan.from_avro(avro.from_bytes(
        plan_bytes, f"{mdt.base_uri}/{source}",
        fix="set hoodie.metadata.enable=false to drop the metadata table and let Java rebuild it"))
    inflight = requested if requested.state == State.INFLIGHT else transition_to_inflight(mdt, requested, plan_bytes)
    crash_point("metadata_table.clean.after_inflight")
    deleted: dict[str, list[str]] = {}
    for partition, files in (plan.file_paths or {}).items():
        for info in files:
            relative = mdt.inside(info.file_path or "", source)
            if mdt.exists(relative):
                mdt.delete_file(relative)
            deleted.setdefault(partition, []).append(relative.rsplit("/", 1)[-1])
    last = [i.time for i in mdt_timeline.completed() if i.action != CLEAN and i.time < requested.time]
    metadata = clean_metadata(requested.time, plan, deleted, set(), set(), last[-1] if last else "",
                              int((time.monotonic() - started) * 1000))
    return complete_instant(mdt, inflight, metadata.to_bytes())
