"""DDL on Hudi tables: CREATE TABLE [AS SELECT], DROP TABLE, ALTER TABLE ADD COLUMNS / RENAME.

Defaults follow Hudi's Spark SQL (HoodieCatalogTable / ProvidesHoodieConfig): SQL-created tables use hive-style
partition folders, the key generator is inferred from the primary key and partition columns, there is no
default ordering field, and the table lives at the catalog's location (<warehouse>/<db>.db/<table>) unless
LOCATION says otherwise.
"""

from __future__ import annotations

import json
import uuid

from pyspark.sql import DataFrame, SparkSession
from pyarrow import fs as pafs
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from pyhudi import config as C
from pyhudi.client import drop
from pyhudi.errors import SqlError
from pyhudi.spark.jvm import is_connect
from pyhudi.sqlext import catalog
from pyhudi.sqlext import location as location_rules
from pyhudi.sqlext.query import Resolver

HIVE_STYLE_DEFAULT = "true"


def is_hudi_create(stmt: exp.Create) -> bool:
    props = stmt.args.get("properties")
    if stmt.kind != "TABLE" or props is None:
        return False
    return any(isinstance(p, exp.FileFormatProperty) and p.name.lower() == "hudi" for p in props.expressions)


def _literal(node: exp.Expression) -> str:
    if isinstance(node, (exp.Literal, exp.Var, exp.Identifier)):
        return str(node.this)
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return node.sql("spark")


def _table_options(stmt: exp.Create) -> tuple[dict, list[str], str | None, list]:
    """(options as written in OPTIONS and TBLPROPERTIES, partition columns, LOCATION, typed partition cols)."""
    options: dict[str, str] = {}
    partitions: list[str] = []
    typed: list = []
    location = None
    for prop in stmt.args["properties"].expressions:
        if isinstance(prop, exp.OptionsProperty):
            for item in prop.expressions:
                options[_literal(item.this)] = _literal(item.args["value"])
        elif isinstance(prop, exp.Property) and not isinstance(prop, exp.FileFormatProperty):
            if type(prop) is exp.Property:
                options[_literal(prop.this)] = _literal(prop.args["value"])
        if isinstance(prop, exp.PartitionedByProperty):
            cols = prop.this.expressions if isinstance(prop.this, (exp.Schema, exp.Tuple)) else [prop.this]
            for col in cols:
                if isinstance(col, exp.ColumnDef):
                    typed.append(col)
                partitions.append(col.name)
        elif isinstance(prop, exp.LocationProperty):
            location = _literal(prop.this)
    return options, partitions, location, typed


def table_comment(stmt: exp.Create) -> str | None:
    """CREATE TABLE ... COMMENT 'text' (Spark joins adjacent string literals, as sqlglot's Concat holds them)."""
    for prop in stmt.args["properties"].expressions:
        if isinstance(prop, exp.SchemaCommentProperty):
            node = prop.this
            parts = node.expressions if isinstance(node, exp.Concat) else [node]
            return "".join(_literal(p) for p in parts)
    return None


def _struct_from_defs(spark: SparkSession, defs: list[exp.ColumnDef]) -> T.StructType:
    if is_connect(spark):
        return _struct_on_connect(spark, defs)
    ddl = ", ".join(d.sql("spark") for d in defs)
    jvm = spark.sparkContext._jvm
    parsed = jvm.org.apache.spark.sql.types.StructType.fromDDL(ddl)
    # CHAR(n) / VARCHAR(n) are strings in the table (as Spark's datasource tables and Hudi store them); Spark keeps
    # the declared type in the field's metadata
    parsed = jvm.org.apache.spark.sql.catalyst.util.CharVarcharUtils.replaceCharVarcharWithStringInSchema(parsed)
    return T.StructType.fromJson(json.loads(parsed.json()))


_CHAR_VARCHAR = "__CHAR_VARCHAR_TYPE_STRING"   # where Spark keeps a string column's declared CHAR(n) / VARCHAR(n)


