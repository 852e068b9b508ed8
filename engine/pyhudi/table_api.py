"""`pyhudi.Table`: one Hudi table, the front door to everything pyhudi does with it.

    table = pyhudi.Table(spark, "/data/trips")            # or pyhudi.Table.for_name(spark, "db.trips")
    result = table.write(df, {"hoodie.datasource.write.operation": "upsert"})
    table.read(as_of=result.instant_time).show()
    table.maintenance.compact(); table.maintenance.clean(); table.maintenance.archive()
    table.savepoints.create(); table.rollback(result.instant_time)

Table is the implementation of record: each method enters the client layer (pyhudi.client), which runs the action
in a transaction; the free functions of `pyhudi` (pyhudi.write, pyhudi.compact, ...) are shims over these methods.
Maintenance is grouped as pyiceberg and delta-rs group it: `table.maintenance` (compaction, clustering, clean,
archive) and `table.savepoints` (create, list, delete, restore). Results are typed: WriteResult, CleanResult,
RollbackResult, and timeline Instants.

Table-level `options` (hoodie.* keys, e.g. the cleaner's retention) apply to every call; a call's own options win.
The table is loaded on first use and kept (`refresh()` loads it again; every action through this object refreshes
it), so `Table(spark, path).write(df, options)` creates a new table.

The top layer of pyproject.toml's contract: it sits above the SQL layer's catalog (`for_name`) and the client.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeVar, Union, cast

from pyhudi import config as C
from pyhudi.errors import NotAHudiTableError

if TYPE_CHECKING:   # kept out of `import pyhudi`, which stays free of Spark until something runs
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from pyhudi.client.explain import WritePlan
    from pyhudi.client.maintenance import CleanResult
    from pyhudi.client.undo import RollbackResult
    from pyhudi.client.write import WriteResult
    from pyhudi.table import HudiTable
    from pyhudi.timeline import Instant, Timeline

# An instant argument: its time, an Instant, or the WriteResult that made it
InstantLike = Union[str, "Instant", "WriteResult"]

# Hudi's read option for each keyword of Table.read
_READ_KEYWORDS = {"query_type": C.QUERY_TYPE.key, "as_of": C.AS_OF_INSTANT.key,
                  "begin_instant": C.BEGIN_INSTANT.key, "end_instant": C.END_INSTANT.key}


_R = TypeVar("_R")


class Table:
    """A Hudi table at `path` (it need not exist before the first write)."""

    def __init__(self, spark: "SparkSession", path: str | os.PathLike, options: dict | None = None):
        from pyhudi.table import HudiTable
        self.spark = spark
        self.path = str(path)
        self.options = dict(options or {})
        self._loaded: HudiTable | None = None
        HudiTable.exists(self.path)   # a regular file at the path is refused here, naming it
        self.maintenance = Maintenance(self)
        self.savepoints = Savepoints(self)

    @classmethod
    def for_name(cls, spark: "SparkSession", name: str, options: dict | None = None) -> "Table":
        """The Hudi table a session-catalog name (`t`, `db.t`, `spark_catalog.db.t`) is registered at."""
        from pyhudi.sqlext import catalog
        entry = catalog.lookup(spark, *catalog.split_name(str(name).split("."), spark))
        if entry is None:
            raise NotAHudiTableError(f"there is no table {name} in the session catalog; create it with CREATE TABLE "
                                     "... USING hudi, or open a table by path with pyhudi.Table(spark, path)")
        if not entry.is_hudi:
            raise NotAHudiTableError(f"table {name} is a {entry.provider or 'non-Hudi'} table, not a Hudi table; "
                                     "pyhudi.Table opens tables created USING hudi")
        return cls(spark, entry.location, options)

    def __repr__(self) -> str:
        return f"pyhudi.Table({self.path!r})"

    def refresh(self) -> "Table":
        """Load hoodie.properties again (other writers may have changed the table); returns self."""
        from pyhudi.table import HudiTable
        self._loaded = HudiTable.load(self.path)
        return self

    def _table(self) -> "HudiTable":
        if self._loaded is None:
            self.refresh()
        assert self._loaded is not None
        return self._loaded

    def _options(self, options: dict | None) -> dict:
        return {**self.options, **(options or {})}

    def _changed(self, result: "_R") -> "_R":
        """After an action: the loaded table is stale (a write may have created it, a service changed it)."""
        self._loaded = None
        return result

    def _instants(self, times: list[str]) -> list["Instant"]:
        """The instants of `times` as the timeline has them now (requested, inflight or completed)."""
        timeline = self.refresh()._table().timeline()
        found = [timeline.find(t) for t in times]
        return [i for i in found if i is not None]

    # --- reads and writes ---------------------------------------------------------------------------------
    def write(self, df: "DataFrame", options: dict | None = None, mode: str = "append") -> "WriteResult":
        """One Hudi commit of `df` with Hudi datasource options; the WriteResult names the completed instant."""
        from pyhudi.client.write import write
        return self._changed(write(df, self.path, self._options(options), mode))

    def read(self, options: dict | None = None, *, query_type: str | None = None, as_of: InstantLike | None = None,
             begin_instant: InstantLike | None = None, end_instant: InstantLike | None = None) -> "DataFrame":
        """A DataFrame of the table: snapshot, read_optimized, incremental or as of an instant (an instant may be
        given as its time, an Instant or a WriteResult)."""
        from pyhudi.reader import read
        opts = {k: _option_value(v) for k, v in self._options(options).items()}
        for keyword, value in (("query_type", query_type), ("as_of", as_of), ("begin_instant", begin_instant),
                               ("end_instant", end_instant)):
            if value is not None:
                opts[_READ_KEYWORDS[keyword]] = instant_time(value)
        if begin_instant is not None and query_type is None:
            opts.setdefault(_READ_KEYWORDS["query_type"], "incremental")
        return read(self.spark, self.path, opts)

    def explain_write(self, df: "DataFrame", options: dict | None = None) -> "WritePlan":
        """What .write(df, options) would do, without writing anything (a dry run of the same Spark jobs)."""
        from pyhudi.client.explain import explain_write
        return explain_write(df, self.path, self._options(options))

    def delete_partitions(self, partitions: list[str], options: dict | None = None) -> "WriteResult":
        """Drop every file group of `partitions` in one replacecommit (Hudi's delete_partition)."""
        from pyhudi.client.write import delete_partitions
        return self._changed(delete_partitions(self.spark, self.path, partitions, self._options(options)))

    def rollback(self, instant: InstantLike) -> "RollbackResult":
        """Roll back the latest completed commit `instant` under a rollback instant (Hudi's rollback_to_instant)."""
        from pyhudi.client.undo import rollback_to_instant
        return self._changed(rollback_to_instant(self.spark, self.path, instant_time(instant)))

    def upgrade(self, to_version: str | int, options: dict | None = None) -> bool:
        """Upgrade the table to version 8 or 9 (Hudi 1.x; "EIGHT"/"NINE" also), as Hudi's upgrade_table: failed
        writes rolled back, a merge-on-read table compacted, the timeline moved into layout 2. False when it
        already is at that version."""
        from pyhudi.client.upgrade import upgrade_table
        return upgrade_table(self.spark, self.path, to_version, options)

    # --- what the table is ---------------------------------------------------------------------------------
    @property
    def timeline(self) -> "Timeline":
        """The active timeline as of now: .completed(), .pending(), .completed_writes() give typed Instants."""
        return self._table().timeline()

    @property
    def properties(self) -> dict[str, str]:
        """hoodie.properties as a dict (a copy)."""
        return dict(self._table().properties.values)

    @property
    def name(self) -> str:
        """hoodie.table.name."""
        return self._table().properties.name

    @property
    def table_type(self) -> str:
        """COPY_ON_WRITE or MERGE_ON_READ."""
        return self._table().properties.table_type

    @property
    def schema(self) -> "StructType":
        """The Spark schema a snapshot read returns: Hudi's meta columns, then the latest writer schema."""
        from pyspark.sql.pandas.types import from_arrow_schema

        from pyhudi.reader import table_schema
        table = self._table()
        return from_arrow_schema(table_schema(table, table.timeline()))


class Maintenance:
    """The table services of one table (`table.maintenance`), as Hudi's run_compaction, run_clustering,
    run_clean and archive_commits procedures run them."""

    def __init__(self, table: Table):
        self._table = table

    def compact(self, op: str = "scheduleAndExecute", instant: InstantLike | None = None,
                options: dict | None = None) -> list["Instant"]:
        """Merge-on-read compaction (op: schedule, execute, scheduleAndExecute); the compaction instants acted on
        (a scheduled one is requested, an executed one a completed commit)."""
        from pyhudi.client.compaction import compact
        t = self._table
        return t._instants(compact(t.spark, t.path, op, _optional_time(instant), t._options(options)))

    def schedule_compaction(self, instant: InstantLike | None = None, options: dict | None = None) -> "Instant | None":
        """Plan a compaction only; its requested instant, or None when no file slice has log files to compact."""
        scheduled = self.compact("schedule", instant, options)
        return scheduled[0] if scheduled else None

    def cluster(self, op: str = "scheduleAndExecute", instant: InstantLike | None = None,
                options: dict | None = None) -> list["Instant"]:
        """Clustering (op: schedule, execute, scheduleAndExecute): rewrites small file groups into fewer, sorted by
        hoodie.clustering.plan.strategy.sort.columns; the clustering (replacecommit) instants acted on."""
        from pyhudi.client.clustering import cluster
        t = self._table
        return t._instants(cluster(t.spark, t.path, op, _optional_time(instant), t._options(options)))

    def clean(self, options: dict | None = None) -> "CleanResult | None":
        """Run the cleaner now (hoodie.cleaner.*); what it deleted, or None when nothing was due."""
        from pyhudi.client.maintenance import clean
        t = self._table
        return t._changed(clean(t.spark, t.path, t._options(options)))

    def archive(self, options: dict | None = None) -> list["Instant"]:
        """Archive what hoodie.keep.min/max.commits make due; the archived instants, oldest first."""
        from pyhudi.client.maintenance import archive
        t = self._table
        return t._changed(archive(t.spark, t.path, t._options(options)))


class Savepoints:
    """The table's savepoints (`table.savepoints`): commits whose files the cleaner keeps, to restore to."""

    def __init__(self, table: Table):
        self._table = table

    def list(self) -> list["Instant"]:
        """The savepoints, oldest first."""
        from pyhudi.client.undo import show_savepoints
        return show_savepoints(self._table.spark, self._table.path)

    def create(self, instant: InstantLike | None = None, user: str = "", comments: str = "") -> "Instant":
        """Savepoint a completed commit (default the latest); returns the savepoint."""
        from pyhudi.client.undo import create_savepoint
        t = self._table
        return t._changed(create_savepoint(t.spark, t.path, _optional_time(instant), user, comments))

    def delete(self, instant: InstantLike) -> None:
        """Remove the savepoint at `instant`."""
        from pyhudi.client.undo import delete_savepoint
        t = self._table
        delete_savepoint(t.spark, t.path, instant_time(instant))
        t._changed(None)

    def restore(self, instant: InstantLike) -> "RollbackResult":
        """Undo every commit after the savepoint `instant`, newest first, under one restore instant."""
        from pyhudi.client.undo import restore_to_savepoint
        t = self._table
        return t._changed(restore_to_savepoint(t.spark, t.path, instant_time(instant)))


def instant_time(value: InstantLike) -> str:
    """An instant argument as its time: a time string, an Instant (.time) or a WriteResult (.instant_time)."""
    for attribute in ("time", "instant_time"):
        if isinstance(getattr(value, attribute, None), str):
            return getattr(value, attribute)
    return str(value)


def _option_value(value: object) -> object:
    """A read option's value; an Instant or a WriteResult given for an instant option stands for its time."""
    if isinstance(getattr(value, "time", None), str) or isinstance(getattr(value, "instant_time", None), str):
        return instant_time(cast("InstantLike", value))
    return value


def _optional_time(value: InstantLike | None) -> str | None:
    return None if value is None else instant_time(value)
