"""The CALL procedure registry and what every procedure shares: `@procedure` registers a function under Hudi's
name with its parameters and output StructType in PROCEDURES; `target` / `table_path` resolve the call's
`table => 'name'` or `path => '/base/path'`. The procedures themselves live in per-family modules
(service_calls, timeline_calls, table_calls); sqlext/procedures.py imports them and runs a call."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from pyhudi.errors import SqlError
from pyhudi.sqlext.call_args import Param, Procedure


def schema(*columns: tuple[str, T.DataType]) -> T.StructType:
    """A procedure's output: nullable columns, as Hudi's procedures declare them."""
    return T.StructType([T.StructField(n, t, True) for n, t in columns])


def table_path(spark: SparkSession, args: dict) -> str:
    """The table's base path from `table` (a catalog name) or `path`."""
    return target(spark, args)[0]


def target(spark: SparkSession, args: dict) -> tuple[str, dict]:
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


def table_and_timeline(path: str):
    """(HudiTable, its timeline) of a base path."""
    from pyhudi.table import HudiTable
    table = HudiTable.load(path)
    return table, table.timeline()


PROCEDURES: dict[str, Procedure] = {}


def procedure(name: str, params: list[Param], output: T.StructType, aliases: tuple = ()):
    """Register the decorated function as CALL `name` (and its aliases), its docstring the procedure's help."""
    def register(function):
        proc = Procedure(name, params, output, function, (function.__doc__ or "").strip(), list(aliases))
        PROCEDURES[name] = proc
        for alias in aliases:
            PROCEDURES[alias] = proc
        return function
    return register


def options_argument(text) -> dict:
    """Hudi's `options => 'k1=v1,k2=v2'`."""
    out = {}
    for part in str(text or "").split(","):
        if "=" in part:
            key, value = part.split("=", 1)
            out[key.strip()] = value.strip()
    return out
