"""The connection manager of the `pyhudi` dbt adapter: a connection is a cursor (cursor.py) on the in-process
Spark session (session.py), opened from the profile (credentials.py); no Thrift server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.contracts.connection import AdapterResponse, Connection, ConnectionState
from dbt.adapters.spark.connections import SparkConnectionManager

from dbt.adapters.pyhudi.credentials import PyhudiCredentials, resolve_warehouse
from dbt.adapters.pyhudi.cursor import PyhudiConnectionWrapper


class PyhudiConnectionManager(SparkConnectionManager):
    """Opens a connection on the process's Spark session (session.py) and reports what a statement committed."""

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
                                  creds.metastore_url, remote=creds.remote)
        except Exception as exc:
            from dbt.adapters.exceptions import FailedToConnectError
            raise FailedToConnectError(f"pyhudi: could not start Spark ({creds.remote or creds.master}): {exc}") \
                from exc
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
