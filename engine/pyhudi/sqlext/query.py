"""Queries over Hudi tables: each Hudi table reference becomes a temporary view over `pyhudi.read` (Spark's
native parquet scan: column pruning, filter pushdown) before Spark sees the query. Time travel
(`TIMESTAMP AS OF` / `VERSION AS OF`) and `hudi_table_changes(...)` become the matching Hudi read options."""

from __future__ import annotations

import itertools

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from sqlglot import exp

from pyhudi import config as C
from pyhudi.errors import SqlError
from pyhudi.spark.jvm import is_connect
from pyhudi.sqlext import catalog

_counter = itertools.count()


class Resolver:
    """Catalog lookups and the temporary views one statement needs (dropped when the statement is done)."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.views: list[str] = []
        self.frames: dict[str, DataFrame] = {}
        self._cache: dict[tuple, catalog.CatalogEntry | None] = {}

    def entry(self, table: exp.Table) -> catalog.CatalogEntry | None:
        key = (table.catalog or None, table.db or None, table.name)
        if key not in self._cache:
            self._cache[key] = catalog.lookup(self.spark, *key) if table.name else None
        return self._cache[key]

    def hudi_entry(self, table: exp.Table) -> catalog.CatalogEntry | None:
        entry = self.entry(table)
        return entry if entry is not None and entry.is_hudi else None

    def entry_by_name(self, name: str) -> catalog.CatalogEntry | None:
        parts = name.split(".")
        return self.entry(exp.Table(this=exp.to_identifier(parts[-1]),
                                    db=exp.to_identifier(parts[-2]) if len(parts) > 1 else None,
                                    catalog=exp.to_identifier(parts[-3]) if len(parts) > 2 else None))

    def view(self, df: DataFrame) -> str:
        name = f"__pyhudi_view_{next(_counter)}"
        df.createOrReplaceTempView(name)
        self.views.append(name)
        self.frames[name] = df
        return name

    def query(self, text: str) -> DataFrame:
        """The DataFrame of a query over this statement's views, valid after they are dropped."""
        return sql_over_frames(self.spark, text, self.frames)

    def close(self) -> None:
        for name in self.views:
            self.spark.catalog.dropTempView(name)
        self.views.clear()
        self.frames.clear()


def sql_over_frames(spark: SparkSession, text: str, frames: dict[str, DataFrame]) -> DataFrame:
    """``spark.sql(text)`` where ``text`` names DataFrames by the temporary views they were registered as. A classic
    session analyses the query now, so the views may go when the statement is done; Spark Connect analyses it only
    when it runs, so there the DataFrames travel inside the query's plan under those names (as Connect's
    ``spark.sql(text, **dataframes)`` sends them)."""
    if not is_connect(spark) or not frames:
        return spark.sql(text)
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    from pyspark.sql.connect.plan import SQL, SubqueryAlias
    views = [SubqueryAlias(df._plan, name) for name, df in frames.items()]
    return ConnectDataFrame(SQL(text, None, None, views), spark)


def read_entry(spark: SparkSession, entry: catalog.CatalogEntry, options: dict | None = None) -> DataFrame:
    """The table's rows with the catalog's columns and types (columns added by ALTER TABLE and not written
    yet read as nulls)."""
    from pyhudi.reader import read
    from pyhudi.errors import NotAHudiTableError
    try:
        df = read(spark, entry.location, options)
    except NotAHudiTableError:
        if _being_created(entry.location):
            return spark.createDataFrame([], entry.schema)
        raise
    present = {c.lower(): c for c in df.columns}
    columns = []
    for fld in entry.schema.fields:
        source = present.get(fld.name.lower())
        column = F.col(f"`{source}`") if source else F.lit(None)
        columns.append(column.cast(fld.dataType).alias(fld.name))
    return df.select(*columns)


def _being_created(location: str) -> bool:
    """CREATE TABLE ... AS SELECT registers the name first (the metastore claims it atomically and, for a managed
    table, makes its folder), then writes hoodie.properties and the rows. A query from another process in that
    moment finds the name but no table yet: it reads the table empty, as it would a moment later (hoodie.properties
    and no commit). A folder holding files outside .hoodie/ without hoodie.properties is no such moment: it stays
    an error. Asked only when the read found no table, so a query pays no extra listing."""
    import pyarrow.fs as pafs

    from pyhudi.storage import Storage
    storage = Storage(location)
    root = storage.full("")
    if storage.fs.get_file_info(root).type == pafs.FileType.File:   # a file, not a table folder: the error stands
        return False
    return all(info.path[len(root):].lstrip("/").split("/", 1)[0] == ".hoodie"
               for info in storage.list_files("", recursive=True))


