"""CALL procedures with Hudi's names, arguments and result columns (hudi-spark .../command/procedures/*.scala).

`PROCEDURES` maps a procedure name to a Procedure: its parameters (named `table => 't'` or positional, in
Hudi's order) and its output StructType; `call(spark, "name(args)")` runs one. Engine services are imported
lazily: a service that is not part of this build raises SqlError saying so.
"""

from __future__ import annotations

import statistics

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from pyhudi.errors import SqlError
from pyhudi.sqlext.call_args import Param, Procedure, bind, parse_call

_S, _L, _I, _B, _D = T.StringType(), T.LongType(), T.IntegerType(), T.BooleanType(), T.DoubleType()


def _schema(*columns: tuple[str, T.DataType]) -> T.StructType:
    return T.StructType([T.StructField(n, t, True) for n, t in columns])


def call(spark: SparkSession, text: str) -> DataFrame:
    name, positional, named = parse_call(text)
    proc = PROCEDURES.get(name)
    if proc is None:
        raise SqlError(f"unknown procedure {name!r}; available: {', '.join(sorted(PROCEDURES))}")
    args = bind(proc, positional, named)
    return spark.createDataFrame(proc.run(spark, args), proc.output)


def _path(spark: SparkSession, args: dict) -> str:
    """The table's base path from `table` (a catalog name) or `path`."""
    return _target(spark, args)[0]


def _target(spark: SparkSession, args: dict) -> tuple[str, dict]:
    """(base path, the hoodie.* settings that apply: the table's TBLPROPERTIES under the session's SET hoodie.*
    and the statement's options, as for a write) from `table` or `path`."""
    from pyhudi.sqlext import settings
    if args.get("path"):
        return str(args["path"]), settings.combine(spark, {}, {})
    table = args.get("table")
    if not table:
        raise SqlError("the procedure needs table => 'name' or path => '/base/path'")
    from pyhudi.sqlext.query import Resolver
    entry = Resolver(spark).entry_by_name(str(table))
    if entry is None or not entry.is_hudi:
        raise SqlError(f"{table!r} is not a Hudi table in the catalog; create it with CREATE TABLE ... USING hudi "
                       "or pass path => '/base/path'")
    return entry.location, settings.combine(spark, entry.properties, {})


def _engine(name: str):
    import pyhudi
    function = getattr(pyhudi, name, None)
    if function is None:
        raise SqlError(f"pyhudi.{name} is not available yet in this build of pyhudi")
    return function


def _timeline(path: str):
    from pyhudi.table import HudiTable
    table = HudiTable.load(path)
    return table, table.timeline()


# --- procedures -------------------------------------------------------------------------------------------
PROCEDURES: dict[str, Procedure] = {}


def procedure(name: str, params: list[Param], output: T.StructType, aliases: tuple = ()):
    def register(function):
        proc = Procedure(name, params, output, function, (function.__doc__ or "").strip(), list(aliases))
        PROCEDURES[name] = proc
        for alias in aliases:
            PROCEDURES[alias] = proc
        return function
    return register


_TABLE = [Param("table"), Param("path")]
_COMPACTION_OUT = _schema(("timestamp", _S), ("operation_size", _I), ("state", _S))


@procedure("run_compaction", [Param("op", True), Param("table"), Param("path"), Param("timestamp"),
                              Param("options")], _COMPACTION_OUT)
def _run_compaction(spark, args):
    """Schedule and/or execute merge-on-read compaction (op: schedule, run/execute, scheduleAndExecute)."""
    import pyhudi
    path, settings = _target(spark, args)
    op = str(args["op"]).lower()
    ops = {"schedule": "schedule", "run": "execute", "execute": "execute", "scheduleandexecute": "scheduleAndExecute"}
    if op not in ops:
        raise SqlError(f"run_compaction: op {args['op']!r} is not one of schedule, run, execute, scheduleAndExecute")
    options = {**settings, **_options(args.get("options"))}
    instants = pyhudi.compact(spark, path, ops[op], args.get("timestamp"), options) or []
    return _compactions(path, set(instants))


@procedure("compact", [Param("table"), Param("path"), Param("op", default="scheduleAndExecute"),
                       Param("timestamp"), Param("options")], _COMPACTION_OUT)
def _compact(spark, args):
    """Short form of run_compaction: schedule and execute a compaction of the table (or `op`)."""
    return _run_compaction(spark, args)


