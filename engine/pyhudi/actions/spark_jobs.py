"""Spark jobs of the actions, run from the driver: collect a job's (small) result rows, turning a PyHudiError
raised inside an executor back into the same error on the driver."""

from __future__ import annotations

import re

from pyspark.sql import DataFrame

from pyhudi import errors

_ERROR_PATTERN = re.compile(r"pyhudi\.errors\.(\w+): (.*?)(?:\n|$)")


def collect_or_raise(df: DataFrame) -> list:
    """collect(), turning a PyHudiError raised inside an executor back into the same error on the driver."""
    try:
        return df.collect()
    except Exception as exc:  # noqa: BLE001 - rethrown below unless it carries one of our errors
        match = _ERROR_PATTERN.search(str(exc))
        if match and isinstance(getattr(errors, match.group(1), None), type):
            raise getattr(errors, match.group(1))(match.group(2)) from None
        raise
