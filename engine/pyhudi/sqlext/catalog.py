"""Hudi tables in Spark's session catalog (the embedded Hive metastore by default).

A Hudi table is a catalog table with provider `hudi`, the five `_hoodie_*` meta columns first (as Hudi's own
catalog tables have), its partition columns, and TBLPROPERTIES (primaryKey, preCombineField, type, hoodie.*).
Spark hands a Python data source that backs a catalog table no options, only the table's schema, so the
table's base path is also kept in the metadata of the first column (BASE_PATH_KEY): that is how a plain
`spark.sql("SELECT ... FROM t")` finds the files in any session where `pyhudi.activate(spark)` ran.

The metastore keeps the table's comment, partition columns, provider and properties, but Spark loads a table of a
Python data source as a PythonTable that shows none of them (see pyhudi.sqlext.describe); property changes are
therefore applied here as Spark's v1 ALTER TABLE does (alter_properties), never by Spark's v2 ALTER, which would
drop the table comment.

Each function reaches the catalog through the JVM on a classic session (py4j: one round trip per call, no SQL to
parse) and through Spark's public API on Spark Connect (pyhudi.sqlext.catalog_connect, which says what it cannot do).
"""

from __future__ import annotations

import json

from pyspark.sql import SparkSession
from pyspark.sql import types as T

from pyhudi.spark.jvm import is_connect
from pyhudi.sqlext import catalog_connect
from pyhudi.sqlext.catalog_entry import (BASE_PATH_KEY, PROVIDER, CatalogEntry,  # noqa: F401 - the SQL layer's names
                                         catalog_schema, create_clauses, location_to_path, sql_string,
                                         with_base_path)


def _jvm(spark: SparkSession):
    return spark.sparkContext._jvm


def _jcatalog(spark: SparkSession):
    return spark._jsparkSession.sessionState().catalog()


def _identifier(spark: SparkSession, database: str | None, name: str):
    jvm = _jvm(spark)
    return jvm.org.apache.spark.sql.catalyst.TableIdentifier.apply(name, jvm.scala.Option.apply(database))


def refuse_on_connect(statement: str, name: str, why: str) -> None:
    """Raise SqlError: `statement` on table `name` cannot run on Spark Connect (`why`); the fix is a classic session."""
    catalog_connect.refuse(statement, name, why)


def split_name(parts: list[str], spark: SparkSession) -> tuple[str | None, str | None, str]:
    """(catalog, database, table) of a 1-3 part name."""
    parts = [p for p in parts if p]
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    if len(parts) == 2:
        return None, parts[0], parts[1]
    return None, None, parts[0]


def lookup(spark: SparkSession, catalog: str | None, database: str | None, name: str) -> CatalogEntry | None:
    """The session catalog's entry for a table, or None (unknown, a temporary view, or another catalog)."""
    if catalog and catalog.lower() != "spark_catalog":
        return None
    if is_connect(spark):
        return catalog_connect.lookup(spark, database, name)
    jcat = _jcatalog(spark)
    if database is None and jcat.getTempView(name).isDefined():
        return None
    ident = _identifier(spark, database, name)
    try:
        if not jcat.tableExists(ident):
            return None
        meta = jcat.getTableMetadata(ident)
    except Exception:  # noqa: BLE001 - an unknown database etc.: Spark reports it when it runs the statement
        return None
    converters = _jvm(spark).scala.jdk.javaapi.CollectionConverters
    provider = meta.provider().get() if meta.provider().isDefined() else ""
    location = meta.location().toString() if meta.storage().locationUri().isDefined() else ""
    schema = T.StructType.fromJson(json.loads(meta.schema().json()))
    return CatalogEntry(
        database=meta.identifier().database().get() if meta.identifier().database().isDefined()
        else spark.catalog.currentDatabase(),
        name=meta.identifier().table(), provider=provider, location=location_to_path(location),
        managed=meta.tableType().name() == "MANAGED",
        properties=dict(converters.asJava(meta.properties())),
        partition_columns=list(converters.asJava(meta.partitionColumnNames())), schema=schema,
        comment=meta.comment().get() if meta.comment().isDefined() else None)


