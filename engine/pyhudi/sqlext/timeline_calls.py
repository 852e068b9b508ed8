"""CALL procedures over the timeline: the commits and the files they wrote (show_commits, show_commits_metadata,
show_commit_files), and undoing them (rollback_to_instant, the savepoint procedures)."""

from __future__ import annotations

from pyspark.sql import types as T

from pyhudi.client import undo
from pyhudi.errors import SqlError
from pyhudi.sqlext.call_args import Param
from pyhudi.sqlext.procedure_registry import procedure, schema, table_and_timeline, table_path

_S, _L, _I, _B, _D = T.StringType(), T.LongType(), T.IntegerType(), T.BooleanType(), T.DoubleType()

_COMMITS_OUT = schema(("commit_time", _S), ("action", _S), ("total_bytes_written", _L),
                       ("total_files_added", _L), ("total_files_updated", _L), ("total_partitions_written", _L),
                       ("total_records_written", _L), ("total_update_records_written", _L), ("total_errors", _L))


@procedure("show_commits", [Param("table", True), Param("limit", default=10)], _COMMITS_OUT)
def _show_commits(spark, args):
    """Completed commits, newest first, with their write totals."""
    _, timeline = table_and_timeline(table_path(spark, args))
    rows = []
    for instant in reversed(timeline.completed_writes()[-int(args["limit"]):]):
        meta = timeline.read_commit(instant)
        stats = meta.write_stats
        rows.append((instant.time, instant.action, sum(s.total_write_bytes or 0 for s in stats),
                     sum(1 for s in stats if s.prev_commit in (None, "null")),
                     sum(1 for s in stats if s.prev_commit not in (None, "null")),
                     len(meta.stats_by_partition()), sum(s.num_writes or 0 for s in stats),
                     sum(s.num_update_writes or 0 for s in stats), sum(s.total_write_errors or 0 for s in stats)))
    return rows


_COMMITS_META_OUT = schema(
    ("commit_time", _S), ("action", _S), ("partition", _S), ("file_id", _S), ("previous_commit", _S),
    ("num_writes", _L), ("num_inserts", _L), ("num_deletes", _L), ("num_update_writes", _S), ("total_errors", _L),
    ("total_log_blocks", _L), ("total_corrupt_logblocks", _L), ("total_rollback_blocks", _L),
    ("total_log_records", _L), ("total_updated_records_compacted", _L), ("total_bytes_written", _L))


@procedure("show_commits_metadata", [Param("table", True), Param("limit", default=10)], _COMMITS_META_OUT)
def _show_commits_metadata(spark, args):
    """One row per file written by each of the latest commits."""
    _, timeline = table_and_timeline(table_path(spark, args))
    rows = []
    for instant in reversed(timeline.completed_writes()[-int(args["limit"]):]):
        for s in timeline.read_commit(instant).write_stats:
            rows.append((instant.time, instant.action, s.partition_path, s.file_id, s.prev_commit,
                         s.num_writes or 0, s.num_inserts or 0, s.num_deletes or 0,
                         str(s.num_update_writes or 0), s.total_write_errors or 0, s.total_log_blocks or 0,
                         s.total_corrupt_log_block or 0, s.total_rollback_blocks or 0,
                         s.total_log_records or 0, s.total_updated_records_compacted or 0,
                         s.total_write_bytes or 0))
    return rows


@procedure("commits_compare", [Param("table", True), Param("path", True)], schema(("compare_detail", _S)))
def _commits_compare(spark, args):
    """How far the table's completed commits are ahead of or behind those of the table at `path` (Hudi's
    commits_compare: the commits one has after the other's latest)."""
    source, source_timeline = table_and_timeline(table_path(spark, {"table": args["table"]}))
    _, target_timeline = table_and_timeline(str(args["path"]))
    source_times = [i.time for i in source_timeline.completed_writes()]
    target_times = [i.time for i in target_timeline.completed_writes()]
    source_latest, target_latest = (source_times or ["0"])[-1], (target_times or ["0"])[-1]
    if target_latest > source_latest:
        behind = [t for t in target_times if t > source_latest]
        return [(f"Source {source.name} is behind by {len(behind)} commits. Commits to catch up - "
                 f"[{', '.join(behind)}]",)]
    ahead = [t for t in source_times if t > target_latest]
    return [(f"Source {source.name} is ahead by {len(ahead)} commits. Commits to catch up - [{', '.join(ahead)}]",)]


_COMMIT_FILES_OUT = schema(("action", _S), ("partition_path", _S), ("file_id", _S), ("previous_commit", _S),
                            ("total_records_updated", _L), ("total_records_written", _L),
                            ("total_bytes_written", _L), ("total_errors", _L), ("file_size", _L))


@procedure("show_commit_files", [Param("table", True), Param("instant_time", True), Param("limit", default=10)],
           _COMMIT_FILES_OUT)
def _show_commit_files(spark, args):
    """The files one commit wrote."""
    _, timeline = table_and_timeline(table_path(spark, args))
    instant = timeline.find(str(args["instant_time"]))
    if instant is None or not instant.is_completed:
        raise SqlError(f"show_commit_files: no completed commit {args['instant_time']}")
    rows = [(instant.action, s.partition_path, s.file_id, s.prev_commit,
             s.num_update_writes or 0, s.num_writes or 0, s.total_write_bytes or 0,
             s.total_write_errors or 0, s.file_size_in_bytes or 0)
            for s in timeline.read_commit(instant).write_stats]
    return rows[:int(args["limit"])]


@procedure("rollback_to_instant", [Param("table", True), Param("instant_time", True)],
           schema(("rollback_result", _B)))
def _rollback_to_instant(spark, args):
    """Roll back one commit (the latest) of the table."""
    undo.rollback_to_instant(spark, table_path(spark, args), str(args["instant_time"]))
    return [(True,)]


@procedure("create_savepoint", [Param("table", True), Param("commit_time", True), Param("user", default=""),
                                Param("comments", default="")], schema(("create_savepoint_result", _B)))
def _create_savepoint(spark, args):
    """Savepoint a completed commit (its files survive cleaning)."""
    undo.create_savepoint(spark, table_path(spark, args), str(args["commit_time"]), args["user"] or "",
                          args["comments"] or "")
    return [(True,)]


@procedure("show_savepoints", [Param("table", True)], schema(("savepoint_time", _S)))
def _show_savepoints(spark, args):
    """Savepointed instants, newest first."""
    return [(i.time,) for i in undo.show_savepoints(spark, table_path(spark, args))]


@procedure("delete_savepoint", [Param("table", True), Param("instant_time", True)],
           schema(("delete_savepoint_result", _B)))
def _delete_savepoint(spark, args):
    undo.delete_savepoint(spark, table_path(spark, args), str(args["instant_time"]))
    return [(True,)]


@procedure("rollback_to_savepoint", [Param("table", True), Param("instant_time", True)],
           schema(("rollback_savepoint_result", _B)))
def _rollback_to_savepoint(spark, args):
    """Restore the table to a savepoint."""
    undo.restore_to_savepoint(spark, table_path(spark, args), str(args["instant_time"]))
    return [(True,)]