def _options(text) -> dict:
    """Hudi's `options => 'k1=v1,k2=v2'`."""
    out = {}
    for part in str(text or "").split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def _compactions(path: str, only: set | None = None, limit: int | None = None) -> list[tuple]:
    from pyhudi.actions.compaction_plan import read_compaction_plan
    from pyhudi.timeline import COMPACTION, COMMIT
    table, timeline = _timeline(path)
    rows = []
    for instant in reversed(timeline.instants if hasattr(timeline, "instants") else []):
        is_compaction = instant.action == COMPACTION or (
            instant.action == COMMIT and timeline.find(instant.time) is not None
            and table.storage.exists(f".hoodie/{instant.time}.compaction.requested"))
        if not is_compaction or (only is not None and instant.time not in only):
            continue
        try:
            size = len(read_compaction_plan(table.storage, instant.time).operations)
        except Exception:  # noqa: BLE001 - a plan archived or unreadable: the size is unknown
            size = 0
        state = "COMPLETED" if instant.action == COMMIT else instant.state.name
        rows.append((instant.time, size, state))
        if limit and len(rows) >= limit:
            break
    return rows


@procedure("show_compaction", [Param("table"), Param("path"), Param("limit", default=20)], _COMPACTION_OUT)
def _show_compaction(spark, args):
    """Compaction instants, newest first: requested/inflight plans and completed compactions."""
    return _compactions(_path(spark, args), limit=int(args["limit"]))


_CLUSTERING_OUT = _schema(("timestamp", _S), ("input_group_size", _I), ("state", _S), ("involved_partitions", _S))


@procedure("run_clustering", [Param("table"), Param("path"), Param("predicate"), Param("order"),
                              Param("show_involved_partition", default=False, kind="bool"), Param("op"),
                              Param("order_strategy"), Param("options"), Param("instants"),
                              Param("selected_partitions")], _CLUSTERING_OUT)
def _run_clustering(spark, args):
    """Schedule and/or execute clustering (op: schedule, execute, scheduleAndExecute; default scheduleAndExecute,
    or execute with `instants`), sorted by `order`; `predicate` (partition columns only) or `selected_partitions`
    choose the partitions."""
    from pyhudi.sqlext import clustering_call
    path, settings = _target(spark, args)
    return clustering_call.run_clustering(spark, path, settings, args)


@procedure("show_clustering", [Param("table"), Param("path"), Param("limit", default=20),
                               Param("show_involved_partition", default=False, kind="bool")], _CLUSTERING_OUT)
def _show_clustering(spark, args):
    """Clustering instants (replacecommits holding a clustering plan, any state), newest first."""
    from pyhudi.sqlext import clustering_call
    return clustering_call.clustering_rows(_path(spark, args), bool(args["show_involved_partition"]),
                                           limit=int(args["limit"]))


_COMMITS_OUT = _schema(("commit_time", _S), ("action", _S), ("total_bytes_written", _L),
                       ("total_files_added", _L), ("total_files_updated", _L), ("total_partitions_written", _L),
                       ("total_records_written", _L), ("total_update_records_written", _L), ("total_errors", _L))


def _stats(meta: dict) -> list[dict]:
    return [s for group in (meta.get("partitionToWriteStats") or {}).values() for s in group]


@procedure("show_commits", [Param("table", True), Param("limit", default=10)], _COMMITS_OUT)
def _show_commits(spark, args):
    """Completed commits, newest first, with their write totals."""
    _, timeline = _timeline(_path(spark, args))
    rows = []
    for instant in reversed(timeline.completed_writes()[-int(args["limit"]):]):
        meta = timeline.read_metadata(instant)
        stats = _stats(meta)
        rows.append((instant.time, instant.action, sum(s.get("totalWriteBytes", 0) for s in stats),
                     sum(1 for s in stats if s.get("prevCommit") in (None, "null")),
                     sum(1 for s in stats if s.get("prevCommit") not in (None, "null")),
                     len(meta.get("partitionToWriteStats") or {}), sum(s.get("numWrites", 0) for s in stats),
                     sum(s.get("numUpdateWrites", 0) for s in stats), sum(s.get("totalWriteErrors", 0) for s in stats)))
    return rows