def _struct_on_connect(spark: SparkSession, defs: list[exp.ColumnDef]) -> T.StructType:
    """The columns parsed by the server (an empty DataFrame of that DDL), CHAR(n) / VARCHAR(n) made strings with
    their declared type in the field's metadata, as Spark's CharVarcharUtils does on classic."""
    declared: dict[str, str] = {}
    plain = []
    for column in defs:
        kind = column.args.get("kind")
        if isinstance(kind, exp.DataType) and kind.this in (exp.DataType.Type.CHAR, exp.DataType.Type.VARCHAR):
            declared[column.name] = kind.sql("spark").lower()
            column = column.copy()
            column.set("kind", exp.DataType.build("STRING"))
        elif isinstance(kind, exp.DataType) and any(t.this in (exp.DataType.Type.CHAR, exp.DataType.Type.VARCHAR)
                                                    for t in kind.find_all(exp.DataType)):
            raise SqlError(f"column {column.name} {kind.sql('spark')}: CHAR / VARCHAR inside a nested type is not "
                           "supported on Spark Connect; declare it STRING")
        plain.append(column)
    parsed = spark.createDataFrame([], ", ".join(d.sql("spark") for d in plain)).schema
    return T.StructType([T.StructField(f.name, f.dataType, f.nullable,
                                       {**(f.metadata or {}), _CHAR_VARCHAR: declared[f.name]})
                         if f.name in declared else f for f in parsed.fields])


def hudi_options(options: dict, partitions: list[str], name: str, database: str) -> dict:
    """Hudi write options for a new SQL table (aliases resolved, SQL defaults applied)."""
    resolved = C.normalize_options(options)
    resolved[C.TABLE_NAME.key] = name
    resolved.setdefault(C.DATABASE_NAME.key, database)
    resolved.setdefault(C.TABLE_TYPE.key, "COPY_ON_WRITE")
    if partitions:
        resolved[C.PARTITION_PATH.key] = ",".join(partitions)
    resolved.setdefault(C.HIVE_STYLE.key, HIVE_STYLE_DEFAULT)
    resolved.setdefault(C.URL_ENCODE.key, "false")
    # Hudi's SQL option payloadClass names the write and the table payload alike (HoodieOptionConfig)
    resolved.setdefault(C.PAYLOAD_CLASS.key, resolved.get(C.COMPACTION_PAYLOAD_CLASS.key) or C.PAYLOAD_CLASS.default)
    return resolved   # without a primary key: a table with generated record keys (insert-style writes only)


def create_hudi_files(path: str, resolved: dict, data_schema: T.StructType, table_name: str):
    """hoodie.properties for a new table (what Hudi's CREATE TABLE writes: identity and the create schema)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from pyhudi.client.create import create_table
    arrow = to_arrow_schema(data_schema, timezone="UTC", prefers_large_types=False)
    return create_table(path, resolved, arrow, table_name)


def _catalog_properties(options: dict, table) -> dict:
    """TBLPROPERTIES kept in the catalog: what the user wrote, plus Hudi's SQL names for the table identity."""
    out = {k: v for k, v in options.items() if k.lower() != "path"}
    props = table.properties
    lowered = {k.lower() for k in out}
    if C.PRIMARY_KEY.lower() not in lowered and props.record_key_fields:
        out[C.PRIMARY_KEY] = ",".join(props.record_key_fields)
    if C.PRECOMBINE_FIELD.lower() not in lowered and props.precombine_field:
        out[C.PRECOMBINE_FIELD] = props.precombine_field
    if C.TYPE not in lowered:
        out[C.TYPE] = "mor" if props.is_mor else "cow"
    return out