def detailed_information(spark: SparkSession, entry: CatalogEntry) -> list[tuple[str, str]]:
    """The metastore's `# Detailed Table Information` of a table (Catalog, Database, Table, ..., Provider,
    Comment, Table Properties, Location, Partition Provider), as Spark's v1 DESCRIBE EXTENDED lists them."""
    if is_connect(spark):
        return catalog_connect.detailed_information(spark, entry)
    meta = _jcatalog(spark).getTableMetadata(_identifier(spark, entry.database, entry.name))
    details = _jvm(spark).scala.jdk.javaapi.CollectionConverters.asJava(meta.toLinkedHashMap())
    return [(str(k), str(v)) for k, v in details.items() if str(k) != "Schema"]


def default_location(spark: SparkSession, database: str | None, name: str) -> str:
    """Where Spark puts a managed table: <warehouse>/<db>.db/<name> (the default database: <warehouse>/<name>)."""
    if is_connect(spark):
        return catalog_connect.default_location(spark, database, name)
    uri = _jcatalog(spark).defaultTablePath(_identifier(spark, database or spark.catalog.currentDatabase(), name))
    return location_to_path(uri.toString())


def register(spark: SparkSession, database: str | None, name: str, data_schema: T.StructType,
             partition_columns: list[str], location: str | None, properties: dict[str, str],
             comment: str | None = None) -> CatalogEntry:
    """CREATE TABLE ... USING hudi in the session catalog; location None makes a managed table (Spark picks
    its folder). Returns the new entry."""
    if is_connect(spark):
        return catalog_connect.register(spark, database, name, data_schema, partition_columns, location, properties,
                                        comment)
    schema = catalog_schema(data_schema)
    ddl = _jvm(spark).org.apache.spark.sql.types.DataType.fromJson(schema.json()).toDDL()
    target = f"`{database}`.`{name}`" if database else f"`{name}`"
    text = f"CREATE TABLE {target} ({ddl}) USING {PROVIDER}"
    if partition_columns:
        text += " PARTITIONED BY (" + ", ".join(f"`{c}`" for c in partition_columns) + ")"
    spark.sql(text + create_clauses(location, comment, properties))
    entry = lookup(spark, None, database, name)
    stamp_base_path(spark, entry)
    return lookup(spark, None, entry.database, entry.name)


def stamp_base_path(spark: SparkSession, entry: CatalogEntry, data_schema: T.StructType | None = None) -> None:
    """Record the base path in the first data column's metadata (and optionally replace the data schema)."""
    if is_connect(spark):
        if data_schema is not None:
            catalog_connect.refuse("ALTER TABLE", entry.name, "Spark's public API cannot replace a table's schema")
        catalog_connect.stamp_base_path(spark, entry)
        return
    jcat = _jcatalog(spark)
    ident = _identifier(spark, entry.database, entry.name)
    if data_schema is None:
        data_schema = T.StructType.fromJson(json.loads(jcat.getTableMetadata(ident).dataSchema().json()))
    stamped = with_base_path(data_schema, entry.location)
    jschema = _jvm(spark).org.apache.spark.sql.types.DataType.fromJson(stamped.json())
    jcat.alterTableDataSchema(ident, jschema)


def add_columns(spark: SparkSession, entry: CatalogEntry, new_fields: list[T.StructField]) -> None:
    """ALTER TABLE ADD COLUMNS for a Hudi table (Spark refuses it for data source tables it does not know)."""
    if is_connect(spark):
        catalog_connect.refuse("ALTER TABLE ... ADD COLUMNS on", entry.name,
                               "Spark's v2 ADD COLUMNS fails on Python data source tables and the public API cannot "
                               "replace a table's schema")
    jcat = _jcatalog(spark)
    ident = _identifier(spark, entry.database, entry.name)
    data = T.StructType.fromJson(json.loads(jcat.getTableMetadata(ident).dataSchema().json()))
    stamp_base_path(spark, entry, T.StructType(list(data.fields) + list(new_fields)))