_COMMITS_META_OUT = _schema(
    ("commit_time", _S), ("action", _S), ("partition", _S), ("file_id", _S), ("previous_commit", _S),
    ("num_writes", _L), ("num_inserts", _L), ("num_deletes", _L), ("num_update_writes", _S), ("total_errors", _L),
    ("total_log_blocks", _L), ("total_corrupt_logblocks", _L), ("total_rollback_blocks", _L),
    ("total_log_records", _L), ("total_updated_records_compacted", _L), ("total_bytes_written", _L))


@procedure("show_commits_metadata", [Param("table", True), Param("limit", default=10)], _COMMITS_META_OUT)
def _show_commits_metadata(spark, args):
    """One row per file written by each of the latest commits."""
    _, timeline = _timeline(_path(spark, args))
    rows = []
    for instant in reversed(timeline.completed_writes()[-int(args["limit"]):]):
        for s in _stats(timeline.read_metadata(instant)):
            rows.append((instant.time, instant.action, s.get("partitionPath"), s.get("fileId"), s.get("prevCommit"),
                         s.get("numWrites", 0), s.get("numInserts", 0), s.get("numDeletes", 0),
                         str(s.get("numUpdateWrites", 0)), s.get("totalWriteErrors", 0), s.get("totalLogBlocks", 0),
                         s.get("totalCorruptLogBlock", 0), s.get("totalRollbackBlocks", 0),
                         s.get("totalLogRecords", 0), s.get("totalUpdatedRecordsCompacted", 0),
                         s.get("totalWriteBytes", 0)))
    return rows


_COMMIT_FILES_OUT = _schema(("action", _S), ("partition_path", _S), ("file_id", _S), ("previous_commit", _S),
                            ("total_records_updated", _L), ("total_records_written", _L),
                            ("total_bytes_written", _L), ("total_errors", _L), ("file_size", _L))


@procedure("show_commit_files", [Param("table", True), Param("instant_time", True), Param("limit", default=10)],
           _COMMIT_FILES_OUT)
def _show_commit_files(spark, args):
    """The files one commit wrote."""
    _, timeline = _timeline(_path(spark, args))
    instant = timeline.find(str(args["instant_time"]))
    if instant is None or not instant.is_completed:
        raise SqlError(f"show_commit_files: no completed commit {args['instant_time']}")
    rows = [(instant.action, s.get("partitionPath"), s.get("fileId"), s.get("prevCommit"),
             s.get("numUpdateWrites", 0), s.get("numWrites", 0), s.get("totalWriteBytes", 0),
             s.get("totalWriteErrors", 0), s.get("fileSizeInBytes", 0))
            for s in _stats(timeline.read_metadata(instant))]
    return rows[:int(args["limit"])]


@procedure("rollback_to_instant", [Param("table", True), Param("instant_time", True)],
           _schema(("rollback_result", _B)))
def _rollback_to_instant(spark, args):
    """Roll back one commit (the latest) of the table."""
    return [(bool(_engine("rollback_to_instant")(spark, _path(spark, args), str(args["instant_time"]))),)]


@procedure("create_savepoint", [Param("table", True), Param("commit_time", True), Param("user", default=""),
                                Param("comments", default="")], _schema(("create_savepoint_result", _B)))
def _create_savepoint(spark, args):
    """Savepoint a completed commit (its files survive cleaning)."""
    _engine("create_savepoint")(spark, _path(spark, args), str(args["commit_time"]), args["user"] or "",
                                args["comments"] or "")
    return [(True,)]


@procedure("show_savepoints", [Param("table", True)], _schema(("savepoint_time", _S)))
def _show_savepoints(spark, args):
    """Savepointed instants, newest first."""
    return [(t,) for t in _engine("show_savepoints")(spark, _path(spark, args))]


@procedure("delete_savepoint", [Param("table", True), Param("instant_time", True)],
           _schema(("delete_savepoint_result", _B)))
def _delete_savepoint(spark, args):
    return [(bool(_engine("delete_savepoint")(spark, _path(spark, args), str(args["instant_time"]))),)]


@procedure("rollback_to_savepoint", [Param("table", True), Param("instant_time", True)],
           _schema(("rollback_savepoint_result", _B)))
def _rollback_to_savepoint(spark, args):
    """Restore the table to a savepoint."""
    return [(bool(_engine("restore_to_savepoint")(spark, _path(spark, args), str(args["instant_time"]))),)]


_CLEAN_OUT = _schema(("start_clean_time", _S), ("time_taken_in_millis", _L), ("total_files_deleted", _I),
                     ("earliest_commit_to_retain", _S), ("bootstrap_part_metadata", _S), ("version", _I))


