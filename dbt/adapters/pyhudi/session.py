"""The in-process Spark session dbt runs on, and a DB-API-like cursor over the pyhudi SQL layer.

One SparkSession per process: an already running one (a notebook, a test suite, a second `dbtRunner.invoke`) is
reused, otherwise `pyhudi.session(...)` starts it from the profile. dbt shares it with its caller, like dbt-spark's
session mode (a `newSession()` would not see the Python data source `hudi`: Spark keeps those per session).
Per-model Hudi settings (overwrite mode, write operation) therefore never go to the session (`SET` would race
between dbt threads): a materialization starts its statement with `/* pyhudi.options {...} */`, and the cursor
hands those options to `pyhudi.sql` for that one statement.
"""

from __future__ import annotations

import datetime as dt
import decimal
import inspect
import json
import os
import re
import sys
import threading
from typing import Any, Optional, Sequence

from dbt.adapters.events.logging import AdapterLogger
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

logger = AdapterLogger("pyhudi")

_lock = threading.Lock()
_activated: set = set()     # ids of the JVM sessions where the `hudi` data source is registered

# SQL settings dbt needs on the session (dbt-spark's session mode leaves these gaps open).
DBT_SQL_CONF = {
    # seeds insert `cast(%s as date)`-style literals into declared columns; Spark 4's ANSI store assignment
    # rejects some of those casts in INSERT ... VALUES.
    "spark.sql.storeAssignmentPolicy": "LEGACY",
}


def _running_session():
    """The process's SparkSession if one is running (any thread), else None."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    sc = SparkContext._active_spark_context
    if sc is not None and getattr(sc, "_jsc", None) is not None:
        return SparkSession.builder.getOrCreate()
    return None


def spark_session(master: str, warehouse: str, spark_conf: dict, sql_conf: dict, metastore_url: str | None = None):
    """dbt's SparkSession: reuse the running one or start it once with pyhudi.session(...)."""
    import pyhudi

    with _lock:
        base = _running_session()
        if base is None:
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
            logger.debug(f"pyhudi: starting Spark ({master}) with warehouse {warehouse}")
            base = pyhudi.session(master=master, warehouse_dir=warehouse, app_name="dbt-pyhudi", hive=True,
                                  metastore_url=metastore_url,
                                  **{k: str(v) for k, v in spark_conf.items()})
            base.sparkContext.setLogLevel("ERROR")
        _activate(base)
        for name, value in {**DBT_SQL_CONF, **sql_conf}.items():
            base.conf.set(name, str(value))
        return base


def _activate(spark):
    """Register pyhudi's `hudi` data source unless the session (or one sharing its state) already has it."""
    import pyhudi

    key = id(spark._jsparkSession)
    if key not in _activated:
        try:
            pyhudi.activate(spark)
        except Exception as exc:
            if "DATA_SOURCE_ALREADY_EXISTS" not in str(exc):
                raise
        _activated.add(key)
    return spark


# the comments dbt puts before a statement (its query comment, then ours), and our options comment among them
_LEADING_COMMENTS = re.compile(r"^(\s*/\*.*?\*/)*\s*", re.DOTALL)
_OPTIONS = re.compile(r"/\*\s*pyhudi\.options\s+(\{.*?\})\s*\*/", re.DOTALL)


def statement_options(sql: str) -> tuple:
    """(statement without our options comment, its options or None); only the leading comments are searched."""
    head = _LEADING_COMMENTS.match(sql).group(0)
    found = _OPTIONS.search(head)
    if found is None:
        return sql, None
    try:
        options = json.loads(found.group(1))
    except ValueError as exc:
        raise DbtRuntimeError(f"pyhudi: unreadable statement options {found.group(1)!r}: {exc}") from None
    rest = head[:found.start()] + head[found.end():] + sql[len(head):]
    return rest.strip(), {str(k): str(v) for k, v in options.items()}


