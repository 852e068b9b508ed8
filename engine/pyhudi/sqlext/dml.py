"""DML on Hudi tables: INSERT INTO / OVERWRITE, UPDATE, DELETE, MERGE INTO.

Every statement builds its rows as a Spark DataFrame (a query, or a join/filter of source and target) and ends
in one `pyhudi.write` (upsert, insert, delete, insert_overwrite...): record data never passes the driver.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from pyhudi import config as C
from pyhudi.commit.metadata import SQL_WRITES_PREPPED_KEY
from pyhudi.errors import SqlError
from pyhudi.file_group.base_file import META_COLUMNS
from pyhudi.schema.meta_fields import PARTITION_PATH as META_PARTITION
from pyhudi.schema.meta_fields import RECORD_KEY as META_KEY
from pyhudi.merge.payloads import DEFAULT_PAYLOAD
from pyhudi.sqlext import catalog, commits, settings
from pyhudi.sqlext import overwrite as overwrite_rules
from pyhudi.sqlext.insert_config import INSERT_INTO_OPERATION, insert_into_settings
from pyhudi.sqlext.merge_checks import MergeChecks
from pyhudi.client import DELETE_FLAG_COLUMN, WriteResult
from pyhudi.sqlext.query import Resolver, read_entry, rewrite



def table_write_options(spark: SparkSession, entry: catalog.CatalogEntry, properties=None) -> dict:
    """The statement's write options for the table, in Hudi's precedence (pyhudi.sqlext.settings): TBLPROPERTIES,
    then the session's SET hoodie.*, then statement options, then the table's identity (hoodie.properties)."""
    identity = (properties or _table_properties(entry)).write_options()
    return settings.combine(spark, entry.properties, identity)


def write_rows(spark: SparkSession, entry: catalog.CatalogEntry, df: DataFrame, operation: str | None,
               extra: dict | None = None, *, prepped: bool = False) -> WriteResult:
    """One Hudi commit of `df` (data columns by name) to the catalog table. `prepped`: an UPDATE or DELETE, which
    Hudi writes as a prepped write unless hoodie.spark.sql.optimized.writes.enable=false (the commit records
    UPSERT_PREPPED / DELETE_PREPPED, and _hoodie.spark.sql.writes.prepped=true in its extraMetadata)."""
    from pyhudi.client.write import write
    properties = _table_properties(entry)
    options = table_write_options(spark, entry, properties)
    options.update(extra or {})
    if prepped and C.config_of(options).get(C.SQL_OPTIMIZED_WRITES):
        options[SQL_WRITES_PREPPED_KEY] = "true"
    # Hudi's SQL default (ProvidesHoodieConfig.buildHoodieInsertConfig): an insert-style write into a table with
    # both a primary key and a preCombineField keeps one row per key of the statement, the greatest ordering value.
    options.setdefault(C.COMBINE_BEFORE_INSERT.key,
                       str(bool(options.get(C.PRECOMBINE.key) and options.get(C.RECORD_KEY.key))).lower())
    if operation is None:   # INSERT INTO: the operation and duplicate policy (sqlext/insert_config.py)
        operation, policy = insert_into_settings(options, entry.name, properties.version)
        options.update(policy)
    options[C.OPERATION.key] = operation
    # SQL table columns are nullable (as in Hudi's catalog tables); a literal's NOT NULL must not reach the schema
    df = df.select(*[F.when(F.col(f"`{c}`").isNotNull(), F.col(f"`{c}`")).alias(c) for c in df.columns])
    result = write(df, entry.location, options)
    commits.record(result)
    return result


def insert_operation(options: dict, table_version: str = "6") -> str:
    """The operation of an INSERT INTO with these options into a table of that version (sqlext/insert_config.py)."""
    return insert_into_settings(options, options.get(C.TABLE_NAME.key) or "", table_version)[0]


def ctas_operation(options: dict) -> str:
    """Hudi's CREATE TABLE ... AS SELECT (CreateHoodieTableAsSelectCommand, 0.14/0.15): the query is written with
    hoodie.sql.insert.mode=non-strict and hoodie.sql.bulk.insert.enable=true as overriding options, so
    ProvidesHoodieConfig.buildHoodieInsertConfig picks: the write operation if one is given; else, when
    hoodie.spark.sql.insert.into.operation is set, that operation (its flow wins over the legacy insert mode);
    else bulk_insert (the legacy non-strict flow with bulk insert enabled)."""
    if options.get(C.OPERATION.key):
        return options[C.OPERATION.key]
    if options.get(INSERT_INTO_OPERATION):
        return options[INSERT_INTO_OPERATION].lower()
    return "bulk_insert"


def _source_sql(resolver: Resolver, node: exp.Expression) -> str:
    if isinstance(node, exp.Values):
        return node.sql("spark")
    return rewrite(resolver, node).sql("spark")


def insert(spark: SparkSession, resolver: Resolver, stmt: exp.Insert, entry: catalog.CatalogEntry) -> None:
    target = stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this
    listed = [c.name for c in stmt.this.expressions] if isinstance(stmt.this, exp.Schema) else None
    partition = target.args.get("partition")
    static: dict[str, exp.Expression] = {}
    named = []
    for item in (partition.expressions if partition is not None else []):
        column = item.this if isinstance(item, exp.EQ) else item
        named.append(column.name.lower())
        if isinstance(item, exp.EQ):
            static[column.name.lower()] = item.expression
    if named and set(named) != {c.lower() for c in entry.partition_columns}:
        raise SqlError(f"INSERT INTO {entry.name}: the PARTITION clause names {', '.join(named)} but the table is "
                       f"partitioned by {', '.join(entry.partition_columns) or 'nothing'}; name each partition "
                       "column once (with a value for a static partition), or drop the clause")
    source = spark.sql(_source_sql(resolver, stmt.expression))
    # Hudi's InsertIntoHoodieTableCommand.alignQueryOutput: the query's `_hoodie_*` columns (a SELECT * from a
    # Hudi table) are dropped before its columns are matched to the table's
    if any(c in META_COLUMNS for c in source.columns):
        source = source.select(*[f"`{c}`" for c in source.columns if c not in META_COLUMNS])
    fields = entry.data_fields
    by_lower = {f.name.lower(): f for f in fields}
    unknown = [c for c in list(static) + (listed or []) if c.lower() not in by_lower]
    if unknown:
        raise SqlError(f"INSERT INTO {entry.name}: unknown column(s) {', '.join(unknown)}; the table has "
                       f"{', '.join(f.name for f in fields)}")
    wanted = [by_lower[c.lower()] for c in listed] if listed else [f for f in fields if f.name.lower() not in static]
    order = _aligned_columns(entry, source.columns, wanted, bool(listed))
    # the query's own column names may repeat (SELECT CAST(id AS INT), id ...): renamed before they are picked
    source = source.toDF(*[f"_pyhudi_c{i}" for i in range(len(source.columns))])
    source = source.select(*[f"_pyhudi_c{i}" for i in order])
    given = {f.name.lower(): F.col(f"`{c}`").cast(f.dataType) for f, c in zip(wanted, source.columns)}
    columns = []
    for fld in fields:
        key = fld.name.lower()
        if key in static:
            columns.append(F.expr(static[key].sql("spark")).cast(fld.dataType).alias(fld.name))
        elif key in given:
            columns.append(given[key].alias(fld.name))
        else:
            columns.append(F.lit(None).cast(fld.dataType).alias(fld.name))
    rows = source.select(*columns)
    if stmt.args.get("overwrite"):
        _insert_overwrite(spark, entry, rows, static, partition is not None)
    else:
        write_rows(spark, entry, rows, None)


def _aligned_columns(entry: catalog.CatalogEntry, given: list[str], wanted: list, listed: bool) -> list[int]:
    """The positions of the query's columns in the order of `wanted`, as Hudi 0.15's InsertIntoHoodieTableCommand.alignQueryOutput
    resolves them (Spark 3.5's TableOutputResolver): by name when every wanted column is one of the query's
    (case-insensitive, once), else by position; Spark's INSERT_COLUMN_ARITY_MISMATCH errors when the counts differ.
    An explicit column list (INSERT INTO t (a, b) ...) is matched by position."""
    table = f"`spark_catalog`.`{entry.database}`.`{entry.name}`"
    names = ", ".join(f"`{f.name}`" for f in wanted)
    data = ", ".join(f"`{c}`" for c in given)
    hint = (f"\nINSERT INTO {entry.name}: give one value per column, static partition columns (PARTITION (p = 'v')) "
            "excluded, or list the columns written (INSERT INTO t (a, b) SELECT ...)")
    if len(given) > len(wanted):
        raise SqlError(f"[INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS] Cannot write to {table}, the reason is "
                       f"too many data columns:\nTable columns: {names}.\nData columns: {data}.{hint}")
    lowered = [c.lower() for c in given]
    if not listed and all(lowered.count(f.name.lower()) == 1 for f in wanted):
        return [lowered.index(f.name.lower()) for f in wanted]
    if len(given) < len(wanted):
        raise SqlError(f"[INSERT_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS] Cannot write to {table}, the reason "
                       f"is not enough data columns:\nTable columns: {names}.\nData columns: {data}.{hint}")
    return list(range(len(given)))


def _insert_overwrite(spark: SparkSession, entry: catalog.CatalogEntry, rows: DataFrame,
                      static: dict[str, exp.Expression], spec_given: bool) -> None:
    """INSERT OVERWRITE as Hudi 0.14/0.15 (pyhudi.sqlext.overwrite): one replacecommit."""
    options = table_write_options(spark, entry)
    plan = overwrite_rules.plan(spark, entry, options, static, spec_given, entry.partition_columns)
    extra = {}
    if plan.static_partitions:
        # a static PARTITION clause: the existing partitions its values match are replaced even when the query
        # writes none of their rows (Hudi's STATIC_OVERWRITE_PARTITION_PATHS); an empty query makes an
        # insert_overwrite replacecommit that empties them, as Hudi's does
        extra[C.STATIC_OVERWRITE_PARTITIONS.key] = ",".join(plan.static_partitions)
    write_rows(spark, entry, rows, plan.operation, extra)


def _target(resolver: Resolver, entry: catalog.CatalogEntry, table: exp.Table) -> str:
    """A view over the target's snapshot, named in the statement by its alias (or its own name)."""
    view = resolver.view(read_entry(resolver.spark, entry))
    return f"`{view}` AS `{table.alias or table.name}`"


def update(spark: SparkSession, resolver: Resolver, stmt: exp.Update, entry: catalog.CatalogEntry) -> None:
    assignments = {}
    for eq in stmt.expressions:
        assignments[eq.this.name.lower()] = eq.expression
    fields = entry.data_fields
    unknown = [c for c in assignments if c not in {f.name.lower() for f in fields}]
    if unknown:
        raise SqlError(f"UPDATE {entry.name}: unknown column(s) {', '.join(unknown)}")
    props = _table_properties(entry)
    keys = {k.lower() for k in props.record_key_fields + props.partition_fields}
    touched = keys & set(assignments)
    if touched:
        raise SqlError(f"UPDATE {entry.name}: the record key / partition column(s) {', '.join(sorted(touched))} "
                       "cannot be updated (Hudi identifies records by them); delete and insert instead")
    select = []
    for fld in fields:
        value = assignments.get(fld.name.lower())
        text = f"CAST(({rewrite(resolver, value).sql('spark')}) AS {fld.dataType.simpleString()})" \
            if value is not None else f"`{fld.name}`"
        select.append(f"{text} AS `{fld.name}`")
    if not props.record_key_fields:   # Hudi's prepped write: a key-less table's rows keep their own keys
        select += [f"`{META_KEY}`", f"`{META_PARTITION}`"]
    where = stmt.args.get("where")
    sql = f"SELECT {', '.join(select)} FROM {_target(resolver, entry, stmt.this)}"
    if where is not None:
        sql += f" WHERE {rewrite(resolver, where.this).sql('spark')}"
    write_rows(spark, entry, spark.sql(sql), "upsert", prepped=True)


def delete(spark: SparkSession, resolver: Resolver, stmt: exp.Delete, entry: catalog.CatalogEntry) -> None:
    where = stmt.args.get("where")
    sql = f"SELECT * FROM {_target(resolver, entry, stmt.this)}"
    if where is not None:
        sql += f" WHERE {rewrite(resolver, where.this).sql('spark')}"
    write_rows(spark, entry, spark.sql(sql), "delete", prepped=True)


def _table_properties(entry: catalog.CatalogEntry):
    """The table's hoodie.properties (its record key and partition fields, type, ordering field)."""
    from pyhudi.table import HudiTable
    return HudiTable.load(entry.location).properties


# --- MERGE INTO -------------------------------------------------------------------------------------------
_MATCHED = "_pyhudi_matched"


def merge(spark: SparkSession, resolver: Resolver, stmt: exp.Merge, entry: catalog.CatalogEntry) -> None:
    """MERGE INTO t USING s ON ... : one left join of source and target; each source row takes the first
    WHEN clause that applies; updates/inserts are one upsert, matched deletes one delete."""
    target = stmt.this
    target_alias = target.alias or target.name
    source = stmt.args["using"]
    if isinstance(source, exp.Table) and not source.alias:
        source_alias = source.name
    else:
        source_alias = source.alias
    if isinstance(source, exp.Table):
        table = source.copy()
        table.set("alias", None)
        source_sql = f"(SELECT * FROM {rewrite(resolver, exp.select('*').from_(table)).args['from_'].this.sql('spark')})"
    else:
        source_sql = f"({rewrite(resolver, source.this).sql('spark')})"
    target_df = read_entry(spark, entry).withColumn(_MATCHED, F.lit(True))
    target_view = resolver.view(target_df)
    source_df = spark.sql(source_sql)
    source_cols = {c.lower(): c for c in source_df.columns}
    source_view = resolver.view(source_df)
    fields = entry.data_fields

    whens = stmt.args["whens"].expressions
    options = table_write_options(spark, entry)
    props = _table_properties(entry)
    by_key = _check_merge(spark, entry, props, stmt, whens, target_alias, source_alias, source_df, source_view,
                          options)
    on = rewrite(resolver, by_key if by_key is not None else stmt.args["on"]).sql("spark")
    branches = []   # (condition sql, action, {column lower: sql})
    for when in whens:
        matched = bool(when.args.get("matched"))
        if when.args.get("source"):
            raise SqlError(f"MERGE INTO {entry.name}: WHEN NOT MATCHED BY SOURCE is not supported by Hudi")
        cond = f"`{target_alias}`.`{_MATCHED}` IS {'NOT ' if matched else ''}NULL"
        if when.args.get("condition") is not None:
            cond += f" AND ({rewrite(resolver, when.args['condition']).sql('spark')})"
        then = when.args["then"]
        if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
            if not matched:
                raise SqlError(f"MERGE INTO {entry.name}: DELETE needs WHEN MATCHED")
            branches.append((cond, "delete", {}))
            continue
        values: dict[str, str] = {}
        star = (isinstance(then, exp.Update) and any(isinstance(e, exp.Star) for e in then.expressions)) or \
            (isinstance(then, exp.Insert) and isinstance(then.this, exp.Star))
        if star:
            missing = [f.name for f in fields if f.name.lower() not in source_cols]
            if missing:
                raise SqlError(f"MERGE INTO {entry.name}: {then.sql('spark')} needs source column(s) "
                               f"{', '.join(missing)}")
            values = {f.name.lower(): f"`{source_alias}`.`{source_cols[f.name.lower()]}`" for f in fields}
        elif isinstance(then, exp.Update):
            for eq in then.expressions:
                values[eq.this.name.lower()] = rewrite(resolver, eq.expression).sql("spark")
        elif isinstance(then, exp.Insert):
            cols = [c.name.lower() for c in then.this.expressions]
            for col, value in zip(cols, then.expression.expressions):
                values[col] = rewrite(resolver, value).sql("spark")
        else:
            raise SqlError(f"MERGE INTO {entry.name}: {then.sql('spark')} is not supported")
        unknown = [c for c in values if c not in {f.name.lower() for f in fields}]
        if unknown:
            raise SqlError(f"MERGE INTO {entry.name}: unknown target column(s) {', '.join(unknown)}")
        if matched:   # unset columns keep the stored values
            values = {f.name.lower(): values.get(f.name.lower(), f"`{target_alias}`.`{f.name}`") for f in fields}
        branches.append((cond, "update" if matched else "insert", values))
    if not branches:
        raise SqlError(f"MERGE INTO {entry.name}: no WHEN clause")

    clause = "CASE " + " ".join(f"WHEN {c} THEN {i}" for i, (c, _, _) in enumerate(branches)) + " ELSE -1 END"
    select = [f"{clause} AS `_pyhudi_clause`"]
    for fld in fields:
        cases = []
        for index, (_, action, values) in enumerate(branches):
            value = values.get(fld.name.lower())
            if action == "delete":
                value = f"`{target_alias}`.`{fld.name}`"
            if value is not None:
                cases.append(f"WHEN {index} THEN CAST(({value}) AS {fld.dataType.simpleString()})")
        expr = f"CASE ({clause}) {' '.join(cases)} END" if cases else f"CAST(NULL AS {fld.dataType.simpleString()})"
        select.append(f"{expr} AS `{fld.name}`")
    if not props.record_key_fields:   # matched rows keep their stored key (Hudi's prepped MERGE of key-less tables)
        select += [f"`{target_alias}`.`{META_KEY}` AS `{META_KEY}`",
                   f"`{target_alias}`.`{META_PARTITION}` AS `{META_PARTITION}`"]
    joined = spark.sql(f"SELECT {', '.join(select)} FROM `{source_view}` AS `{source_alias}` "
                       f"LEFT JOIN `{target_view}` AS `{target_alias}` ON {on}")
    delete_ids = [i for i, (_, action, _) in enumerate(branches) if action == "delete"]
    # Hudi's MERGE INTO: updates, deletes and inserts in one upsert, one commit; the writer's per-row delete flag
    # marks the rows of DELETE clauses (it is not part of the table schema)
    rows = joined.filter(F.col("_pyhudi_clause") >= 0) \
        .withColumn(DELETE_FLAG_COLUMN, F.col("_pyhudi_clause").isin(delete_ids)).drop("_pyhudi_clause")
    extra = {}
    if not options.get(C.PAYLOAD_CLASS.key) and options.get(C.PRECOMBINE.key) and not props.is_mor:
        # Hudi's ExpressionPayload is a DefaultHoodieRecordPayload: an update whose ordering value is below the
        # stored one leaves the stored row (copy-on-write merges here; merge-on-read at read, by the table's payload)
        extra[C.PAYLOAD_CLASS.key] = DEFAULT_PAYLOAD
    write_rows(spark, entry, rows, "upsert", extra)


def _check_merge(spark: SparkSession, entry: catalog.CatalogEntry, props, stmt: exp.Merge, whens: list,
                 target_alias: str, source_alias: str, source_df: DataFrame, source_view: str, options: dict):
    """Hudi's refusals of a MERGE INTO (sqlext/merge_checks.py), in Hudi's order; returns the record-key join
    (_key_condition)."""

    def type_of(sql: str):
        try:
            return spark.sql(f"SELECT {sql} FROM `{source_view}` AS `{source_alias}`").schema[0].dataType
        except Exception:  # noqa: BLE001 - not a source-side expression: Spark's own analysis reports it
            return T.StringType()

    checks = MergeChecks(entry.name, target_alias, source_alias, {f.name: f.dataType for f in entry.data_fields},
                         source_df.columns, type_of)
    updates = [eq for when in whens if when.args.get("matched") and isinstance(when.args["then"], exp.Update)
               for eq in when.args["then"].expressions if isinstance(eq, exp.EQ)]
    checks.check_updates(props.is_mor, [eq.expression for eq in updates])
    optimized = str(options.get(C.SQL_OPTIMIZED_WRITES.key, "false")).strip().lower() == "true" \
        and C.SQL_OPTIMIZED_WRITES.key in settings.session_options(spark)
    keyed = checks.check_condition(stmt.args["on"], props.record_key_fields, props.partition_fields, optimized)
    if props.record_key_fields:
        checks.check_ordering_field(props.precombine_field, [(eq.this.name, eq.expression) for eq in updates])
    global_index = C.IndexConfig.from_options(options).is_global
    return _key_condition(props, keyed, target_alias, source_alias, source_df.columns, global_index)


def _key_condition(props, keyed: dict, target_alias: str, source_alias: str, source_columns: list[str],
                   global_index: bool):
    """Hudi merges a MERGE INTO of a primary-key table by record key, not by the ON condition: a source row
    matches the stored record of the key it gives (the ON's expression for a key or partition column, else the
    source column of that name); other ON terms do not decide. Under a global index the key alone decides (the
    index locates a key in any partition, so a row giving another partition still matches). None when a key
    column has no source value (the ON condition is used as written)."""
    if not props.record_key_fields:
        return None
    by_lower = {c.lower(): c for c in source_columns}
    terms = []
    for field in props.record_key_fields + ([] if global_index else props.partition_fields):
        value = keyed.get(field.lower())
        if value is None and field.lower() in by_lower:
            value = exp.column(by_lower[field.lower()], table=source_alias, quoted=True)
        if value is None:
            if field in props.partition_fields:
                continue
            return None
        terms.append(exp.EQ(this=exp.column(field, table=target_alias, quoted=True), expression=value.copy()))
    return exp.and_(*terms) if terms else None