def set_column_comment(spark: SparkSession, entry: CatalogEntry, column: str, comment: str) -> None:
    """ALTER TABLE ... ALTER/CHANGE COLUMN c COMMENT '...': the comment lives in the catalog's schema only (the
    table's own Avro schema carries no column comments)."""
    if is_connect(spark):
        catalog_connect.set_column_comment(spark, entry, column, comment)
        return
    jcat = _jcatalog(spark)
    ident = _identifier(spark, entry.database, entry.name)
    data = T.StructType.fromJson(json.loads(jcat.getTableMetadata(ident).dataSchema().json()))
    fields = [T.StructField(f.name, f.dataType, f.nullable, {**(f.metadata or {}), "comment": comment})
              if f.name.lower() == column.lower() else f for f in data.fields]
    stamp_base_path(spark, entry, T.StructType(fields))


def _alter_metadata(spark: SparkSession, entry: CatalogEntry, **changes) -> None:
    """Replace fields of the table's v1 CatalogTable by name (e.g. tableType, properties, comment) in the
    metastore, as Spark's v1 ALTER TABLE commands do."""
    jcat = _jcatalog(spark)
    meta = jcat.getTableMetadata(_identifier(spark, entry.database, entry.name))
    copy = next(m for m in meta.getClass().getMethods() if m.getName() == "copy")
    args = [getattr(meta, f"copy$default${i}")() for i in range(1, copy.getParameterCount() + 1)]
    names = [meta.productElementName(i) for i in range(len(args))]
    for name, value in changes.items():
        args[names.index(name)] = value
    jcat.alterTable(meta.copy(*args))


def mark_external(spark: SparkSession, entry: CatalogEntry) -> None:
    """Make a managed entry external, so that dropping it leaves its folder to us (the metastore would delete a
    managed table's folder whole, other people's files in it too)."""
    if is_connect(spark):   # the type cannot change through the public API: the entry's folder moves away instead
        catalog_connect.detach_folder(spark, entry)
        return
    jvm = _jvm(spark)
    _alter_metadata(spark, entry, tableType=jvm.org.apache.spark.sql.catalyst.catalog.CatalogTableType.EXTERNAL())


def mark_managed(spark: SparkSession, entry: CatalogEntry) -> None:
    """Make an entry registered at an existing folder a managed table again (Spark refuses to create a managed
    table whose folder exists, as after CREATE OR REPLACE swapped the new table into it)."""
    if is_connect(spark):
        catalog_connect.refuse("CREATE OR REPLACE TABLE", entry.name,
                               "the public API cannot register a managed table at a folder that exists")
    jvm = _jvm(spark)
    _alter_metadata(spark, entry, tableType=jvm.org.apache.spark.sql.catalyst.catalog.CatalogTableType.MANAGED())


def alter_properties(spark: SparkSession, entry: CatalogEntry, changes: dict[str, str],
                     removed: list[str] = ()) -> None:
    """SET / UNSET TBLPROPERTIES as Spark's v1 commands apply them: the `comment` key is the table comment.
    (Spark's v2 path, which a Python data source table takes, drops the table comment on any other change.)"""
    if is_connect(spark):
        catalog_connect.alter_properties(spark, entry, changes, removed)
        return
    jvm = _jvm(spark)
    jcat = _jcatalog(spark)
    meta = jcat.getTableMetadata(_identifier(spark, entry.database, entry.name))
    converters = jvm.scala.jdk.javaapi.CollectionConverters
    properties = {k: v for k, v in dict(converters.asJava(meta.properties())).items() if k not in removed}
    properties.update({k: v for k, v in changes.items() if k != "comment"})
    properties.pop("comment", None)
    comment = meta.comment().get() if meta.comment().isDefined() else None
    if "comment" in changes:
        comment = changes["comment"]
    elif "comment" in removed:
        comment = None
    jmap = jvm.java.util.HashMap()
    for k, v in properties.items():
        jmap.put(k, v)
    scala_map = jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(jmap)
    _alter_metadata(spark, entry, properties=scala_map, comment=jvm.scala.Option.apply(comment))
