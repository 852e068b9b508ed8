"""The session catalog on a Spark Connect session, through Spark's public API only (no JVM in this process): the
Connect half of pyhudi.sqlext.catalog, which calls these functions when `is_connect(spark)`.

Spark loads a table of a Python data source as a PythonTable, whose v2 views (`spark.catalog.getTable`,
`getTableProperties`, `SHOW TBLPROPERTIES`, `DESCRIBE`) show no provider, location, partitioning, comment or
properties. `SHOW TABLE EXTENDED ... LIKE` is a v1 command: its `information` is the metastore entry as Spark's
`CatalogTable.toLinkedHashMap` words it (the same rows `DESCRIBE EXTENDED` shows on classic), which `lookup` parses;
the schema, with its field metadata, comes from `spark.table(name).schema`.

Writing the base path into the first column's metadata (catalog.BASE_PATH_KEY) needs a schema with field metadata,
which SQL's column lists cannot carry. `register` therefore creates the table `LIKE` a staging parquet table that
an empty DataFrame with the stamped schema (and the partitioning) was saved as, then drops the staging table.
Property changes go through Spark's v2 ALTER TABLE (the only one a PythonTable takes), which keeps the table
comment only when the change restates it: `alter_properties` does.

What the public API cannot do (changing a managed table's folder in the catalog: RENAME, CREATE OR REPLACE over a
managed table; replacing a table's schema: ADD COLUMNS) raises SqlError naming the statement and the fix.
"""

from __future__ import annotations

import re
import uuid

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from pyhudi.errors import SqlError
from pyhudi.spark.jvm import quoted
from pyhudi.sqlext.catalog_entry import (BASE_PATH_KEY, PROVIDER, CatalogEntry, catalog_schema, create_clauses,
                                         location_to_path, sql_string, with_base_path)

# the keys of Spark's CatalogTable.toLinkedHashMap, as SHOW TABLE EXTENDED lists them (one `Key: value` line each;
# a value may run over several lines, e.g. a comment with a newline, and `Schema` is a tree of lines)
_KEYS = ("Catalog", "Database", "Table", "Owner", "Created Time", "Last Access", "Created By", "Type", "Provider",
         "Num Buckets", "Bucket Columns", "Sort Columns", "Comment", "Collation", "View Text", "View Original Text",
         "View Schema Mode", "View Catalog and Namespace", "View Query Output Columns", "Table Properties",
         "Statistics", "Location", "Serde Library", "InputFormat", "OutputFormat", "Storage Properties",
         "Partition Provider", "Partition Columns", "Schema")
_LINE = re.compile(r"^(" + "|".join(re.escape(k) for k in _KEYS) + r"): ?(.*)$")
_QUOTED = re.compile(r"`((?:[^`]|``)*)`")


def _information(spark: SparkSession, database: str | None, name: str) -> tuple[bool, dict[str, str] | None]:
    """(a temporary view of that name shadows it, the metastore's `information` of the table or None)."""
    where = f" IN {quoted(database)}" if database else ""
    try:
        found = spark.sql(f"SHOW TABLE EXTENDED{where} LIKE {sql_string(name)}").collect()
    except Exception:  # noqa: BLE001 - an unknown database etc.: Spark reports it when it runs the statement
        return False, None
    rows = [r for r in found if r["tableName"].lower() == name.lower()]
    temporary = any(r["isTemporary"] for r in rows)
    table = next((r for r in rows if not r["isTemporary"]), None)
    return temporary, (parse_information(table["information"]) if table is not None else None)


def parse_information(text: str) -> dict[str, str]:
    """`Key: value` lines of SHOW TABLE EXTENDED's `information`, in order (a value's extra lines joined to it)."""
    out: dict[str, str] = {}
    key = None
    for line in text.split("\n"):
        match = _LINE.match(line)
        if match and match.group(1) not in out:
            key = match.group(1)
            out[key] = match.group(2)
        elif key is not None:
            out[key] += "\n" + line
    if "Schema" in out:
        out["Schema"] = out["Schema"].rstrip("\n")
    return out


def parse_properties(text: str) -> dict[str, str]:
    """`[k1=v1, k2=v2]` (Spark writes the properties sorted by key, joined by ", ") -> dict. A value holding ", "
    stays whole as long as what follows it does not read as the next key in order."""
    inner = text.strip()
    if inner.startswith("[") and inner.endswith("]"):
        inner = inner[1:-1]
    out: dict[str, str] = {}
    last = None
    for piece in inner.split(", ") if inner else []:
        key, sep, value = piece.partition("=")
        if sep and (last is None or key > last):
            out[key] = value
            last = key
        elif last is not None:
            out[last] += ", " + piece
    return out


def lookup(spark: SparkSession, database: str | None, name: str) -> CatalogEntry | None:
    temporary, info = _information(spark, database, name)
    if info is None or (database is None and temporary):
        return None
    db = info.get("Database") or database or spark.catalog.currentDatabase()
    table = info.get("Table") or name
    provider = info.get("Provider", "")
    try:
        schema = spark.table(f"{quoted(db)}.{quoted(table)}").schema
    except Exception as error:  # noqa: BLE001 - e.g. the session has no `hudi` data source
        if provider.lower() == PROVIDER and "DATA_SOURCE_NOT_FOUND" in str(error):
            raise SqlError(f"table {db}.{table} is a Hudi table, and this Spark Connect session has no `hudi` data "
                           "source: call pyhudi.activate(spark) (or build the session with pyhudi.session(remote="
                           "...)) first") from None
        raise
    return CatalogEntry(
        database=db, name=table, provider=provider, location=location_to_path(info.get("Location", "")),
        managed=info.get("Type") == "MANAGED", properties=parse_properties(info.get("Table Properties", "[]")),
        partition_columns=[p.replace("``", "`") for p in _QUOTED.findall(info.get("Partition Columns", ""))],
        schema=schema, comment=info.get("Comment"))


