"""Profile (credentials) and connections of the `pyhudi` dbt adapter.

A connection is a cursor on the in-process Spark session (session.py); no Thrift server. The profile names the
Spark `master`, the `warehouse` folder (Spark SQL warehouse + Derby metastore; default `<target-path>/pyhudi`),
extra `spark_conf`, `hudi_options`, the default `hoodie.*` options of every Hudi table the project creates, and
`metastore_url` (postgresql://user:password@host:port/db), a Hive metastore in PostgreSQL that other processes can
share while dbt runs (the Derby default serves one process; not shown by `dbt debug`: it may hold a password).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from dbt.adapters.contracts.connection import AdapterResponse, Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import (SparkConnectionManager, SparkConnectionMethod,
                                            SparkConnectionWrapper, SparkCredentials)
from dbt_common.exceptions import DbtRuntimeError

logger = AdapterLogger("pyhudi")

DEFAULT_WAREHOUSE_DIR = "pyhudi"     # under the project's target path


@dataclass
class PyhudiCredentials(SparkCredentials):
    method: SparkConnectionMethod = SparkConnectionMethod.SESSION  # type: ignore[assignment]
    host: Optional[str] = None
    master: str = "local[*]"
    warehouse: Optional[str] = None
    spark_conf: Dict[str, Any] = field(default_factory=dict)
    hudi_options: Dict[str, Any] = field(default_factory=dict)
    metastore_url: Optional[str] = None

    def __post_init__(self) -> None:
        if self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"pyhudi profiles run Spark in-process: `method` must be 'session' (or left out), got '{self.method}'. "
                "For a Thrift server or Databricks use the `spark` adapter.")
        if self.host is None:
            self.host = self.master
        super().__post_init__()
        self.spark_conf = {str(k): str(v) for k, v in (self.spark_conf or {}).items()}
        self.hudi_options = {str(k): str(v) for k, v in (self.hudi_options or {}).items()}
        bad = [k for k in self.spark_conf if not k.startswith("spark.")]
        if bad:
            raise DbtRuntimeError(f"pyhudi profile: spark_conf keys must be Spark settings (spark.*), got {bad}; "
                                  "put hoodie.* keys under hudi_options.")

    @property
    def type(self) -> str:
        return "pyhudi"

    @property
    def unique_field(self) -> str:
        return self.warehouse or self.master

    def _connection_keys(self) -> Tuple[str, ...]:
        return "master", "warehouse", "schema", "spark_conf", "hudi_options"


class PyhudiConnectionWrapper(SparkConnectionWrapper):
    """dbt's connection handle: one cursor at a time on dbt's Spark session."""

    def __init__(self, spark) -> None:
        self.spark = spark
        self._cursor = None

    def cursor(self) -> "PyhudiConnectionWrapper":
        from dbt.adapters.pyhudi.session import Cursor
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


class PyhudiConnectionManager(SparkConnectionManager):
    TYPE = "pyhudi"

    def __init__(self, profile, mp_context) -> None:
        super().__init__(profile, mp_context)
        creds = getattr(profile, "credentials", None)
        if isinstance(creds, PyhudiCredentials):
            creds.warehouse = resolve_warehouse(creds.warehouse, getattr(profile, "project_root", None),
                                                getattr(profile, "target_path", None))

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == ConnectionState.OPEN:
            return connection
        from dbt.adapters.pyhudi.session import spark_session
        creds: PyhudiCredentials = connection.credentials
        warehouse = creds.warehouse or resolve_warehouse(None, None, None)
        try:
            spark = spark_session(creds.master, warehouse, creds.spark_conf, creds.server_side_parameters,
                                  creds.metastore_url)
        except Exception as exc:
            from dbt.adapters.exceptions import FailedToConnectError
            raise FailedToConnectError(f"pyhudi: could not start Spark ({creds.master}): {exc}") from exc
        connection.handle = PyhudiConnectionWrapper(spark)
        connection.state = ConnectionState.OPEN
        return connection

    @classmethod
    def get_response(cls, cursor: Any) -> AdapterResponse:
        """OK, or for a statement that committed to Hudi tables: the commit (instant, operation) and Hudi's write
        stats summed, as other adapters report rows affected (run_results.json `adapter_response`)."""
        commits = list(getattr(cursor, "commits", None) or [])
        if not commits:
            return AdapterResponse(_message="OK")
        from pyhudi.sqlext.commits import describe, summary
        counts = summary(commits)
        return PyhudiAdapterResponse(
            _message=f"OK {describe(commits)}", code=counts["hudi_operations"][-1],
            rows_affected=counts["rows_affected"], query_id=counts["hudi_instants"][-1],
            hudi_instant=counts["hudi_instants"][-1], hudi_operation=counts["hudi_operations"][-1],
            rows_inserted=counts["rows_inserted"], rows_updated=counts["rows_updated"],
            rows_deleted=counts["rows_deleted"], files_written=counts["files_written"],
            bytes_written=counts["bytes_written"])


@dataclass
class PyhudiAdapterResponse(AdapterResponse):
    """What a statement committed to a Hudi table (the last commit when one statement made several)."""
    hudi_instant: Optional[str] = None
    hudi_operation: Optional[str] = None
    rows_inserted: Optional[int] = None
    rows_updated: Optional[int] = None
    rows_deleted: Optional[int] = None
    files_written: Optional[int] = None
    bytes_written: Optional[int] = None


def resolve_warehouse(warehouse: Optional[str], project_root: Optional[str], target_path: Optional[str]) -> str:
    """Absolute warehouse folder: relative paths are relative to the dbt project; default <target>/pyhudi."""
    root = project_root or os.getcwd()
    if not warehouse:
        target = target_path or "target"
        warehouse = os.path.join(target if os.path.isabs(target) else os.path.join(root, target),
                                 DEFAULT_WAREHOUSE_DIR)
    elif "://" not in warehouse and not os.path.isabs(warehouse):
        warehouse = os.path.join(root, os.path.expanduser(warehouse))
    return warehouse if "://" in warehouse else os.path.abspath(os.path.expanduser(warehouse))
