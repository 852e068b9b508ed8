"""dbt's connection handle and cursor: the slice of DB-API dbt uses, over the pyhudi SQL layer.

Each statement dbt sends runs through `session.run_sql` (Hudi DDL/DML and CALL in pyhudi, the rest in Spark);
results stay a DataFrame until dbt fetches rows, and only as many as it fetches are collected. Errors become
DbtDatabaseError with the first paragraph of Spark's message.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any, Optional, Sequence

from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import SparkConnectionWrapper
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from dbt.adapters.pyhudi.session import last_commits, run_sql

logger = AdapterLogger("pyhudi")


class PyhudiConnectionWrapper(SparkConnectionWrapper):
    """dbt's connection handle: one cursor at a time on dbt's Spark session."""

    def __init__(self, spark) -> None:
        self.spark = spark
        self._cursor = None

    def cursor(self) -> "PyhudiConnectionWrapper":
        self._cursor = Cursor(self.spark)
        return self

    def cancel(self) -> None:
        logger.debug("pyhudi: cancel is a no-op (statements run in-process)")

    def close(self) -> None:
        if self._cursor is not None:
            self._cursor.close()

    def rollback(self, *args: Any, **kwargs: Any) -> None:
        logger.debug("pyhudi: no transactions; Hudi commits are atomic per statement")

    def execute(self, sql: str, bindings: Optional[list] = None) -> None:
        assert self._cursor is not None, "Cursor not available"
        self._cursor.execute(sql, bindings)

    @property
    def description(self):
        assert self._cursor is not None, "Cursor not available"
        return self._cursor.description

    @property
    def commits(self) -> list:
        return self._cursor.commits if self._cursor is not None else []

    def fetchall(self):
        assert self._cursor is not None, "Cursor not available"
        return self._cursor.fetchall()

    def fetchmany(self, size: int):
        assert self._cursor is not None, "Cursor not available"
        return self._cursor.fetchmany(size)

    def fetchone(self):
        assert self._cursor is not None, "Cursor not available"
        return self._cursor.fetchone()


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
