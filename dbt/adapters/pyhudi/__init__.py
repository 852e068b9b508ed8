"""dbt adapter `pyhudi`: Hudi tables from dbt models, on an in-process Spark session (extends dbt-spark)."""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.pyhudi.connections import PyhudiConnectionManager  # noqa: F401
from dbt.adapters.pyhudi.credentials import PyhudiCredentials
from dbt.adapters.pyhudi.impl import PyhudiAdapter
from dbt.adapters.pyhudi.relation import PyhudiRelation  # noqa: F401
from dbt.include import pyhudi

Plugin = AdapterPlugin(
    adapter=PyhudiAdapter,  # type: ignore[arg-type]
    credentials=PyhudiCredentials,
    include_path=pyhudi.PACKAGE_PATH,
    dependencies=["spark"],
)