def _partitions_last(schema: T.StructType, partitions: list[str], name: str) -> tuple[T.StructType, list[str]]:
    """Hudi's (and Spark's) column order for a partitioned table: the other columns as given, then the partition
    columns in PARTITIONED BY order. The catalog schema, hoodie.properties and the data files all use it.
    Returns the schema and the partition names as the columns spell them."""
    by_lower = {f.name.lower(): f for f in schema.fields}
    missing = [p for p in partitions if p.lower() not in by_lower]
    if missing:
        raise SqlError(f"CREATE TABLE {name}: partition column(s) {', '.join(missing)} are not among the columns "
                       f"({', '.join(f.name for f in schema.fields)}); add them to the column list or the SELECT, "
                       "or fix PARTITIONED BY")
    lowered = [p.lower() for p in partitions]
    repeated = sorted({p for p in lowered if lowered.count(p) > 1})
    if repeated:
        raise SqlError(f"CREATE TABLE {name}: PARTITIONED BY names {', '.join(repeated)} more than once")
    last = [by_lower[p] for p in lowered]
    rest = [f for f in schema.fields if f.name.lower() not in lowered]
    return T.StructType(rest + last), [f.name for f in last]


def create_table(spark: SparkSession, resolver: Resolver, stmt: exp.Create, query_df: DataFrame | None = None):
    """CREATE [OR REPLACE] TABLE ... USING hudi, and CTAS when query_df is given (the query's rows are written)."""
    target = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
    name = target.name
    database = target.db or spark.catalog.currentDatabase()
    existing = resolver.entry(target)
    replace = bool(stmt.args.get("replace")) and existing is not None
    if existing is not None:
        if stmt.args.get("exists"):
            return None
        if not replace:
            spark.sql(f"CREATE TABLE {existing.qualified} (id INT) USING parquet")  # Spark's own "already exists"
    options, partitions, location, typed_partitions = _table_options(stmt)
    like = _like_source(resolver, stmt, name)
    if like is not None:   # CREATE TABLE t LIKE s: s's columns, partitioning and Hudi properties, then ours
        options = {**{k: v for k, v in like.properties.items() if not k.startswith(("spark.", "transient_"))},
                   **options}
        partitions = partitions or list(like.partition_columns)
    comment = table_comment(stmt)
    for key in list(options):
        if key.lower() == "path" and location is None:
            location = options.pop(key)
    if location is not None:
        location_rules.check_new_location(location, name)
    managed = location is None
    path = location if location is not None else catalog.default_location(spark, database, name)

    from pyhudi.table import HudiTable
    if like is not None:
        data_schema = T.StructType(list(like.data_fields))
    elif isinstance(stmt.this, exp.Schema) and stmt.this.expressions:
        data_schema = _struct_from_defs(spark, [d for d in stmt.this.expressions if isinstance(d, exp.ColumnDef)])
    elif query_df is not None:
        from pyhudi.file_group.base_file import META_COLUMNS
        data_schema = T.StructType([f for f in query_df.schema.fields if f.name not in META_COLUMNS])
    elif HudiTable.exists(path):
        data_schema = None
    else:
        raise SqlError(f"CREATE TABLE {name} USING hudi: give the columns, a LOCATION holding a Hudi table, "
                       "or AS SELECT")
    if typed_partitions and data_schema is not None:
        names = {f.name.lower() for f in data_schema.fields}
        extra = [f for f in _struct_from_defs(spark, typed_partitions).fields if f.name.lower() not in names]
        data_schema = T.StructType(list(data_schema.fields) + extra)

    replaces_own_files = replace and existing.is_hudi and _same_path(existing.location, path)
    if HudiTable.exists(path) and not replaces_own_files:
        if query_df is not None:
            raise SqlError(f"CREATE TABLE {name} AS SELECT: {path} already holds a Hudi table; use INSERT INTO, "
                           "or CREATE TABLE ... LOCATION without AS SELECT to register it")
        table = HudiTable.load(path)
        if data_schema is None:
            from pyhudi.reader.plan import table_schema
            from pyspark.sql.pandas.types import from_arrow_schema
            data_schema = from_arrow_schema(table_schema(table))
        data_schema, partitions = _partitions_last(data_schema, partitions or table.properties.partition_fields,
                                                   name)
        if replace:
            drop_table(spark, existing, purge=False)
        return catalog.register(spark, database, name, data_schema, partitions, path,
                                _catalog_properties(options, table), comment)

    data_schema, partitions = _partitions_last(data_schema, partitions, name)
    if query_df is not None:
        query_df = query_df.select(*[F.col(f"`{f.name}`") for f in data_schema.fields])
    resolved = hudi_options(options, partitions, name, database)
    _check_key_columns(resolved, data_schema, name)
    if replace:
        return _replace(spark, existing, path, managed, resolved, data_schema, partitions, options, query_df,
                        comment)
    entry = catalog.register(spark, database, name, data_schema, partitions, None if managed else path, {},
                             comment)
    try:
        table = _build(spark, entry, entry.location, resolved, data_schema, options, query_df)
        return _finish_catalog(spark, entry, options, table)
    except BaseException:
        drop_table(spark, entry, purge=managed)
        raise


