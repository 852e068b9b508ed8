"""CALL procedures that describe a table: its properties, file system view (show_fsview_all / _latest), file
sizes, health report, and the dry run explain_write (its work is in explain_call.py)."""

from __future__ import annotations

import statistics

from pyspark.sql import types as T

from pyhudi.sqlext.call_args import Param
from pyhudi.sqlext.procedure_registry import procedure, schema, table_path, target

_S, _L, _I, _B, _D = T.StringType(), T.LongType(), T.IntegerType(), T.BooleanType(), T.DoubleType()


@procedure("show_table_properties", [Param("table"), Param("path"), Param("limit", default=10)],
           schema(("key", _S), ("value", _S)))
def _show_table_properties(spark, args):
    """hoodie.properties of the table."""
    from pyhudi.table import HudiTable
    props = HudiTable.load(table_path(spark, args)).properties.values
    return sorted(props.items())[:int(args["limit"])]


_FSVIEW_ALL_OUT = schema(("partition", _S), ("file_id", _S), ("base_instant", _S), ("data_file", _S),
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
    view = _view(table_path(spark, args), args["max_instant"])
    rows = []
    for (partition, file_id), group in sorted(view.file_groups.items()):
        for s in group.slices:
            logs = s.log_files
            rows.append((partition, file_id, s.base_instant, s.base_file.path.rsplit("/", 1)[-1] if s.base_file else "",
                         s.base_file.size if s.base_file else -1, len(logs), s.log_size,
                         str([l.path.rsplit("/", 1)[-1] for l in logs])))
    return rows[:int(args["limit"])]


_FSVIEW_LATEST_OUT = schema(
    ("partition", _S), ("file_id", _S), ("base_instant", _S), ("data_file", _S), ("data_file_size", _L),
    ("num_delta_files", _L), ("total_delta_file_size", _L), ("delta_size_compaction_scheduled", _L),
    ("delta_size_compaction_unscheduled", _L), ("delta_to_base_ratio_compaction_scheduled", _D),
    ("delta_to_base_ratio_compaction_unscheduled", _D), ("delta_files_compaction_scheduled", _S),
    ("delta_files_compaction_unscheduled", _S))


@procedure("show_fsview_latest", [Param("table", True), Param("max_instant", default=""),
                                  Param("include_max", default=False), Param("include_inflight", default=False),
                                  Param("exclude_compaction", default=False), Param("limit", default=10),
                                  Param("partition_path", True), Param("merge", default=True)], _FSVIEW_LATEST_OUT)
def _show_fsview_latest(spark, args):
    """The latest file slice of each file group in one partition."""
    view = _view(table_path(spark, args), args["max_instant"])
    pending = view.pending_compaction_groups
    rows = []
    for s in view.latest_slices([str(args["partition_path"])]):
        logs = s.log_files
        size = s.log_size
        base = s.base_file.size if s.base_file else -1
        scheduled = (s.partition_path, s.file_id) in pending
        names = str([l.path.rsplit("/", 1)[-1] for l in logs])
        ratio = size / base if base > 0 else -1.0
        rows.append((s.partition_path, s.file_id, s.base_instant,
                     s.base_file.path.rsplit("/", 1)[-1] if s.base_file else "", base, len(logs), size,
                     size if scheduled else 0, 0 if scheduled else size, ratio if scheduled else -1.0,
                     -1.0 if scheduled else ratio, names if scheduled else "[]", "[]" if scheduled else names))
    return rows[:int(args["limit"])]


@procedure("delete_marker", [Param("table", True), Param("instant_time", True)],
           schema(("delete_marker_result", _B)))
def _delete_marker(spark, args):
    """Delete the marker folders of instants (comma-separated), as Hudi's delete_marker: markers of a write that
    failed and will not be rolled back. False if a folder could not be deleted."""
    from pyhudi.commit.markers import marker_folder
    from pyhudi.table import HudiTable
    storage = HudiTable.load(table_path(spark, args)).storage
    try:
        for instant in str(args["instant_time"]).split(","):
            storage.delete_dir(marker_folder(instant.strip()))
    except OSError:
        return [(False,)]
    return [(True,)]


_FILE_SIZES_OUT = schema(("commit_time", _S), ("min", _L), ("10th", _D), ("50th", _D), ("avg", _D),
                          ("95th", _D), ("max", _L), ("num_files", _I), ("std_dev", _D))


@procedure("stats_file_sizes", [Param("table", True), Param("partition_path", default=""),
                                Param("limit", default=10)], _FILE_SIZES_OUT)
def _stats_file_sizes(spark, args):
    """Base file size percentiles per commit (and an ALL row over every commit)."""
    import numpy as np
    view = _view(table_path(spark, args), None)
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


_HEALTH_OUT = schema(("kind", _S), ("name", _S), ("value", _S), ("fix", _S))


@procedure("show_table_health", [Param("table"), Param("path"), Param("html_path")], _HEALTH_OUT)
def _show_table_health(spark, args):
    """The table's health report (pyhudi.report): summary metrics, then findings with their fix; html_path also
    writes the HTML page with charts there."""
    from pyhudi import report
    path, options = target(spark, args)
    health = report.table_health(path, {k: v for k, v in options.items() if k.startswith("hoodie.")}, spark)
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
    path, options = target(spark, args)
    return explain_call.explain_rows(spark, path, options, args)
