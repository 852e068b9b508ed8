"""CALL procedures that run or show table services: compaction (run_compaction, compact, show_compaction),
clustering (run_clustering, show_clustering; the work is in clustering_call.py), run_clean, archive_commits and
upgrade_table / downgrade_table."""

from __future__ import annotations

from pyspark.sql import types as T

from pyhudi import config as C
from pyhudi.client import maintenance
from pyhudi.errors import SqlError
from pyhudi.sqlext.call_args import Param
from pyhudi.sqlext.procedure_registry import (options_argument, procedure, schema, table_and_timeline,
                                              table_path, target)

_S, _L, _I, _B, _D = T.StringType(), T.LongType(), T.IntegerType(), T.BooleanType(), T.DoubleType()

_COMPACTION_OUT = schema(("timestamp", _S), ("operation_size", _I), ("state", _S))


@procedure("run_compaction", [Param("op", True), Param("table"), Param("path"), Param("timestamp"),
                              Param("options"), Param("instants"), Param("limit")], _COMPACTION_OUT)
def _run_compaction(spark, args):
    """Schedule and/or execute merge-on-read compaction (op: schedule, run/execute, scheduleAndExecute); to run,
    `instants` (comma-separated) picks pending plans and `limit` caps how many run, oldest first."""
    from pyhudi.client.compaction import compact
    path, settings = target(spark, args)
    op = str(args["op"]).lower()
    ops = {"schedule": "schedule", "run": "execute", "execute": "execute", "scheduleandexecute": "scheduleAndExecute"}
    if op not in ops:
        raise SqlError(f"run_compaction: op {args['op']!r} is not one of schedule, run, execute, scheduleAndExecute")
    options = {**settings, **options_argument(args.get("options"))}
    if ops[op] == "execute" and args.get("timestamp") and \
            str(args["timestamp"]) not in _pending_compactions(path, None, None):
        raise SqlError(f"specific {args['timestamp']} instants is not exist\nrun_compaction: no compaction plan "
                       f"{args['timestamp']} is pending on {path}; CALL show_compaction lists them")
    picked = args.get("instants") or args.get("limit")
    if ops[op] == "execute" and picked and not args.get("timestamp"):
        done = []
        for instant in _pending_compactions(path, args.get("instants"), args.get("limit")):
            done += compact(spark, path, "execute", instant, options) or []
        return _compactions(path, set(done))
    instants = compact(spark, path, ops[op], args.get("timestamp"), options) or []
    return _compactions(path, set(instants))


def _pending_compactions(path: str, instants, limit) -> list[str]:
    """Pending compaction plans, oldest first: those named in `instants` (all when None), at most `limit`."""
    from pyhudi.timeline import COMPACTION
    _, timeline = table_and_timeline(path)
    wanted = {t.strip() for t in str(instants).split(",") if t.strip()} if instants else None
    pending = [i.time for i in timeline.instants if i.action == COMPACTION and not i.is_completed
               and (wanted is None or i.time in wanted)]
    return sorted(pending)[:int(limit)] if limit else sorted(pending)


@procedure("compact", [Param("table"), Param("path"), Param("op", default="scheduleAndExecute"),
                       Param("timestamp"), Param("options")], _COMPACTION_OUT)
def _compact(spark, args):
    """Short form of run_compaction: schedule and execute a compaction of the table (or `op`)."""
    return _run_compaction(spark, args)


def _compactions(path: str, only: set | None = None, limit: int | None = None) -> list[tuple]:
    from pyhudi.timeline.compaction_plan import read_compaction_plan
    from pyhudi.timeline import COMPACTION, COMMIT
    table, timeline = table_and_timeline(path)
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
    return _compactions(table_path(spark, args), limit=int(args["limit"]))


_CLUSTERING_OUT = schema(("timestamp", _S), ("input_group_size", _I), ("state", _S), ("involved_partitions", _S))


@procedure("run_clustering", [Param("table"), Param("path"), Param("predicate"), Param("order"),
                              Param("show_involved_partition", default=False, kind="bool"), Param("op"),
                              Param("order_strategy"), Param("options"), Param("instants"),
                              Param("selected_partitions")], _CLUSTERING_OUT)