def run_sql(spark, sql: str):
    """Every statement dbt sends goes through the SQL layer (Hudi DDL/DML and CALL; the rest goes to Spark)."""
    import pyhudi

    sql_fn = getattr(pyhudi, "sql", None)
    text, options = statement_options(sql)
    if sql_fn is None:      # the SQL layer is not installed in this build: plain Spark SQL
        return spark.sql(text)
    if options is None:
        return sql_fn(spark, text)
    if "options" in inspect.signature(sql_fn).parameters:
        return sql_fn(spark, text, options=options)
    # an SQL layer that reads the options comment only where a statement begins
    return sql_fn(spark, "/* pyhudi.options " + json.dumps(options) + " */\n" + text)


def last_commits() -> list:
    """The Hudi commits of this thread's last `pyhudi.sql` call ([] without the SQL layer)."""
    try:
        from pyhudi.sqlext.commits import last_commits as collected
    except ImportError:
        return []
    return collected()


def partition_columns(spark, schema: Optional[str], identifier: str) -> list:
    """A table's partition columns from the session catalog ([] for unknown tables and views)."""
    from pyhudi.sqlext import catalog
    entry = catalog.lookup(spark, None, schema, identifier)
    return list(entry.partition_columns) if entry is not None else []


def sql_literal(value: Any) -> str:
    """A Python value as a Spark SQL literal (dbt passes seed rows and hook values as bindings)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, decimal.Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value) if value == value and value not in (float("inf"), float("-inf")) else f"'{value}'"
    if isinstance(value, dt.datetime):
        return "'" + value.strftime("%Y-%m-%d %H:%M:%S.%f") + "'"
    if isinstance(value, dt.date):
        return "'" + value.isoformat() + "'"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def bind(sql: str, bindings: Optional[Sequence[Any]]) -> str:
    """Substitute `%s` placeholders (dbt's binding char for Spark) with literals; `%%` stays a percent sign."""
    if not bindings:
        return sql
    return sql % tuple(sql_literal(b) for b in bindings)


class Cursor:
    """The slice of the DB-API cursor dbt uses: execute, description, fetchone/fetchmany/fetchall."""

    def __init__(self, spark):
        self._spark = spark
        self._df = None
        self._rows: Optional[list] = None
        self._complete = False
        self._pos = 0
        self.commits: list = []   # the Hudi commits of the last statement (pyhudi.client.write.WriteResult)

    def execute(self, sql: str, bindings: Optional[Sequence[Any]] = None) -> None:
        sql = sql.strip()
        while sql.endswith(";"):
            sql = sql[:-1].rstrip()
        sql = bind(sql, bindings)
        self._df, self._rows, self._pos, self._complete = None, None, 0, False
        self.commits = []
        try:
            self._df = run_sql(self._spark, sql)
            self.commits = last_commits()
        except DbtRuntimeError:
            raise
        except Exception as exc:   # AnalysisException, PyHudiError, Py4J errors: dbt shows the message
            raise DbtDatabaseError(error_message(exc)) from exc

    @property
    def description(self) -> list:
        if self._df is None:
            return []
        return [(f.name, f.dataType.simpleString(), None, None, None, None, f.nullable)
                for f in self._df.schema.fields]

    def _collect(self, limit: Optional[int] = None) -> list:
        """Rows collected so far; collects up to `limit` rows (None: all) the first time more are needed."""
        if self._df is None:
            return []
        if self._rows is None or (not self._complete and (limit is None or limit > len(self._rows))):
            try:
                self._rows = self._df.collect() if limit is None else self._df.limit(limit).collect()
            except Exception as exc:
                raise DbtDatabaseError(error_message(exc)) from exc
            self._complete = limit is None or len(self._rows) < limit
        return self._rows

    def fetchall(self) -> list:
        rows = self._collect()[self._pos:]
        self._pos += len(rows)
        return rows

    def fetchmany(self, size: int) -> list:
        """dbt show --limit: collects only what it shows, never the whole table."""
        rows = self._collect(self._pos + size)[self._pos:self._pos + size]
        self._pos += len(rows)
        return rows

    def fetchone(self):
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def close(self) -> None:
        self._df, self._rows, self._pos = None, None, 0


def error_message(exc: BaseException) -> str:
    text = str(exc)
    # Py4J wraps JVM errors in long stack traces; the first paragraph is what a dbt user needs.
    return text.split("\n\tat ")[0].strip() or type(exc).__name__
