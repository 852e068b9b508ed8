"""Built query DataFrames per Spark session, reused while the table still reads the same files.

Building a snapshot DataFrame costs ~100 py4j round trips (Spark analyses each step: the base scans with their
file index, the Python passes over the logs, the anti join, the union): ~0.1 s on a warm JVM, more on a cold one,
which is most of a small MOR query's fixed cost and is paid again by every read of an unchanged table (a dbt
project reading its sources, a dashboard refresh). Planning itself stays per read: ``plan_scan`` checks the
timeline each time (cached metadata, ~1 ms), so another writer's commit is seen. The cache is keyed by everything
the DataFrame is built from, so a plan that reads other files, instants, byte ranges or a new schema builds anew.

Only plans are cached, never rows: each read gets a new DataFrame over the cached analysed plan
(``select("*")``: no execution state is shared with the cached one, and an action on it runs the whole query).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Callable

from pyspark.sql import DataFrame, SparkSession

from pyhudi.reader.plan import ScanPlan

ENTRIES_PER_SESSION = 16   # a plan holds no data (file lists and the log passes' closures): a few KB each

_lock = threading.Lock()
_sessions: "weakref.WeakKeyDictionary[SparkSession, OrderedDict]" = weakref.WeakKeyDictionary()


def plan_key(plan: ScanPlan, kind: str) -> tuple:
    """What a DataFrame built from ``plan`` depends on. Base and log files are immutable per name and size (a log
    file grows by appends: its size is in the key, and the byte ranges commits wrote, ``committed_extents``)."""
    props = plan.table.properties
    return (kind, plan.table.storage.base_uri, plan.schema.serialize().to_pybytes(),
            tuple((s.partition_path, s.file_id, s.base_instant, s.base_file, tuple(s.log_files))
                  for s in plan.slices),
            plan.begin_exclusive, plan.end_inclusive, plan.base_only, plan.visible_instants, plan.committed_before,
            tuple(sorted((path, tuple(map(tuple, ranges))) for path, ranges in plan.committed_extents.items())),
            plan.ordering_field, plan.payload_class, props.populate_meta_fields,
            tuple(sorted(plan.commit_times)) if plan.commit_times is not None else None)


def cached_dataframe(spark: SparkSession, plan: ScanPlan, kind: str, build: Callable[[], DataFrame]) -> DataFrame:
    """A new DataFrame over the plan ``build()`` made for an equal ``plan`` in this session (built now if none)."""
    key = plan_key(plan, kind)
    with _lock:
        entries = _sessions.setdefault(spark, OrderedDict())
        built = entries.get(key)
        if built is not None:
            entries.move_to_end(key)
    if built is None:
        built = build()
        with _lock:
            entries[key] = built
            while len(entries) > ENTRIES_PER_SESSION:
                entries.popitem(last=False)
    return built.select("*")


def clear() -> None:
    """Forget every cached plan (tests; a session whose catalog or configuration changed under it)."""
    with _lock:
        _sessions.clear()