def has_hudi_reference(resolver: Resolver, tree: exp.Expression) -> bool:
    ctes = _cte_names(tree)
    for table in tree.find_all(exp.Table):
        if _is_table_changes(table):
            return True
        if not table.db and table.name.lower() in ctes:
            continue
        if resolver.hudi_entry(table) is not None:
            return True
    return False


def select(spark: SparkSession, text: str) -> DataFrame:
    """The DataFrame of one SELECT, its Hudi table references read by pyhudi (as pyhudi.sql runs a query)."""
    import sqlglot
    tree = sqlglot.parse_one(text, read="spark")
    resolver = Resolver(spark)
    try:
        if isinstance(tree, exp.Query) and has_hudi_reference(resolver, tree):
            return resolver.query(rewrite(resolver, tree).sql("spark"))
    finally:
        resolver.close()    # the query's DataFrame stays valid without its views
    return spark.sql(text)


def rewrite(resolver: Resolver, tree: exp.Expression) -> exp.Expression:
    """Replace every Hudi table reference in `tree` by a view over pyhudi.read (in place; returns tree)."""
    ctes = _cte_names(tree)
    for table in list(tree.find_all(exp.Table)):
        if _is_table_changes(table):
            df = table_changes(resolver, table.this)
        else:
            if not table.db and table.name.lower() in ctes:
                continue
            entry = resolver.hudi_entry(table)
            if entry is None:
                continue
            df = read_entry(resolver.spark, entry, _time_travel_options(table))
        alias = table.alias or (table.name if not _is_table_changes(table) else None)
        replacement = exp.Table(this=exp.to_identifier(resolver.view(df)))
        if alias:
            replacement.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        table.replace(replacement)
    return tree


def _cte_names(tree: exp.Expression) -> set[str]:
    return {cte.alias.lower() for cte in tree.find_all(exp.CTE) if cte.alias}


def _is_table_changes(table: exp.Table) -> bool:
    return isinstance(table.this, exp.Anonymous) and table.this.name.lower() == "hudi_table_changes"


def _time_travel_options(table: exp.Table) -> dict | None:
    version = table.args.get("version")
    if version is None:
        return None
    value = version.expression
    if not isinstance(value, exp.Literal):
        raise SqlError(f"time travel on {table.name}: {version.sql('spark')} needs a literal instant or timestamp, "
                       "e.g. TIMESTAMP AS OF '2024-01-01 10:00:00' or VERSION AS OF '20240101100000000'")
    return {"as.of.instant": str(value.this)}


def table_changes(resolver: Resolver, call: exp.Anonymous) -> DataFrame:
    """hudi_table_changes('table_or_path', 'latest_state' | 'cdc', begin[, end]): Hudi's incremental query, in
    the latest-state format (changed rows as they are now) or the cdc format (op, ts_ms, before, after)."""
    args = [a.this if isinstance(a, exp.Literal) else a.sql("spark") for a in call.expressions]
    if len(args) not in (3, 4):
        raise SqlError("hudi_table_changes takes (table or path, 'latest_state' or 'cdc', begin instant[, end "
                       f"instant]); got {len(args)} arguments")
    target, fmt, begin = args[0], str(args[1]).lower(), str(args[2])
    if fmt not in ("latest_state", "cdc"):
        raise SqlError(f"hudi_table_changes format {args[1]!r} is not supported; use 'latest_state' or 'cdc'")
    if begin.lower() == "earliest":
        begin = "000"
    options = {C.QUERY_TYPE.key: "incremental", C.BEGIN_INSTANT.key: begin, C.INCREMENTAL_FORMAT.key: fmt}
    if len(args) == 4:
        options[C.END_INSTANT.key] = str(args[3])
    entry = resolver.entry_by_name(target) if "/" not in target else None
    if entry is not None and entry.is_hudi:
        if fmt == "cdc":   # CDC rows have their own columns, not the table's
            from pyhudi.reader import read
            return read(resolver.spark, entry.location, options)
        return read_entry(resolver.spark, entry, options)
    if entry is None and "/" in target:
        from pyhudi.reader import read
        return read(resolver.spark, target, options)
    raise SqlError(f"hudi_table_changes: {target!r} is not a Hudi table in the catalog nor a table path")
