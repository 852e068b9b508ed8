"""A model's columns as a Hudi table needs them, checked before any SQL changes the table.

Hudi's Spark SQL keeps partition columns last in a table's schema (in PARTITIONED BY order), whatever their place
in the query; the materializations select the model's columns in that order, so every statement (CTAS, INSERT,
MERGE) sees the table's own layout. The checks here turn a wrong config (a partition column or unique_key the
model does not select, an unknown overwrite mode) into an error naming the model, the column and the fix.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Sequence

from dbt_common.exceptions import CompilationError

OVERWRITE_MODE = "hoodie.datasource.overwrite.mode"
OVERWRITE_MODES = ("static", "dynamic")
OPTIONS_COMMENT = "pyhudi.options"


def column_list(value: Any) -> List[str]:
    """`'a'`, `'a, b'` or `['a', 'b']` -> ['a', 'b'] (dbt configs take all three spellings)."""
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def _name(column: Any) -> str:
    return str(getattr(column, "name", column))


def check_columns(model: str, selected: Iterable[Any], partition_by: Any = None, unique_key: Any = None) -> None:
    """Raise when partition_by or unique_key names a column the model's query does not return."""
    selected = list(selected)
    names = {_name(c).lower() for c in selected}
    shown = ", ".join(_name(c) for c in selected)
    for label, columns in (("partition_by", column_list(partition_by)), ("unique_key", column_list(unique_key))):
        missing = [c for c in columns if c.lower() not in names]
        if missing:
            raise CompilationError(
                f"pyhudi: model {model}: {label} column(s) {', '.join(missing)} not in the model's select "
                f"(it returns {shown}); select the column(s) in the model or change {label}. Nothing was written.")


def partition_last(columns: Sequence[Any], partition_by: Any) -> List[Any]:
    """The columns in a Hudi table's order: data columns as selected, then the partition columns in
    PARTITIONED BY order (what Hudi's Spark SQL stores in the catalog)."""
    parts = [p.lower() for p in column_list(partition_by)]
    if not parts:
        return list(columns)
    by_name = {_name(c).lower(): c for c in columns}
    return [c for c in columns if _name(c).lower() not in parts] + [by_name[p] for p in parts if p in by_name]


def check_overwrite_mode(model: str, options: Dict[str, Any]) -> None:
    mode = options.get(OVERWRITE_MODE)
    if mode is not None and str(mode).strip().lower() not in OVERWRITE_MODES:
        raise CompilationError(
            f"pyhudi: model {model}: {OVERWRITE_MODE} is '{mode}'; Hudi knows STATIC (replace the table) and "
            "DYNAMIC (replace the partitions written); set one of them or leave it out. Nothing was written.")


def options_comment(options: Dict[str, Any]) -> str:
    """`/* pyhudi.options {...} */`: options for the one statement it starts (pyhudi.sql gives them precedence
    over session and table settings), so concurrent dbt threads never share them."""
    text = json.dumps({str(k): str(v) for k, v in options.items()}, sort_keys=True)
    return "/* " + OPTIONS_COMMENT + " " + text.replace("*/", "* /") + " */"
