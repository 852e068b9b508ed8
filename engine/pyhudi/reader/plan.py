"""What a query reads: the files of a snapshot, a time-travel instant, or an incremental range.

Both readers (Spark's native parquet scan in `pyhudi.read`, and the Python data source `hudi`) start from the
same ScanPlan, so they return the same rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow as pa

from pyhudi import config as C
from pyhudi.errors import ConfigError, PyHudiError, TimelineError
from pyhudi.file_group.base_file import META_COLUMNS
from pyhudi.file_group.model import FileSlice
from pyhudi.schema import avro_to_arrow
from pyhudi.table import HudiTable
from pyhudi.timeline import (WRITE_ACTIONS, CommitMetadata, Instant, State, Timeline, normalize_instant_argument,
                             parse_commit)
from pyhudi.timeline.lsm_history import ArchivedInstant, read_history


@dataclass
class ScanPlan:
    table: HudiTable
    schema: pa.Schema                       # meta columns + data columns (storage types)
    slices: list[FileSlice] = field(default_factory=list)
    begin_exclusive: str | None = None     # incremental: keep rows with begin < _hoodie_commit_time <= end
    end_inclusive: str | None = None
    base_only: bool = False                 # read_optimized
    visible_instants: frozenset = frozenset()
    committed_before: str | None = None     # log blocks older than the active timeline (archived) count
    committed_extents: dict = field(default_factory=dict)   # path -> byte ranges visible commits wrote
    numbers_as_text: bool = False           # some string column was stored as a number (see stored_as_numbers)
    commit_times: frozenset | None = None   # incremental on Hudi 1.x: only these commits' rows (Hudi's IN filter)

    @property
    def base_paths(self) -> list[str]:
        return [s.base_file.path for s in self.slices if s.base_file is not None]

    @property
    def needs_merge(self) -> bool:
        """True when some slice has log files to merge (merge-on-read snapshot or incremental)."""
        return not self.base_only and any(s.log_files for s in self.slices)

    @property
    def ordering_field(self) -> str | None:
        return self.table.properties.precombine_field

    @property
    def payload_class(self) -> str:
        return self.table.properties.payload_class


def plan_scan(path: str, options: dict | None = None) -> ScanPlan:
    config = C.HoodieConfig(options or {})
    table = HudiTable.load(path)
    timeline = table.timeline()
    query_type = config.get(C.QUERY_TYPE)
    as_of = config.get(C.AS_OF_INSTANT)
    as_of = normalize_instant_argument(as_of) if as_of else None
    schema = table_schema(table, timeline)

    if query_type == "incremental":
        return _plan_incremental(table, timeline, config, schema)

    view = table.view(as_of=as_of, timeline=timeline)
    base_only = query_type == "read_optimized"
    slices = view.merged_latest_slices()
    if base_only:
        slices = [s for s in slices if s.base_file is not None]
    return ScanPlan(table, schema, slices, None, None, base_only, frozenset(view.visible_instants),
                    view.timeline_start, view.check_committed_sizes(slices),
                    stored_as_numbers(table, timeline, schema))


_NUMBERS = ("int", "long", "float", "double")


def stored_as_numbers(table: HudiTable, timeline: Timeline, schema: pa.Schema) -> bool:
    """Whether a column the table schema has as a string was written as a number by an earlier schema (the create
    schema or a commit's): Hudi's number -> string evolution, and Hudi 1.1's timestamp key generators, which record
    a number partition column as a string. Files may then hold numbers where the schema says string, which
    Spark's parquet scan cannot convert; the reader casts them per file."""
    strings = {f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)}
    if not strings:
        return False
    # each distinct schema text once: commits usually repeat one schema, and this runs on every read's plan
    schemas = {table.properties.get(C.TABLE_CREATE_SCHEMA.key)}
    schemas.update(timeline.read_commit(i).schema for i in timeline.completed_writes())
    for text in schemas:
        if not text:
            continue
        try:
            fields = json.loads(text).get("fields") or []
        except (ValueError, AttributeError):
            continue
        for fld in fields:
            kinds = fld.get("type") if isinstance(fld.get("type"), list) else [fld.get("type")]
            if fld.get("name") in strings and any(k in _NUMBERS for k in kinds):
                return True
    return False


