"""When the cleaner runs: Hudi's clean trigger (``hoodie.clean.trigger.strategy``, only NUM_COMMITS in Hudi 0.14/0.15:
a clean is scheduled once ``hoodie.clean.max.commits`` commits completed since the last clean, default 1) and
``hoodie.clean.async`` (the writer's clean runs beside the write, see services/clean/background.py).

Hudi counts the completed commits, delta commits and replace commits after the last completed clean's
``lastCompletedCommitTimestamp`` (every one on the timeline when there was no clean): CleanPlanActionExecutor.
"""

from __future__ import annotations

from typing import Mapping

from pyhudi import config as C
from pyhudi.commit.timeline_metadata import last_clean_metadata
from pyhudi.errors import ConfigError
from pyhudi.timeline import Timeline


NUM_COMMITS = "NUM_COMMITS"
CLEAN_ASYNC, CLEAN_TRIGGER_STRATEGY, CLEAN_MAX_COMMITS = C.CLEAN_ASYNC, C.CLEAN_TRIGGER_STRATEGY, C.CLEAN_MAX_COMMITS
# the keys of the clean trigger, which travel beside the write's config to the post-commit clean
CLEAN_TRIGGER_KEYS = (CLEAN_ASYNC.key, CLEAN_TRIGGER_STRATEGY.key, CLEAN_MAX_COMMITS.key)


def clean_async(options: Mapping | C.HoodieConfig | None) -> bool:
    return bool(C.CleanTriggerConfig.from_options(options).run_async)


def commits_since_last_clean(timeline: Timeline) -> int:
    """Completed commits after the last clean's lastCompletedCommitTimestamp (all of them without a clean)."""
    writes = timeline.completed_writes()
    last = last_clean_metadata(timeline.storage, timeline)
    since = last.last_completed_commit if last is not None else ""
    if last is None:
        return len(writes)
    return sum(1 for i in writes if i.time > since)


def needs_cleaning(timeline: Timeline, options: Mapping | C.HoodieConfig | None) -> bool:
    """CleanPlanActionExecutor.needsCleaning: is a clean due by the trigger strategy?"""
    trigger = C.CleanTriggerConfig.from_options(options)
    if trigger.strategy != NUM_COMMITS:   # pragma: no cover - choices refuse anything else first
        raise ConfigError(f"{CLEAN_TRIGGER_STRATEGY.key}={trigger.strategy} is not supported; use NUM_COMMITS")
    return commits_since_last_clean(timeline) >= trigger.max_commits