def detailed_information(spark: SparkSession, entry: CatalogEntry) -> list[tuple[str, str]]:
    _, info = _information(spark, entry.database, entry.name)
    return [(k, v) for k, v in (info or {}).items() if k != "Schema"]


def default_location(spark: SparkSession, database: str | None, name: str) -> str:
    """Spark's SessionCatalog.defaultTablePath: the database's folder, then the table name (lower case unless
    spark.sql.caseSensitive)."""
    rows = spark.sql(f"DESCRIBE DATABASE EXTENDED {quoted(database or spark.catalog.currentDatabase())}").collect()
    folder = location_to_path(next(r["info_value"] for r in rows if r["info_name"] == "Location"))
    sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    return folder.rstrip("/") + "/" + (name if sensitive else name.lower())


def register(spark: SparkSession, database: str | None, name: str, data_schema: T.StructType,
             partition_columns: list[str], location: str | None, properties: dict[str, str],
             comment: str | None = None) -> CatalogEntry:
    """CREATE TABLE ... USING hudi, its schema stamped with the base path (see the module's docstring)."""
    db = database or spark.catalog.currentDatabase()
    if location is not None and "://" not in location and not location.startswith(("/", "file:")):
        raise SqlError(f"CREATE TABLE {name} LOCATION {sql_string(location)}: on Spark Connect a relative LOCATION "
                       "would be resolved on the server; give an absolute path or a URI")
    path = location_to_path(location) if location is not None else default_location(spark, db, name)
    schema = with_base_path(catalog_schema(data_schema), path)
    staging = f"{quoted(db)}.{quoted('__pyhudi_schema_' + uuid.uuid4().hex[:12])}"
    writer = spark.createDataFrame([], schema).write.format("parquet")
    if partition_columns:
        writer = writer.partitionBy(*partition_columns)
    writer.saveAsTable(staging)
    try:
        spark.sql(f"CREATE TABLE {quoted(db)}.{quoted(name)} LIKE {staging} USING {PROVIDER}"
                  + create_clauses(location, None, properties))   # the comment follows by ALTER (below)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {staging}")
    entry = lookup(spark, db, name)
    if comment is not None:
        alter_properties(spark, entry, {"comment": comment})
        entry = lookup(spark, db, name)
    return entry


def stamp_base_path(spark: SparkSession, entry: CatalogEntry) -> None:
    """The base path is stamped when the table is registered; it must still name the table's folder."""
    first = entry.schema.fields[0] if entry.schema and entry.schema.fields else None
    stamped = (first.metadata or {}).get(BASE_PATH_KEY) if first is not None else None
    if stamped is None or stamped.rstrip("/") != entry.location.rstrip("/"):
        raise SqlError(f"table {entry.database}.{entry.name}: its catalog entry does not record its folder "
                       f"{entry.location} for Spark's reads of the `hudi` data source, and Spark Connect cannot "
                       "change a table's schema metadata; run this statement on a classic Spark session")


def refuse(statement: str, entry_name: str, why: str) -> None:
    raise SqlError(f"{statement} {entry_name}: not possible on Spark Connect ({why}); run it on a classic Spark "
                   "session (pyhudi.session() without remote), where it works")


def set_column_comment(spark: SparkSession, entry: CatalogEntry, column: str, comment: str) -> None:
    """Spark's v2 ALTER COLUMN ... COMMENT changes only that field's comment (the base path stays)."""
    spark.sql(f"ALTER TABLE {entry.qualified} ALTER COLUMN {quoted(column)} COMMENT {sql_string(comment)}")


def detach_folder(spark: SparkSession, entry: CatalogEntry) -> None:
    """Before dropping a managed entry whose folder must stay (pyhudi deletes only the table's own files): point
    the entry at a folder that does not exist, so that the metastore's DROP deletes nothing."""
    away = f"{entry.location.rstrip('/')}.pyhudi-dropped-{uuid.uuid4().hex[:12]}"
    spark.sql(f"ALTER TABLE {entry.qualified} SET LOCATION {sql_string(away)}")


def alter_properties(spark: SparkSession, entry: CatalogEntry, changes: dict[str, str],
                     removed: list[str] | tuple = ()) -> None:
    """SET / UNSET TBLPROPERTIES through Spark's v2 ALTER TABLE, which sets the table comment to the `comment`
    property of the change (none: no comment): the comment the table is to keep is restated with the change."""
    current = lookup(spark, entry.database, entry.name) or entry
    comment = current.comment
    if "comment" in changes:
        comment = changes["comment"]
    elif "comment" in removed:
        comment = None
    unset = [k for k in removed if k in current.properties]
    if comment is None and "comment" in current.properties and "comment" not in unset:
        unset.append("comment")
    to_set = {k: v for k, v in changes.items() if k != "comment"}
    if comment is not None:
        to_set["comment"] = comment
    if unset:
        spark.sql(f"ALTER TABLE {entry.qualified} UNSET TBLPROPERTIES IF EXISTS ("
                  + ", ".join(sql_string(k) for k in unset) + ")")
    if to_set and (unset or "comment" in changes or any(k != "comment" for k in to_set)):
        spark.sql(f"ALTER TABLE {entry.qualified} SET TBLPROPERTIES ("
                  + ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in to_set.items()) + ")")