def _plan_incremental(table: HudiTable, timeline: Timeline, config: C.HoodieConfig, schema: pa.Schema) -> ScanPlan:
    """Rows committed in (begin, end]: the latest slices (as of end) of the file groups the commits in range
    wrote, filtered by commit time (on Hudi 1.x tables the commits that completed in range: `_completed_in`).
    Archived commits in range are read from the LSM history (layout 2, as Hudi 1.x does). As Hudi's
    IncrementalRelation, when the range reaches archived instants of a layout 1 table or a file those commits
    wrote is gone (cleaned), only a full table scan filtered by commit time is complete: done under
    hoodie.datasource.read.incr.fallback.fulltablescan.enable, refused otherwise."""
    if not table.properties.populate_meta_fields:   # as Hudi's IncrementalRelation
        raise ConfigError(f"incremental queries are not supported on table {table.name}: it was written with "
                          f"{C.POPULATE_META_FIELDS.key}=false (virtual keys), so its records carry no commit "
                          "time; read a snapshot, or time travel with as.of.instant")
    begin = config.get(C.BEGIN_INSTANT)
    if not begin:
        raise ConfigError(f"incremental query on {table.name} needs {C.BEGIN_INSTANT.key} "
                          "(rows committed after it are returned; use '000' for all)")
    begin = normalize_instant_argument(begin) if begin not in ("0", "000") else "000"
    end = config.get(C.END_INSTANT)
    end = normalize_instant_argument(end) if end else None
    history = _archived_writes(table, timeline)
    completed = sorted([*history, *timeline.completed_writes()], key=lambda i: i.time)
    commit_times = None
    if timeline.layout.version == 2:
        writes = _completed_in(completed, begin, end)
        commit_times = frozenset(w.time for w in writes)
        if writes:   # the range of requested times holding them (the rows are kept by commit_times)
            begin = max((w.time for w in completed if w.time < writes[0].time), default="000")
        end = writes[-1].time if writes else begin
    else:
        writes = [i for i in completed if i.time > begin and (end is None or i.time <= end)]
        end = end or (writes[-1].time if writes else begin)
    view = table.view(as_of=end, timeline=timeline)
    touched, missing = set(), []
    for instant in writes:
        metadata = _parse_archived(table, timeline, history[instant]) if instant in history \
            else timeline.read_commit(instant)
        for partition, stats in metadata.stats_by_partition().items():
            for stat in stats:
                touched.add((partition, stat.file_id))
                if stat.path and not view.is_replaced(partition, stat.file_id) and not view.is_listed(stat.path):
                    missing.append(stat.path)
    archived = [] if history else [name for name, instant in (("begin", begin), ("end", end))
                                   if _archived(table, view, instant)]
    if archived or missing:
        reason = (f"the {' and '.join(archived)} instant of ({begin}, {end}] is older than the active timeline "
                  f"(archived)" if archived else f"{len(missing)} file(s) its commits wrote are gone (cleaned), "
                  f"e.g. {missing[0]}")
        if not config.get(C.INCR_FALLBACK_FULL_SCAN):
            raise TimelineError(
                f"incremental query on {table.name}: {reason}, so reading the commits in range would silently "
                f"miss rows. Set {C.INCR_FALLBACK_FULL_SCAN.key}=true to fall back to a full table scan filtered "
                "by commit time, or start from an instant on the active timeline.")
        slices = view.merged_latest_slices()          # full table scan as of end, filtered by commit time
    else:
        slices = [s for s in view.merged_latest_slices() if (s.partition_path, s.file_id) in touched]
    return ScanPlan(table, schema, slices, begin, end, False, frozenset(view.visible_instants),
                    view.timeline_start, view.check_committed_sizes(slices),
                    stored_as_numbers(table, timeline, schema), commit_times)


def _archived_writes(table: HudiTable, timeline: Timeline) -> dict[Instant, ArchivedInstant]:
    """Timeline layout 2: the completed writes the LSM history holds, as Hudi 1.x's incremental queries read them
    (IncrementalQueryAnalyzer); {} on layout 1 or without a history. Hudi 0.x's archived timeline is not read for
    these queries, as Hudi 0.x does not. Only the writes in a query's range get their metadata parsed."""
    if timeline.layout.version != 2 or not table.has_archived_instants():
        return {}
    return {Instant(archived.time, archived.action, State.COMPLETED, archived.completion_time): archived
            for archived in read_history(table.storage, timeline.layout.history_folder)
            if archived.action in WRITE_ACTIONS and archived.metadata}


def _parse_archived(table: HudiTable, timeline: Timeline, archived: ArchivedInstant) -> CommitMetadata:
    """The commit metadata of an archived write (its completed file's bytes, kept in the LSM history)."""
    return parse_commit(archived.metadata or b"", f"{table.storage.base_uri}/{timeline.layout.history_folder} "
                                                  f"({archived.time} {archived.action})")


def _completed_in(writes: list, begin: str, end: str | None) -> list:
    """Hudi 1.x (timeline layout 2, IncrementalQueryAnalyzer): the commits that *completed* in (begin, end], by
    requested time (`writes`: every completed write, archived ones included). Their rows carry their requested
    times, and concurrent writers overlap (a compaction planned before a delta commit completes after it), so the
    rows are kept by that set of times, not by a range. The file slices are those as of the latest requested time
    among them, as Hudi 1.x's incremental relation lists them."""

    def completion(instant) -> str:
        return instant.completion_time or instant.time

    return [w for w in writes if completion(w) > begin and (end is None or completion(w) <= end)]


def _archived(table: HudiTable, view, instant_time: str) -> bool:
    """Hudi's isBeforeTimelineStarts, counted only when instants were actually archived (or the active
    timeline starts after the query instant for another reason, e.g. a restore)."""
    return view.timeline_start is not None and instant_time < view.timeline_start \
        and table.has_archived_instants()


def keeps_commit_arrow(column, begin: str, end: str, commit_times: frozenset | None):
    """The pyarrow mask of an incremental query's rows (`column`: their _hoodie_commit_time)."""
    import pyarrow.compute as pc
    if commit_times is not None:
        return pc.is_in(column, value_set=pa.array(sorted(commit_times), pa.string()))
    return pc.and_(pc.greater(column, begin), pc.less_equal(column, end))


def table_schema(table: HudiTable, timeline=None) -> pa.Schema:
    """Meta columns + the latest writer schema (from the timeline or, for older tables, a base file)."""
    avro = table.latest_avro_schema(timeline)
    if avro is not None:
        data = avro_to_arrow(avro)
    else:
        files = table.view(timeline=timeline).latest_base_files()
        if not files:
            raise PyHudiError(f"table {table.name} has no schema yet: write to it first")
        from pyhudi.file_group.base_file import read_base_file
        data = read_base_file(table.storage, files[0].path).schema
    fields = [pa.field(c, pa.string()) for c in META_COLUMNS]
    fields += [f for f in data if f.name not in META_COLUMNS]
    return pa.schema(fields)
