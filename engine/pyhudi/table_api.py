"""`pyhudi.Table`: one Hudi table with the engine's operations as methods, as pyiceberg's `Table` gathers a
table's reads, writes and maintenance in one place.

    table = pyhudi.Table(spark, "/data/trips")            # or pyhudi.Table.for_name(spark, "db.trips")
    result = table.write(df, {"hoodie.datasource.write.operation": "upsert"})
    table.read(as_of=result.instant_time).show()
    table.compact(); table.clean(); table.archive()

Each method calls the matching `pyhudi.<function>` (pyhudi/__init__.py): there is one implementation, and the
free functions stay the API of record. Table-level `options` (hoodie.* keys, e.g. the cleaner's retention) apply
to every call; a call's own options win. Nothing is read at construction beyond checking that the path is not a
file, so `Table(spark, path).write(df, options)` creates a new table.

Not in a layer of pyproject.toml's contract: it sits above the client (writes, services) and the SQL layer's
catalog (`for_name`), which the client layer may not import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyhudi
from pyhudi import config as C
from pyhudi.errors import NotAHudiTableError

if TYPE_CHECKING:   # kept out of `import pyhudi`, which stays free of Spark until something runs
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from pyhudi.client.write import WriteResult
    from pyhudi.timeline import Timeline

# Hudi's read option for each keyword of Table.read
_READ_KEYWORDS = {"query_type": C.QUERY_TYPE.key, "as_of": C.AS_OF_INSTANT.key,
                  "begin_instant": C.BEGIN_INSTANT.key, "end_instant": C.END_INSTANT.key}


class Table:
    """A Hudi table at `path` (it need not exist before the first write)."""

    def __init__(self, spark: "SparkSession", path: str, options: dict | None = None):
        from pyhudi.table import HudiTable
        self.spark = spark
        self.path = str(path)
        self.options = dict(options or {})
        HudiTable.exists(self.path)   # a regular file at the path is refused here, naming it

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

    def _options(self, options: dict | None) -> dict:
        return {**self.options, **(options or {})}

    def _table(self):
        from pyhudi.table import HudiTable
        return HudiTable.load(self.path)

    # --- reads and writes ---------------------------------------------------------------------------------
    def write(self, df: "DataFrame", options: dict | None = None, mode: str = "append") -> "WriteResult":
        """Write `df` with Hudi datasource options (pyhudi.write); the WriteResult names the new instant."""
        return pyhudi.write(df, self.path, self._options(options), mode)

    def read(self, options: dict | None = None, *, query_type: str | None = None, as_of=None,
             begin_instant=None, end_instant=None) -> "DataFrame":
        """A DataFrame of the table (pyhudi.read): snapshot, read_optimized, incremental or as of an instant."""
        opts = self._options(options)
        for keyword, value in (("query_type", query_type), ("as_of", as_of), ("begin_instant", begin_instant),
                               ("end_instant", end_instant)):
            if value is not None:
                opts[_READ_KEYWORDS[keyword]] = str(value)   # an instant may be a WriteResult
        if begin_instant is not None and query_type is None:
            opts.setdefault(_READ_KEYWORDS["query_type"], "incremental")
        return pyhudi.read(self.spark, self.path, opts)

    def explain_write(self, df: "DataFrame", options: dict | None = None):
        """What .write(df, options) would do, without writing (pyhudi.explain_write); returns its WritePlan."""
        return pyhudi.explain_write(df, self.path, self._options(options))

    def delete_partitions(self, partitions: list[str], options: dict | None = None) -> "WriteResult":
        """Drop every file group of `partitions` in one replacecommit (pyhudi.delete_partitions)."""
        return pyhudi.delete_partitions(self.spark, self.path, partitions, self._options(options))

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

    # --- table services ------------------------------------------------------------------------------------
    def compact(self, op: str = "scheduleAndExecute", instant_time: str | None = None,
                options: dict | None = None) -> list[str]:
        """Hudi's run_compaction on a MERGE_ON_READ table (pyhudi.compact); returns the instants acted on."""
        return pyhudi.compact(self.spark, self.path, op, _instant(instant_time), self._options(options))

    def schedule_compaction(self, instant_time: str | None = None, options: dict | None = None) -> str | None:
        """Plan a compaction only; its instant, or None when no file slice has log files to compact."""
        scheduled = self.compact("schedule", instant_time, options)
        return scheduled[0] if scheduled else None

    def cluster(self, op: str = "scheduleAndExecute", instant_time: str | None = None,
                options: dict | None = None) -> list[str]:
        """Hudi clustering (pyhudi.cluster); returns the clustering instants acted on."""
        return pyhudi.cluster(self.spark, self.path, op, _instant(instant_time), self._options(options))

    def clean(self, options: dict | None = None) -> dict | None:
        """Run the cleaner now (pyhudi.clean); the clean metadata, or None when nothing was due."""
        return pyhudi.clean(self.spark, self.path, self._options(options))

    def archive(self, options: dict | None = None) -> list[str]:
        """Archive what hoodie.keep.min/max.commits make due (pyhudi.archive); the instants archived."""
        return pyhudi.archive(self.spark, self.path, self._options(options))

    # --- undo: rollback, savepoints, restore ---------------------------------------------------------------
    def rollback_to(self, instant_time) -> bool:
        """Roll back the latest completed commit `instant_time` (pyhudi.rollback_to_instant)."""
        return pyhudi.rollback_to_instant(self.spark, self.path, _instant(instant_time))

    @property
    def savepoints(self) -> list[str]:
        """The savepointed instants, oldest first (pyhudi.show_savepoints)."""
        return pyhudi.show_savepoints(self.spark, self.path)

    def create_savepoint(self, instant_time=None, user: str = "", comments: str = "") -> str:
        """Savepoint a completed commit (default the latest); returns its instant (pyhudi.create_savepoint)."""
        return pyhudi.create_savepoint(self.spark, self.path, _instant(instant_time), user, comments)

    def delete_savepoint(self, instant_time) -> bool:
        """Remove the savepoint at `instant_time` (pyhudi.delete_savepoint)."""
        return pyhudi.delete_savepoint(self.spark, self.path, _instant(instant_time))

    def restore_to(self, savepoint) -> bool:
        """Undo every commit after the savepoint `savepoint` (pyhudi.restore_to_savepoint)."""
        return pyhudi.restore_to_savepoint(self.spark, self.path, _instant(savepoint))


def _instant(value) -> str | None:
    """An instant argument as its string (callers may pass a WriteResult)."""
    return None if value is None else str(value)
