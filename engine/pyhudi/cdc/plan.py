"""Driver side of a CDC query: which file slices to compare for each commit in (begin, end] (metadata only).

For every file group a commit wrote, the change is the difference between the group's slice just before the
commit and its slice as of the commit (Hudi's HoodieCDCExtractor infers the images the same way when a commit
has no -cdc log: BASE_FILE_INSERT for a new group, AS_IS / LOG_FILE for a rewritten base file or a new log
file, BASE_FILE_DELETE for a group left empty); file groups a replacecommit replaced yield deletes of all their
records (REPLACE_COMMIT). Compaction and clustering change no record, so they yield no change.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from pyhudi import config as C
from pyhudi.cdc import check_cdc_table
from pyhudi.errors import ConfigError, CorruptFileError, TimelineError
from pyhudi.file_group.model import FileSlice
from pyhudi.table import HudiTable
from pyhudi.timeline import REPLACE_COMMIT, CommitMetadata, normalize_instant_argument

NO_DATA_CHANGE = {"compact", "cluster", "log_compact"}   # operationType values (lowercase) that move records


@dataclass(frozen=True)
class CdcTask:
    """One file group's change in one commit (pickled to an executor)."""

    instant: str
    partition: str
    file_id: str
    before: FileSlice | None         # the group's slice before the commit (None: new group)
    after: FileSlice | None          # its slice as of the commit (None: replaced)
    before_instants: frozenset       # completed writes whose log blocks count in `before`
    after_instants: frozenset
    replaced: bool = False
    cdc_logs: tuple = ()             # the commit's -cdc logs of this group (cdcStats): read as they are (AS_IS)


@dataclass
class CdcPlan:
    table: HudiTable
    mode: str
    begin: str
    end: str
    tasks: list[CdcTask]


def check_cdc_query(path: str, options: dict | None) -> tuple[HudiTable, str, str, str | None]:
    """(table, logging mode, begin, end) of a valid CDC query; a PyHudiError naming the option otherwise (on the
    driver, before Spark plans anything)."""
    config = C.HoodieConfig(options or {})
    table = HudiTable.load(path)
    mode = check_cdc_table(table)
    begin = config.get(C.BEGIN_INSTANT)
    if not begin:
        raise ConfigError(f"CDC query on {table.name} needs {C.BEGIN_INSTANT.key} (changes committed after it are "
                          "returned; use '000' or 'earliest' for all)")
    begin = "000" if str(begin).lower() in ("0", "000", "earliest") else normalize_instant_argument(begin)
    end = config.get(C.END_INSTANT)
    return table, mode, begin, normalize_instant_argument(end) if end else None


def plan_changes(path: str, options: dict | None) -> CdcPlan:
    table, mode, begin, end = check_cdc_query(path, options)
    timeline = table.timeline()
    writes = timeline.completed_writes()
    in_range = [i for i in writes if i.time > begin and (end is None or i.time <= end)]
    end = end or (in_range[-1].time if in_range else begin)
    start = next((i.time for i in writes), None)
    if start is not None and begin < start and begin != "000" and table.has_archived_instants():
        raise TimelineError(f"CDC query on {table.name}: begin instant {begin} is older than the active timeline "
                            f"(starts at {start}; older commits are archived), so their changes cannot be read; "
                            "start the query at or after the first active instant")
    views: dict[str, dict] = {}

    def slices(as_of: str | None) -> tuple[dict, object]:
        if as_of not in views:
            view = table.view(as_of=as_of, timeline=timeline) if as_of else None
            by_id = {(s.partition_path, s.file_id): s for s in view.merged_latest_slices()} if view else {}
            views[as_of] = (by_id, frozenset(view.visible_instants) if view else frozenset(), view)
        return views[as_of]

    tasks: list[CdcTask] = []
    for instant in in_range:
        meta = timeline.read_commit(instant)
        if str(meta.operation_type or "").lower() in NO_DATA_CHANGE:
            continue
        earlier = [i.time for i in writes if i.time < instant.time]
        before_by_id, before_visible, before_view = slices(earlier[-1] if earlier else None)
        after_by_id, after_visible, after_view = slices(instant.time)
        _check_files_kept(table, instant.time, meta, before_by_id, after_view)
        for partition, stats in meta.stats_by_partition().items():
            for file_id in dict.fromkeys(s.file_id for s in stats):
                key = (partition, file_id)
                logs = tuple(p for s in stats if s.file_id == file_id for p in (s.cdc_stats or {})) \
                    if mode != "OP_KEY_ONLY" else ()   # op_key_only logs hold no image: inferred all the same
                tasks.append(CdcTask(instant.time, partition, file_id, before_by_id.get(key),
                                     after_by_id.get(key), before_visible, after_visible, cdc_logs=logs))
        if instant.action == REPLACE_COMMIT:
            for partition, file_ids in (meta.replaced_file_ids or {}).items():
                for file_id in file_ids:
                    before = before_by_id.get((partition, file_id))
                    if before is not None:
                        tasks.append(CdcTask(instant.time, partition, file_id, before, None, before_visible,
                                             after_visible, replaced=True))
    return CdcPlan(table, mode, begin, end, tasks)


def cdc_log_records(storage, paths) -> pa.Table:
    """The records of a commit's -cdc logs (CDC_DATA_BLOCKs, in their SCHEMA header's Avro schema)."""
    from pyhudi.file_group.log_block import BlockType, decode_avro_content
    from pyhudi.file_group.log_file import read_log_file
    tables = []
    for path in paths:
        for block in read_log_file(storage.fs, storage.full(path)):
            if block.block_type != BlockType.CDC_DATA_BLOCK:
                raise CorruptFileError(f"CDC log {path} holds a {block.block_type.name} block; expected "
                                       "CDC_DATA_BLOCK")
            tables.append(decode_avro_content(block.content, block.header.get("SCHEMA")))
    return pa.concat_tables(tables, promote_options="permissive") if tables else None


def _check_files_kept(table: HudiTable, instant: str, meta: CommitMetadata, before_by_id: dict,
                      after_view) -> None:
    """The slices a commit changed must still exist: a cleaned file would silently drop changes."""
    for partition, stats in meta.stats_by_partition().items():
        for stat in stats:
            path, prev = stat.path, stat.prev_commit
            gone = path and not after_view.is_listed(path) and not after_view.is_replaced(partition, stat.file_id)
            if not gone and prev not in (None, "null") and not stat.is_log_file:
                before = before_by_id.get((partition, stat.file_id))
                gone = before is None or before.base_instant != prev
            if gone:
                raise TimelineError(
                    f"CDC query on {table.name}: the files commit {instant} changed (e.g. {path}) or the slice "
                    "before it are gone (cleaned or archived); start the query after a retained instant, or keep "
                    "more commits (hoodie.cleaner.commits.retained)")