@procedure("run_clean", [Param("table"), Param("schedule_in_line", default=True), Param("clean_policy"),
                         Param("retain_commits"), Param("hours_retained"), Param("file_versions_retained"),
                         Param("trigger_strategy"), Param("trigger_max_commits"), Param("options"), Param("path")],
           _CLEAN_OUT, aliases=("clean",))
def _run_clean(spark, args):
    """Delete file versions the cleaner policy no longer retains (the table's hoodie.cleaner.* TBLPROPERTIES
    unless the call's arguments say otherwise)."""
    path, settings = _target(spark, args)
    options = {**settings, **_options(args.get("options"))}
    for arg, key in (("clean_policy", "hoodie.cleaner.policy"), ("retain_commits", "hoodie.cleaner.commits.retained"),
                     ("hours_retained", "hoodie.cleaner.hours.retained"),
                     ("file_versions_retained", "hoodie.cleaner.fileversions.retained")):
        if args.get(arg) is not None:
            options[key] = str(args[arg])
    result = _engine("clean")(spark, path, options)
    if not result:
        return []
    return [(result.get("startCleanTime"), result.get("timeTakenInMillis"), result.get("totalFilesDeleted"),
             result.get("earliestCommitToRetain"), str(result.get("bootstrapPartitionMetadata") or "{}"),
             result.get("version", 2))]


@procedure("archive_commits", [Param("table"), Param("path"), Param("min_commits", default=20),
                               Param("max_commits", default=30), Param("retain_commits", default=10),
                               Param("enable_metadata", default=False)], _schema(("result", _I)))
def _archive_commits(spark, args):
    """Move old completed instants to the archived timeline (0 = success, as Hudi returns)."""
    _engine("archive")(spark, _path(spark, args), {"hoodie.keep.min.commits": str(args["min_commits"]),
                                                    "hoodie.keep.max.commits": str(args["max_commits"]),
                                                    "hoodie.cleaner.commits.retained": str(args["retain_commits"])})
    return [(0,)]


@procedure("show_table_properties", [Param("table"), Param("path"), Param("limit", default=10)],
           _schema(("key", _S), ("value", _S)))
def _show_table_properties(spark, args):
    """hoodie.properties of the table."""
    from pyhudi.table import HudiTable
    props = HudiTable.load(_path(spark, args)).properties.values
    return sorted(props.items())[:int(args["limit"])]


_FSVIEW_ALL_OUT = _schema(("partition", _S), ("file_id", _S), ("base_instant", _S), ("data_file", _S),
                          ("data_file_size", _L), ("num_delta_files", _L), ("total_delta_file_size", _L),
                          ("delta_files", _S))


def _view(path: str, max_instant):
    from pyhudi.table import HudiTable
    table = HudiTable.load(path)
    return table.view(as_of=str(max_instant) if max_instant else None)


@procedure("show_fsview_all", [Param("table", True), Param("max_instant", default=""),
                               Param("include_max", default=False), Param("include_in_flight", default=False),
                               Param("exclude_compaction", default=False), Param("limit", default=10),
                               Param("path_regex", default="*/*/*")], _FSVIEW_ALL_OUT)
def _show_fsview_all(spark, args):
    """Every file slice of every file group."""
    view = _view(_path(spark, args), args["max_instant"])
    rows = []
    for (partition, file_id), group in sorted(view.file_groups.items()):
        for s in group.slices:
            logs = s.log_files
            rows.append((partition, file_id, s.base_instant, s.base_file.path.rsplit("/", 1)[-1] if s.base_file else "",
                         s.base_file.size if s.base_file else -1, len(logs), sum(l.size for l in logs),
                         str([l.path.rsplit("/", 1)[-1] for l in logs])))
    return rows[:int(args["limit"])]


_FSVIEW_LATEST_OUT = _schema(
    ("partition", _S), ("file_id", _S), ("base_instant", _S), ("data_file", _S), ("data_file_size", _L),
    ("num_delta_files", _L), ("total_delta_file_size", _L), ("delta_size_compaction_scheduled", _L),
    ("delta_size_compaction_unscheduled", _L), ("delta_to_base_ratio_compaction_scheduled", _D),
    ("delta_to_base_ratio_compaction_unscheduled", _D), ("delta_files_compaction_scheduled", _S),
    ("delta_files_compaction_unscheduled", _S))


