"""Clean config: when the cleaner runs, what it retains, and what happens to failed writes
(Hudi's HoodieCleanConfig)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pyhudi.config.core import NON_NEGATIVE, POSITIVE, bool_value, declare, upper
from pyhudi.config.resolve import HoodieConfig, config_of, read_settings, setting

CLEAN_AUTOMATIC = declare("hoodie.clean.automatic", True, bool_value)
CLEANER_POLICY = declare("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS", upper,
                         ("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"))
CLEANER_COMMITS_RETAINED = declare("hoodie.cleaner.commits.retained", 10, NON_NEGATIVE)
CLEANER_FILE_VERSIONS_RETAINED = declare("hoodie.cleaner.fileversions.retained", 3, POSITIVE,
                                         doc="0 would delete the latest version of every file group.")
CLEANER_HOURS_RETAINED = declare("hoodie.cleaner.hours.retained", 24, NON_NEGATIVE)
CLEANER_INCREMENTAL_MODE = declare("hoodie.cleaner.incremental.mode", True, bool_value)
CLEAN_ASYNC = declare("hoodie.clean.async", False, bool_value,
                      doc="Run the automatic clean beside the write (started before it, joined after it).")
CLEAN_TRIGGER_STRATEGY = declare("hoodie.clean.trigger.strategy", "NUM_COMMITS", upper, ("NUM_COMMITS",))
CLEAN_MAX_COMMITS = declare("hoodie.clean.max.commits", 1, NON_NEGATIVE,
                            doc="Commits after the last clean before a new clean is scheduled (0: whenever due).")
FAILED_WRITES_POLICY = declare("hoodie.cleaner.policy.failed.writes", "EAGER", upper, ("EAGER", "LAZY", "NEVER"),
                               doc="EAGER: the next writer rolls back failed writes; LAZY (forced by OCC): only "
                                   "those whose heartbeat expired.")


@dataclass(frozen=True)
class CleanConfig:
    """The cleaner's options, parsed once (the retention policy the archiver also honours)."""

    policy: str = setting(CLEANER_POLICY)
    commits_retained: int = setting(CLEANER_COMMITS_RETAINED)
    file_versions_retained: int = setting(CLEANER_FILE_VERSIONS_RETAINED)
    hours_retained: int = setting(CLEANER_HOURS_RETAINED)
    automatic: bool = setting(CLEAN_AUTOMATIC)
    incremental: bool = setting(CLEANER_INCREMENTAL_MODE)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | HoodieConfig | None, warn_unknown: bool = True) -> CleanConfig:
        return read_settings(cls, config_of(options, warn_unknown))


@dataclass(frozen=True)
class CleanTriggerConfig:
    """When the writer's clean runs (CleanPlanActionExecutor.needsCleaning) and whether beside the write."""

    run_async: bool = setting(CLEAN_ASYNC)
    strategy: str = setting(CLEAN_TRIGGER_STRATEGY)
    max_commits: int = setting(CLEAN_MAX_COMMITS)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | HoodieConfig | None) -> CleanTriggerConfig:
        return read_settings(cls, options)
