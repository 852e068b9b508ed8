"""`pyhudi.sql(spark, text)`: statements about Hudi tables and CALL go to the engine, everything else to
`spark.sql` exactly as written.

Each statement is parsed with sqlglot (Spark dialect); a statement is Hudi's when it creates a table `USING hudi`,
or writes to / drops / alters / reads a table whose catalog provider is `hudi`.
"""

from __future__ import annotations

import logging
import re

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from sqlglot import exp
from sqlglot.errors import ParseError

from pyhudi.errors import SqlError
from pyhudi.spark.jvm import is_connect
from pyhudi.sqlext import alter, commits, ddl, dml, settings
from pyhudi.sqlext.compaction_sql import as_call
from pyhudi.sqlext.query import Resolver, has_hudi_reference, rewrite
from pyhudi.sqlext.split import Statement, split_statements

_CALL = re.compile(r"^\s*call\s+", re.IGNORECASE)


def sql(spark: SparkSession, text: str, options: dict | None = None) -> DataFrame:
    """Run one or more `;`-separated statements; returns the last statement's DataFrame.

    `options` apply to every Hudi write of this call, over session settings and TBLPROPERTIES; a statement opened
    by `/* pyhudi.options {...} */` adds its own on top (pyhudi.sqlext.settings has the whole order)."""
    result = None
    with settings.scoped(options), commits.collecting():
        for statement in split_statements(text):
            with settings.scoped(statement.options):
                result = run_statement(spark, statement)
    return result if result is not None else _empty(spark)


def _empty(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame([], T.StructType([]))


def parse(statement: Statement) -> exp.Expression:
    import sqlglot
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return sqlglot.parse_one(statement.text, read="spark")
    except ParseError as exc:
        raise SqlError(_parse_message(statement, exc)) from None
    finally:
        logger.setLevel(level)


def _parse_message(statement: Statement, exc: ParseError) -> str:
    details = exc.errors[0] if exc.errors else {}
    line = (details.get("line") or 1) + statement.line - 1
    col = details.get("col") or 0
    description = details.get("description") or str(exc)
    return f"SQL syntax error at line {line}, column {col}: {description}\n  {statement.text.strip()[:300]}"


def run_statement(spark: SparkSession, statement: Statement) -> DataFrame:
    if _CALL.match(statement.text):
        from pyhudi.sqlext.procedures import call
        return call(spark, _CALL.sub("", statement.text, count=1))
    compaction = as_call(statement.text)
    if compaction is not None:   # RUN / SCHEDULE / SHOW COMPACTION ON (sqlext/compaction_sql.py)
        from pyhudi.sqlext.procedures import call
        return call(spark, compaction)
    try:
        tree = parse(statement)
    except SqlError as error:
        # sqlglot does not know every Spark statement: Spark decides; its parse error becomes ours.
        try:
            return spark.sql(statement.text)
        except Exception as spark_error:
            if type(spark_error).__name__ == "ParseException":
                raise error from spark_error
            raise
    resolver = Resolver(spark)
    try:
        return _dispatch(spark, resolver, statement, tree)
    finally:
        resolver.close()


def _dispatch(spark: SparkSession, resolver: Resolver, statement: Statement, tree: exp.Expression) -> DataFrame:
    handled = alter.dispatch(spark, resolver, statement.text, tree)   # partitions, TRUNCATE, TBLPROPERTIES
    if handled is not None:
        return handled
    if isinstance(tree, exp.Create):
        if ddl.is_hudi_create(tree):
            query = tree.args.get("expression")
            query_df = spark.sql(rewrite(resolver, query).sql("spark")) if query is not None else None
            ddl.create_table(spark, resolver, tree, query_df)
            return _empty(spark)
    elif isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        entry = resolver.hudi_entry(target) if isinstance(target, exp.Table) else None
        if entry is not None:
            handler = {exp.Insert: dml.insert, exp.Update: dml.update, exp.Delete: dml.delete,
                       exp.Merge: dml.merge}[type(tree)]
            handler(spark, resolver, tree, entry)
            return _empty(spark)
    elif isinstance(tree, exp.Drop) and (tree.args.get("kind") or "").upper() == "TABLE":
        tables = tree.args.get("tables") or ([tree.this] if tree.this is not None else [])
        entries = [resolver.hudi_entry(t) for t in tables if isinstance(t, exp.Table)]
        if len(tables) == 1 and entries and entries[0] is not None:
            ddl.drop_table(spark, entries[0], purge=bool(tree.args.get("purge")))
            return _empty(spark)
    elif isinstance(tree, exp.Alter) and isinstance(tree.this, exp.Table):
        entry = resolver.hudi_entry(tree.this)
        if entry is not None:
            return _alter(spark, statement, tree, entry)
    elif isinstance(tree, exp.Query):
        if has_hudi_reference(resolver, tree):
            return resolver.query(rewrite(resolver, tree).sql("spark"))
    return spark.sql(statement.text)


def _alter(spark: SparkSession, statement: Statement, tree: exp.Alter, entry) -> DataFrame:
    from pyhudi.sqlext import catalog
    actions = tree.args.get("actions") or []
    if len(actions) == 1 and isinstance(actions[0], exp.Schema):   # ADD COLUMNS
        ddl.add_columns(spark, entry, [d for d in actions[0].expressions if isinstance(d, exp.ColumnDef)])
        return _empty(spark)
    changes_schema = [a for a in actions if isinstance(a, (exp.RenameColumn, exp.AlterColumn))
                      or type(a).__name__ == "ReplaceColumns"
                      or (isinstance(a, exp.Drop) and str(a.args.get("kind") or "").upper().startswith("COLUMN"))]
    if changes_schema:   # Spark would change only the catalog entry, not the table's own (Avro) schema
        raise SqlError(f"ALTER TABLE {entry.name}: {changes_schema[0].sql('spark')} is not supported on Hudi tables "
                       "yet (pyhudi evolves schemas by adding nullable columns: ALTER TABLE ... ADD COLUMNS); "
                       "to drop, rename or retype columns, recreate the table with CREATE OR REPLACE TABLE ... AS "
                       "SELECT")
    if len(actions) == 1 and isinstance(actions[0], exp.AlterRename) and entry.managed and is_connect(spark):
        catalog.refuse_on_connect("ALTER TABLE ... RENAME TO on the managed table", entry.name,
                                  "the renamed folder cannot be recorded in the table's schema through the public API")
    result = spark.sql(statement.text)
    if len(actions) == 1 and isinstance(actions[0], exp.AlterRename):
        new = actions[0].this
        renamed = catalog.lookup(spark, None, new.db or entry.database, new.name)
        if renamed is not None:
            catalog.stamp_base_path(spark, renamed)
    return result