def _like_source(resolver: Resolver, stmt: exp.Create, name: str) -> catalog.CatalogEntry | None:
    """The table a CREATE TABLE ... LIKE names (None without LIKE); a missing one is an error naming it."""
    like = next((p for p in stmt.args["properties"].expressions if isinstance(p, exp.LikeProperty)), None)
    if like is None:
        return None
    source = resolver.entry(like.this)
    if source is None:
        raise SqlError(f"CREATE TABLE {name} LIKE {like.this.sql('spark')}: there is no such table; create it "
                       "first or check its name")
    return source


def _check_key_columns(resolved: dict, data_schema: T.StructType, name: str) -> None:
    """primaryKey / preCombineField must name columns (as Hudi's HoodieCatalogTable checks at CREATE)."""
    columns = {f.name.lower() for f in data_schema.fields}
    for option, label in ((C.RECORD_KEY.key, C.PRIMARY_KEY), (C.PRECOMBINE.key, C.PRECOMBINE_FIELD)):
        fields = [f.strip() for f in str(resolved.get(option) or "").split(",") if f.strip()]
        missing = [f for f in fields if f.lower() not in columns]
        if missing:
            raise SqlError(f"CREATE TABLE {name}: {label} {', '.join(missing)} is not a column of the table "
                           f"({', '.join(f.name for f in data_schema.fields)}); fix {label} in TBLPROPERTIES/OPTIONS")


