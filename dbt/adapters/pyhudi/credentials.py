"""The `pyhudi` profile: what a target in profiles.yml may say, checked when dbt reads it.

A profile names the Spark `master`, the `warehouse` folder (Spark SQL warehouse + Derby metastore; default
`<target-path>/pyhudi`), extra `spark_conf`, `hudi_options`, the default `hoodie.*` options of every Hudi table the
project creates, and `metastore_url` (postgresql://user:password@host:port/db), a Hive metastore in PostgreSQL that
other processes can share while dbt runs (the Derby default serves one process; not shown by `dbt debug`: it may
hold a password). No Thrift server: Spark runs in dbt's process, or, with `remote: sc://host:port`, on a Spark
Connect server (then `master`, `warehouse` and `metastore_url` are the server's business, and `spark_conf` holds
runtime SQL settings only).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

from dbt.adapters.spark.connections import SparkConnectionMethod, SparkCredentials
from dbt_common.exceptions import DbtRuntimeError

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
    remote: Optional[str] = None

    def __post_init__(self) -> None:
        if self.method != SparkConnectionMethod.SESSION:
            raise DbtRuntimeError(
                f"pyhudi profiles run Spark in-process: `method` must be 'session' (or left out), got '{self.method}'. "
                "For a Thrift server or Databricks use the `spark` adapter.")
        self.remote = self.remote or None     # an empty env_var() default means: no Connect server
        if self.remote is not None and not self.remote.startswith("sc://"):
            raise DbtRuntimeError(f"pyhudi profile: `remote` is a Spark Connect URL (sc://host:port), got "
                                  f"'{self.remote}'")
        if self.host is None:
            self.host = self.remote or self.master
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
        return self.remote or self.warehouse or self.master

    def _connection_keys(self) -> Tuple[str, ...]:
        return "master", "remote", "warehouse", "schema", "spark_conf", "hudi_options"


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
