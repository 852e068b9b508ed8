"""Hudi options pyhudi accepts but does not implement: each warns once per process, by name, saying it is ignored.

config.py accepts whole families of Hudi keys (``hoodie.compaction.*``, ``hoodie.clustering.*``) and a list of
tuning keys without a warning, as they are legitimate Hudi keys; this module names those of them pyhudi has no
behaviour for, so a user who sets one learns that it does nothing here instead of assuming it took effect.
"""

from __future__ import annotations

import warnings
from typing import Mapping

from pyhudi.services.clean_trigger import CLEAN_TRIGGER_KEYS

# hoodie.compaction.* keys the compaction planner and executor read (services/compaction_plan.py)
IMPLEMENTED_COMPACTION = {"hoodie.compaction.strategy", "hoodie.compaction.target.io",
                          "hoodie.compaction.logfile.size.threshold", "hoodie.compaction.logfile.num.threshold",
                          "hoodie.compaction.payload.class"}
# hoodie.clustering.* keys the clustering planner, executor, inline hook and writer read (services/clustering_plan.py)
_PLAN = "hoodie.clustering.plan.strategy."
IMPLEMENTED_CLUSTERING = {_PLAN + name for name in (
    "small.file.limit", "max.bytes.per.group", "max.num.groups", "target.file.max.bytes", "sort.columns",
    "single.group.clustering.enabled", "partition.regex.pattern", "partition.selected",
    "daybased.lookback.partitions", "daybased.skipfromlatest.partitions", "cluster.begin.partition",
    "cluster.end.partition", "class")} | {
    "hoodie.clustering.execution.strategy.class", "hoodie.clustering.plan.partition.filter.mode",
    "hoodie.clustering.inline", "hoodie.clustering.inline.max.commits", "hoodie.clustering.schedule.inline",
    "hoodie.clustering.updates.strategy"}
# the only parallelism key a write reads (bulk_insert repartitions to it); Spark sizes every other stage
IMPLEMENTED_PARALLELISM = {"hoodie.bulkinsert.shuffle.parallelism"}
# keys pyhudi's behaviour already matches for this value: only another value is ignored
BEHAVIOUR = {"hoodie.clustering.preserve.commit.metadata": "true"}
# other Hudi keys accepted without effect that a user may expect to change something
IGNORED = {
    "hoodie.embed.timeline.server": "pyhudi has no timeline server; each process reads the timeline itself",
    "hoodie.bloom.index.use.caching": "index lookups run in one Spark job",
    "hoodie.bloom.index.bucketized.checking": "index lookups run in one Spark job",
    "hoodie.bloom.index.use.treebased.filter": "the key ranges of every file are checked",
    "hoodie.simple.index.use.caching": "index lookups run in one Spark job",
    "hoodie.datasource.write.row.writer.enable": "bulk_insert always writes rows through Arrow",
}
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
