"""Relations of the pyhudi adapter: Spark relations that know whether they are Hudi tables."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from dbt.adapters.spark.relation import SparkRelation

_PROVIDER = re.compile(r"^Provider:\s*(\S+)\s*$", re.MULTILINE | re.IGNORECASE)


def provider_of(information: Optional[str]) -> Optional[str]:
    """The table provider (`hudi`, `parquet`, ...) from `show table extended` / `describe extended` text."""
    match = _PROVIDER.search(information or "")
    return match.group(1).lower() if match else None


def is_hudi_information(information: Optional[str]) -> bool:
    """A Hudi table: provider `hudi`, or a table whose properties carry Hudi's own table config."""
    if provider_of(information) == "hudi":
        return True
    text = information or ""
    return "hoodie.table.name" in text or "hoodie.table.type" in text


@dataclass(frozen=True, eq=False, repr=False)
class PyhudiRelation(SparkRelation):
    @property
    def file_format(self) -> Optional[str]:
        if self.is_hudi:
            return "hudi"
        return provider_of(self.information)
