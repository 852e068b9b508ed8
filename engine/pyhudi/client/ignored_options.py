"""Hudi options pyhudi accepts but does not implement: each warns once per process, by name, saying it is ignored.

pyhudi.config accepts whole families of Hudi keys (``hoodie.compaction.*``, ``hoodie.clustering.*``) and a list of
tuning keys without a warning, as they are legitimate Hudi keys; this module names those of them pyhudi has no
behaviour for, so a user who sets one learns that it does nothing here instead of assuming it took effect.
"""

from __future__ import annotations

import warnings
from typing import Mapping

from pyhudi import config as C
from pyhudi.services.clean.trigger import CLEAN_TRIGGER_KEYS

# hoodie.compaction.* keys the compaction planner and executor read (services/compaction/plan.py)
IMPLEMENTED_COMPACTION = {p.key for p in (C.COMPACTION_STRATEGY, C.COMPACTION_TARGET_IO, C.COMPACTION_LOG_SIZE_THRESHOLD,
                                          C.COMPACTION_LOG_NUM_THRESHOLD, C.COMPACTION_PAYLOAD_CLASS)}
# hoodie.clustering.* keys the clustering planner, executor, inline hook and writer read (services/clustering/plan.py)
IMPLEMENTED_CLUSTERING = {p.key for p in (
    C.CLUSTERING_SMALL_FILE_LIMIT, C.CLUSTERING_MAX_BYTES_PER_GROUP, C.CLUSTERING_MAX_NUM_GROUPS,
    C.CLUSTERING_TARGET_FILE_MAX_BYTES, C.CLUSTERING_SORT_COLUMNS, C.CLUSTERING_SINGLE_GROUP,
    C.CLUSTERING_PARTITION_REGEX, C.CLUSTERING_PARTITION_SELECTED, C.CLUSTERING_LOOKBACK_PARTITIONS,
    C.CLUSTERING_SKIP_FROM_LATEST, C.CLUSTERING_BEGIN_PARTITION, C.CLUSTERING_END_PARTITION,
    C.CLUSTERING_PLAN_STRATEGY_CLASS, C.CLUSTERING_EXECUTION_STRATEGY_CLASS, C.CLUSTERING_FILTER_MODE,
    C.CLUSTERING_INLINE, C.CLUSTERING_INLINE_MAX_COMMITS, C.CLUSTERING_SCHEDULE_INLINE,
    C.CLUSTERING_UPDATES_STRATEGY)}
# the only parallelism key a write reads (bulk_insert repartitions to it); Spark sizes every other stage
IMPLEMENTED_PARALLELISM = {C.BULK_INSERT_PARALLELISM.key}
# keys pyhudi's behaviour already matches for this value: only another value is ignored
BEHAVIOUR = {C.CLUSTERING_PRESERVE_METADATA.key: C.CLUSTERING_PRESERVE_METADATA.default}
# other Hudi keys accepted without effect that a user may expect to change something
IGNORED = C.IGNORED_OPTIONS
_warned: set[str] = set()


def ignored_keys(options: Mapping[str, str]) -> dict[str, str]:
    """key -> why it is ignored, for the keys of `options` pyhudi accepts without implementing them."""
    out = {}
    for key, value in options.items():
        if key in CLEAN_TRIGGER_KEYS:
            continue
        if key in BEHAVIOUR:
            if str(value).strip().lower() != BEHAVIOUR[key]:
                out[key] = f"pyhudi always behaves as {key}={BEHAVIOUR[key]}"
        elif key in IGNORED:
            out[key] = IGNORED[key]
        elif key.endswith("parallelism") and key.startswith("hoodie.") and key not in IMPLEMENTED_PARALLELISM:
            out[key] = "Spark's adaptive execution sizes the write's stages"
        elif key.startswith("hoodie.compaction.") and key not in IMPLEMENTED_COMPACTION:
            out[key] = "pyhudi's compaction does not implement it"
        elif key.startswith("hoodie.clustering.") and key not in IMPLEMENTED_CLUSTERING:
            out[key] = "pyhudi's clustering does not implement it (run clustering inline or with pyhudi services)"
    return out


def warn_ignored(options: Mapping[str, str], where: str = "") -> list[str]:
    """Warn once per process for each accepted-but-ignored key of `options`; returns the keys warned now."""
    fresh = []
    for key, why in sorted(ignored_keys(options).items()):
        if key in _warned:
            continue
        _warned.add(key)
        fresh.append(key)
        warnings.warn(f"Hudi option {key}={options[key]}{' (' + where + ')' if where else ''} is ignored by pyhudi: "
                      f"{why}; remove it to silence this warning", stacklevel=3)
    return fresh
