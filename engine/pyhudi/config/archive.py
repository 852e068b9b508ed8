"""Archive config: how many completed commits the active timeline keeps (Hudi's HoodieArchivalConfig), and Hudi's
rule tying them to the cleaner's retention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pyhudi.config.clean import CLEANER_COMMITS_RETAINED
from pyhudi.config.core import POSITIVE, bool_value, declare, validator
from pyhudi.config.resolve import HoodieConfig, config_of, read_settings, setting
from pyhudi.errors import ConfigError

ARCHIVE_AUTOMATIC = declare("hoodie.archive.automatic", True, bool_value)
KEEP_MIN_COMMITS = declare("hoodie.keep.min.commits", 20, POSITIVE)
KEEP_MAX_COMMITS = declare("hoodie.keep.max.commits", 30, POSITIVE)
TIMELINE_COMPACTION_BATCH_SIZE = declare("hoodie.timeline.compaction.batch.size", 10, POSITIVE, doc=
                                         "Hudi 1.x tables: how many files of one layer of the LSM timeline history "
                                         "are merged into one file of the next layer.")


@validator(KEEP_MIN_COMMITS, KEEP_MAX_COMMITS, CLEANER_COMMITS_RETAINED)
def check_archival_options(cfg: HoodieConfig) -> None:
    """Hudi's rules (HoodieWriteConfig): max > min, and min > hoodie.cleaner.commits.retained (else archiving
    would drop commits the cleaner still retains, and incremental pulls would miss data)."""
    low, high = cfg.get(KEEP_MIN_COMMITS), cfg.get(KEEP_MAX_COMMITS)
    retained = cfg.get(CLEANER_COMMITS_RETAINED)
    if high <= low:
        raise ConfigError(f"Increase {KEEP_MAX_COMMITS.key}={high} to be greater than {KEEP_MIN_COMMITS.key}="
                          f"{low} (defaults 30 and 20).")
    if low <= retained:
        raise ConfigError(f"Increase {KEEP_MIN_COMMITS.key}={low} to be greater than "
                          f"{CLEANER_COMMITS_RETAINED.key}={retained}, or lower {CLEANER_COMMITS_RETAINED.key}. "
                          "Otherwise, there is risk of incremental pull missing data from few instants.")


@dataclass(frozen=True)
class ArchiveConfig:
    """The archiver's options, parsed once and checked against the cleaner's retention."""

    automatic: bool = setting(ARCHIVE_AUTOMATIC)
    keep_min_commits: int = setting(KEEP_MIN_COMMITS)
    keep_max_commits: int = setting(KEEP_MAX_COMMITS)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | HoodieConfig | None,
                     warn_unknown: bool = False) -> ArchiveConfig:
        cfg = config_of(options, warn_unknown)
        check_archival_options(cfg)
        return read_settings(cls, cfg)