def _run_clustering(spark, args):
    """Schedule and/or execute clustering (op: schedule, execute, scheduleAndExecute; default scheduleAndExecute,
    or execute with `instants`), sorted by `order`; `predicate` (partition columns only) or `selected_partitions`
    choose the partitions."""
    from pyhudi.sqlext import clustering_call
    path, settings = target(spark, args)
    return clustering_call.run_clustering(spark, path, settings, args)


@procedure("show_clustering", [Param("table"), Param("path"), Param("limit", default=20),
                               Param("show_involved_partition", default=False, kind="bool")], _CLUSTERING_OUT)
def _show_clustering(spark, args):
    """Clustering instants (replacecommits holding a clustering plan, any state), newest first."""
    from pyhudi.sqlext import clustering_call
    return clustering_call.clustering_rows(table_path(spark, args), bool(args["show_involved_partition"]),
                                           limit=int(args["limit"]))


_CLEAN_OUT = schema(("start_clean_time", _S), ("time_taken_in_millis", _L), ("total_files_deleted", _I),
                     ("earliest_commit_to_retain", _S), ("bootstrap_part_metadata", _S), ("version", _I))


@procedure("run_clean", [Param("table"), Param("schedule_in_line", default=True), Param("clean_policy"),
                         Param("retain_commits"), Param("hours_retained"), Param("file_versions_retained"),
                         Param("trigger_strategy"), Param("trigger_max_commits"), Param("options"), Param("path")],
           _CLEAN_OUT, aliases=("clean",))
def _run_clean(spark, args):
    """Delete file versions the cleaner policy no longer retains (the table's hoodie.cleaner.* TBLPROPERTIES
    unless the call's arguments say otherwise)."""
    path, settings = target(spark, args)
    options = {**settings, **options_argument(args.get("options"))}
    for arg, key in (("clean_policy", C.CLEANER_POLICY.key), ("retain_commits", C.CLEANER_COMMITS_RETAINED.key),
                     ("hours_retained", C.CLEANER_HOURS_RETAINED.key),
                     ("file_versions_retained", C.CLEANER_FILE_VERSIONS_RETAINED.key)):
        if args.get(arg) is not None:
            options[key] = str(args[arg])
    cleaned = maintenance.clean(spark, path, options)
    if cleaned is None:
        return []
    result = cleaned.clean
    bootstrap = {p: m.to_avro() for p, m in (result.bootstrap_partition_metadata or {}).items()}
    return [(result.start_clean_time, result.time_taken_ms, result.total_files_deleted,
             result.earliest_commit_to_retain, str(bootstrap or "{}"), result.version)]


@procedure("archive_commits", [Param("table"), Param("path"), Param("min_commits", default=20),
                               Param("max_commits", default=30), Param("retain_commits", default=10),
                               Param("enable_metadata", default=False)], schema(("result", _I)))
def _archive_commits(spark, args):
    """Move old completed instants to the archived timeline (0 = success, as Hudi returns)."""
    maintenance.archive(spark, table_path(spark, args), {C.KEEP_MIN_COMMITS.key: str(args["min_commits"]),
                                                         C.KEEP_MAX_COMMITS.key: str(args["max_commits"]),
                                                         C.CLEANER_COMMITS_RETAINED.key: str(args["retain_commits"])})
    return [(0,)]


@procedure("upgrade_table", [Param("table"), Param("path"), Param("to_version", True)], schema(("result", _B)),
           aliases=("downgrade_table",))
def _upgrade_table(spark, args):
    """Move the table to `to_version` (SIX, EIGHT, NINE or 6, 8, 9), as Hudi's upgrade_table / downgrade_table:
    version 6 to 8 or 9 and 8 to 9 are written (client/upgrade.py); a downgrade is refused with Hudi's Java
    procedure named. `result` is true once the table is at that version."""
    from pyhudi.client.upgrade import upgrade_table
    path, settings = target(spark, args)
    upgrade_table(spark, path, args["to_version"], settings)
    return [(True,)]
