"""Change data capture (Hudi's CDC, 0.14/0.15): which tables log changes, and the shape of a CDC query's rows.

A table created with hoodie.table.cdc.enabled=true answers incremental queries in the `cdc` format
(hoodie.datasource.query.incremental.format=cdc, or SQL hudi_table_changes(t, 'cdc', begin[, end])) with one row
per changed record and commit: op ('i', 'u', 'd'), ts_ms (the commit instant), before and after (the record as
JSON, null where absent), as Hudi's Spark CDC relation returns them.
"""

from __future__ import annotations

from typing import Mapping

import pyarrow as pa

from pyhudi import config as C
from pyhudi.errors import ConfigError

INSERT, UPDATE, DELETE = "i", "u", "d"          # Hudi's HoodieCDCOperation values
CDC_SCHEMA = pa.schema([("op", pa.string()), ("ts_ms", pa.string()), ("before", pa.string()),
                        ("after", pa.string())])
CDC_SPARK_DDL = "op string, ts_ms string, before string, after string"


def cdc_table_properties(config: C.HoodieConfig) -> dict[str, str]:
    """The hoodie.properties entries a new table gets from its create options (none unless CDC is on)."""
    if not config.get(C.CDC_ENABLED):
        return {}
    return {C.CDC_ENABLED.key: "true", C.CDC_LOGGING_MODE.key: config.get(C.CDC_LOGGING_MODE)}


def is_cdc_query(options: Mapping | None) -> bool:
    """True for an incremental query in the cdc format (the format option alone changes nothing, as in Hudi)."""
    config = C.HoodieConfig(options or {}, warn_unknown=False)
    return config.get(C.QUERY_TYPE) == "incremental" and config.get(C.INCREMENTAL_FORMAT) == "cdc"


def cdc_logging_mode(table) -> str | None:
    """The supplemental logging mode a write to `table` logs changes with; None when CDC is off."""
    if table is None or str(table.properties.get(C.CDC_ENABLED.key) or "").strip().lower() != "true":
        return None
    return str(table.properties.get(C.CDC_LOGGING_MODE.key) or C.CDC_LOGGING_MODE.default).strip().upper()


def check_cdc_table(table) -> str:
    """The table's supplemental logging mode; ConfigError when the table does not capture changes."""
    props = table.properties
    if str(props.get(C.CDC_ENABLED.key) or "false").strip().lower() != "true":
        raise ConfigError(
            f"CDC query on table {table.name}: the table was not created with {C.CDC_ENABLED.key}=true, so it "
            f"has no change data; use {C.INCREMENTAL_FORMAT.key}=latest_state (hudi_table_changes(t, "
            "'latest_state', ...)) or recreate the table with the property set")
    if not props.populate_meta_fields:
        raise ConfigError(f"CDC query on table {table.name}: tables written with {C.POPULATE_META_FIELDS.key}=false "
                          "(virtual keys) are not supported for CDC queries; read a snapshot or time travel")
    mode = str(props.get(C.CDC_LOGGING_MODE.key) or C.CDC_LOGGING_MODE.default).strip().upper()
    if mode not in C.CDC_LOGGING_MODE.choices:
        raise ConfigError(f"table {table.name} has {C.CDC_LOGGING_MODE.key}={mode!r}, which is not one of "
                          f"{', '.join(C.CDC_LOGGING_MODE.choices)}")
    return mode
