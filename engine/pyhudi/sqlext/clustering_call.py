"""`CALL run_clustering(...)` / `show_clustering(...)` as Hudi's RunClusteringProcedure and ShowClusteringProcedure
do them: the call's `order`, `order_strategy`, `options`, `predicate` / `selected_partitions` become clustering
options (sort columns, layout strategy, SELECTED_PARTITIONS filter); the result is one row per clustering instant
(timestamp, input_group_size, state, involved_partitions)."""

from __future__ import annotations

from urllib.parse import unquote

from pyhudi import config as C
from pyhudi.errors import SqlError


def call_options(args: dict) -> dict:
    """The clustering options a call's arguments stand for (`options => 'k1=v1,k2=v2'` last, as Hudi)."""
    out = {}
    if args.get("order"):
        out[C.CLUSTERING_SORT_COLUMNS.key] = str(args["order"])
    if args.get("order_strategy"):
        out[C.LAYOUT_OPTIMIZE_STRATEGY.key] = str(args["order_strategy"])
    for part in str(args.get("options") or "").split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            out[key.strip()] = value.strip()
    return out


def run_clustering(spark, path: str, settings: dict, args: dict) -> list[tuple]:
    from pyhudi.client.clustering import cluster

    options = {**settings, **call_options(args)}
    op, instants = args.get("op"), args.get("instants")
    if instants and op and str(op).strip().lower() != "execute":
        raise SqlError("run_clustering: specific instants only can be used in 'execute' op or not specific op")
    selected = selected_partitions(spark, path, args)
    if selected is not None:
        if not selected:
            return []   # no partition matched: nothing to cluster (Hudi returns no rows)
        options.update({C.CLUSTERING_FILTER_MODE.key: "SELECTED_PARTITIONS",
                        C.CLUSTERING_PARTITION_SELECTED.key: ",".join(selected)})
    acted = cluster(spark, path, op or ("execute" if instants else "scheduleAndExecute"), instants, options)
    return clustering_rows(path, bool(args.get("show_involved_partition")), only=set(acted or []))


def selected_partitions(spark, path: str, args: dict) -> list[str] | None:
    """Partitions the call selects: those whose values satisfy `predicate` (partition columns only), else the
    comma list `selected_partitions`; None when neither is given (every partition)."""
    if args.get("predicate"):
        return _prune(spark, path, str(args["predicate"]))
    if args.get("selected_partitions"):
        return [p.strip() for p in str(args["selected_partitions"]).split(",") if p.strip()]
    return None


def _prune(spark, path: str, predicate: str) -> list[str]:
    from pyspark.sql import functions as F
    from pyspark.sql.utils import AnalysisException

    from pyhudi.reader.plan import table_schema
    from pyhudi.table import HudiTable

    table = HudiTable.load(path)
    props = table.properties
    fields = props.partition_fields
    partitions = table.view().partitions()
    if not fields:
        raise SqlError(f"run_clustering: table {table.name} is not partitioned; a predicate selects partitions "
                       "(Only partition predicates are allowed)")
    rows = []
    for partition in partitions:
        parts = partition.split("/")
        values = [p.split("=", 1)[1] if props.hive_style and "=" in p else p for p in parts]
        values = [unquote(v) if props.url_encode else v for v in values]
        rows.append(tuple([partition] + (values + [None] * len(fields))[:len(fields)]))
    types = {f.name: f.type for f in table_schema(table)}
    frame = spark.createDataFrame(rows, ", ".join(["`__partition` string"] + [f"`{f}` string" for f in fields]))
    from pyspark.sql.pandas.types import from_arrow_type
    for name in fields:
        if name in types:
            frame = frame.withColumn(name, F.col(f"`{name}`").cast(from_arrow_type(types[name])))
    try:
        return [row[0] for row in frame.filter(F.expr(predicate)).select("__partition").collect()]
    except AnalysisException as exc:
        raise SqlError(f"run_clustering: predicate {predicate!r} must use only the partition columns "
                       f"({', '.join(fields)}) of table {table.name}: Only partition predicates are allowed "
                       f"({str(exc).splitlines()[0]})") from None


def clustering_rows(path: str, involved: bool, only: set | None = None, limit: int | None = None) -> list[tuple]:
    """(timestamp, input_group_size, state, involved_partitions) per clustering instant, newest first."""
    from pyhudi.services.clustering.plan import clustering_instants, read_clustering_plan
    from pyhudi.table import HudiTable

    table = HudiTable.load(path)
    rows = []
    for instant in reversed(clustering_instants(table.storage, table.timeline())):
        if only is not None and instant.time not in only:
            continue
        plan = read_clustering_plan(table.storage, instant.time)
        rows.append((instant.time, len(plan.groups), instant.state.name,
                     ",".join(plan.partitions) if involved else "*"))
        if limit and len(rows) >= limit:
            break
    return rows
