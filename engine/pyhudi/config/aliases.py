"""Hudi's Spark SQL option aliases, in one place: the SQL layer, the options resolver and the dbt adapter read
them here. Keys are matched case-insensitively (Hudi's SQL treats `primaryKey` and `primarykey` alike)."""

from __future__ import annotations

from typing import Any, Mapping

from pyhudi.config.table import TABLE_TYPE
from pyhudi.config.write import PRECOMBINE, RECORD_KEY

# Hudi's SQL names (TBLPROPERTIES / OPTIONS of CREATE TABLE)
PRIMARY_KEY = "primaryKey"
PRECOMBINE_FIELD = "preCombineField"
TYPE = "type"

# lower-cased alias -> the hoodie.* key it stands for
SQL_ALIASES = {
    "primarykey": RECORD_KEY.key,
    "precombinefield": PRECOMBINE.key,
    "precombinekey": PRECOMBINE.key,
    "type": TABLE_TYPE.key,
}
# values of `type` -> hoodie.datasource.write.table.type
TABLE_TYPE_ALIASES = {"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"}
# dbt-spark / Hudi SQL spellings of a model's options -> Hudi's SQL name (dbt adapter)
DBT_OPTION_ALIASES = {
    "primarykey": PRIMARY_KEY,
    "precombinefield": PRECOMBINE_FIELD,
    "precombinekey": PRECOMBINE_FIELD,
    "precombine_key": PRECOMBINE_FIELD,
    "type": TYPE,
    "table_type": TYPE,
}


def normalize_options(options: Mapping[str, Any] | None) -> dict[str, str]:
    """Resolve SQL aliases and stringify values; keys are kept as given except aliases."""
    out: dict[str, str] = {}
    for key, value in (options or {}).items():
        if value is None:
            continue
        key = SQL_ALIASES.get(str(key).lower(), str(key))
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if key == TABLE_TYPE.key:
            text = TABLE_TYPE_ALIASES.get(text.strip().upper(), text)
        out[key] = text
    return out