def _same_path(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def _build(spark: SparkSession, entry: catalog.CatalogEntry, path: str, resolved: dict, data_schema: T.StructType,
           options: dict, query_df: DataFrame | None):
    """A new Hudi table at `path`: hoodie.properties, then the query's rows (one commit)."""
    from pyhudi.sqlext.dml import ctas_operation, table_write_options, write_rows
    table = create_hudi_files(path, resolved, data_schema, entry.name)
    if query_df is not None:
        staged = catalog.CatalogEntry(entry.database, entry.name, catalog.PROVIDER, path, entry.managed,
                                      _catalog_properties(options, table), entry.partition_columns, entry.schema)
        # Hudi's CreateHoodieTableAsSelectCommand writes with hoodie.combine.before.insert=false: rows of one key
        # all stay, whatever the operation
        write_rows(spark, staged, query_df, ctas_operation(table_write_options(spark, staged)),
                   {C.COMBINE_BEFORE_INSERT.key: "false"})
    return table


def _finish_catalog(spark: SparkSession, entry: catalog.CatalogEntry, options: dict, table) -> catalog.CatalogEntry:
    catalog.alter_properties(spark, entry, _catalog_properties(options, table))
    entry = catalog.lookup(spark, None, entry.database, entry.name)
    catalog.stamp_base_path(spark, entry)
    return catalog.lookup(spark, None, entry.database, entry.name)


def _replace(spark: SparkSession, existing: catalog.CatalogEntry, path: str, managed: bool, resolved: dict,
             data_schema: T.StructType, partitions: list[str], options: dict, query_df: DataFrame | None,
             comment: str | None = None):
    """CREATE OR REPLACE over an existing table: the new table is built in a staging folder beside `path` first
    (its query may read the old table, and a failing query leaves the old table as it was). A Hudi table in the
    same folder is then swapped out for it (pyhudi.client.replace), and the catalog entry replaced (dropped and
    registered again: for that moment the name is unknown); any other old table goes first and the staged files
    move in."""
    if managed and existing.is_hudi and _same_path(existing.location, path) and is_connect(spark):
        catalog.mark_managed(spark, existing)   # refused on Spark Connect, before anything changes
    staging = f"{path.rstrip('/')}.pyhudi-replace-{uuid.uuid4().hex[:12]}"
    draft = catalog.CatalogEntry(existing.database, existing.name, catalog.PROVIDER, staging, managed, {},
                                 partitions, catalog.catalog_schema(data_schema))
    try:
        _build(spark, draft, staging, resolved, data_schema, options, query_df)
    except BaseException:
        from pyhudi.commit.spark_jobs import wait_for_failed_job
        wait_for_failed_job(spark, staging)   # the failed query's other tasks may still be writing into it
        _remove_folder(staging)
        raise
    from pyhudi.table import HudiTable
    if existing.is_hudi and _same_path(existing.location, path) and HudiTable.exists(path):
        from pyhudi.client.replace import swap_in
        swap_in(staging, path)            # readers see the old table or the new one (pyhudi.client.replace)
        if existing.managed:
            catalog.mark_external(spark, existing)   # the metastore must not delete the folder: it is the new table's
        spark.sql(f"DROP TABLE {existing.qualified}")
        entry = catalog.register(spark, existing.database, existing.name, data_schema, partitions, path, {},
                                 comment)
        if managed:
            catalog.mark_managed(spark, entry)
        return _finish_catalog(spark, entry, options, HudiTable.load(path))
    drop_table(spark, existing, purge=existing.is_hudi and _same_path(existing.location, path))
    entry = catalog.register(spark, existing.database, existing.name, data_schema, partitions,
                             None if managed else path, {}, comment)
    from pyhudi.storage import Storage
    source, target = Storage(staging), Storage(entry.location)
    target.makedirs("")
    for info in source.fs.get_file_info(pafs.FileSelector(source.base_path)):
        source.fs.move(info.path, target.full(info.base_name))
    _remove_folder(staging)
    return _finish_catalog(spark, entry, options, HudiTable.load(entry.location))


def _remove_folder(path: str) -> None:
    """Delete a staging folder pyhudi created itself (wholly ours)."""
    from pyhudi.storage import Storage
    Storage(path).delete_dir("")


def drop_table(spark: SparkSession, entry: catalog.CatalogEntry, purge: bool) -> None:
    """DROP TABLE: the catalog entry always; for managed tables or PURGE also the table's own files (as Hudi
    does), never other files in its folder."""
    if entry.managed and entry.is_hudi:
        catalog.mark_external(spark, entry)
    spark.sql(f"DROP TABLE {entry.qualified}")
    if entry.is_hudi and (entry.managed or purge):
        drop.delete_table_files(entry.location)


def add_columns(spark: SparkSession, entry: catalog.CatalogEntry, defs: list[exp.ColumnDef]) -> None:
    fields = _struct_from_defs(spark, defs).fields
    existing = {f.name.lower() for f in entry.schema.fields}
    clash = [f.name for f in fields if f.name.lower() in existing]
    if clash:
        raise SqlError(f"ALTER TABLE {entry.name} ADD COLUMNS: {', '.join(clash)} already exist")
    not_null = [f.name for f in fields if not f.nullable]
    if not_null:
        raise SqlError(f"ALTER TABLE {entry.name} ADD COLUMNS: new columns must be nullable ({', '.join(not_null)}):"
                       " files written before have no value for them")
    catalog.add_columns(spark, entry, list(fields))