@procedure("show_fsview_latest", [Param("table", True), Param("max_instant", default=""),
                                  Param("include_max", default=False), Param("include_inflight", default=False),
                                  Param("exclude_compaction", default=False), Param("partition_path", True),
                                  Param("merge", default=True)], _FSVIEW_LATEST_OUT)
def _show_fsview_latest(spark, args):
    """The latest file slice of each file group in one partition."""
    view = _view(_path(spark, args), args["max_instant"])
    pending = view.pending_compaction_groups
    rows = []
    for s in view.latest_slices([str(args["partition_path"])]):
        logs = s.log_files
        size = sum(l.size for l in logs)
        base = s.base_file.size if s.base_file else -1
        scheduled = (s.partition_path, s.file_id) in pending
        names = str([l.path.rsplit("/", 1)[-1] for l in logs])
        ratio = size / base if base > 0 else -1.0
        rows.append((s.partition_path, s.file_id, s.base_instant,
                     s.base_file.path.rsplit("/", 1)[-1] if s.base_file else "", base, len(logs), size,
                     size if scheduled else 0, 0 if scheduled else size, ratio if scheduled else -1.0,
                     -1.0 if scheduled else ratio, names if scheduled else "[]", "[]" if scheduled else names))
    return rows


_FILE_SIZES_OUT = _schema(("commit_time", _S), ("min", _L), ("10th", _D), ("50th", _D), ("avg", _D),
                          ("95th", _D), ("max", _L), ("num_files", _I), ("std_dev", _D))


@procedure("stats_file_sizes", [Param("table", True), Param("partition_path", default=""),
                                Param("limit", default=10)], _FILE_SIZES_OUT)
def _stats_file_sizes(spark, args):
    """Base file size percentiles per commit (and an ALL row over every commit)."""
    import numpy as np
    view = _view(_path(spark, args), None)
    wanted = str(args["partition_path"] or "")
    by_commit: dict[str, list[int]] = {}
    for (partition, _), group in view.file_groups.items():
        if wanted and partition != wanted:
            continue
        for s in group.slices:
            if s.base_file is not None:
                by_commit.setdefault(s.base_instant, []).append(s.base_file.size)

    def row(name, sizes):
        arr = np.array(sizes, dtype=float)
        return (name, int(arr.min()), float(np.percentile(arr, 10)), float(np.percentile(arr, 50)),
                float(arr.mean()), float(np.percentile(arr, 95)), int(arr.max()), len(sizes),
                float(statistics.pstdev(sizes)))

    rows = [row(t, sizes) for t, sizes in sorted(by_commit.items(), reverse=True)][:int(args["limit"])]
    every = [s for sizes in by_commit.values() for s in sizes]
    return rows + ([row("ALL", every)] if every else [])


_HEALTH_OUT = _schema(("kind", _S), ("name", _S), ("value", _S), ("fix", _S))


@procedure("show_table_health", [Param("table"), Param("path"), Param("html_path")], _HEALTH_OUT)
def _show_table_health(spark, args):
    """The table's health report (pyhudi.report): summary metrics, then findings with their fix; html_path also
    writes the HTML page with charts there."""
    from pyhudi import report
    path, options = _target(spark, args)
    health = report.table_health(path, {k: v for k, v in options.items() if k.startswith("hoodie.")})
    name = str(args.get("table") or path)
    if args.get("html_path"):
        with open(str(args["html_path"]), "w", encoding="utf-8") as page:
            page.write(report.render_html(health, name))
    rows = [("metric", label, value, None) for label, value in report.summary_rows(health)]
    return rows + [(f"finding:{f.severity}", f.what, None, f.fix) for f in report.findings(health, name)]


def _explain_output() -> T.StructType:
    from pyhudi.sqlext.explain_call import OUTPUT
    return OUTPUT


@procedure("explain_write", [Param("table"), Param("path"), Param("query", True), Param("operation")],
           _explain_output())
def _explain_write(spark, args):
    """Dry run of writing the query's rows into the table (pyhudi.explain_write), nothing written: one
    'file_group' row per file group it would touch (action rewrite / append_log / create, counts, bytes), then
    'summary' and 'index' rows (metric, value). See sqlext/explain_call.py."""
    from pyhudi.sqlext import explain_call
    path, options = _target(spark, args)
    return explain_call.explain_rows(spark, path, options, args)
