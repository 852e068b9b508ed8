"""The metadata table's table-service settings, derived from the data writer's options as Java derives its metadata
writer's config (HoodieMetadataWriteUtils.createMetadataWriteConfig): the data table's cleaner policy with 1.2x its
retention (at least 20 commits under KEEP_LATEST_COMMITS), the data table's hoodie.keep.min/max.commits + 1 for
archival, and hoodie.metadata.compact.max.delta.commits for compaction. A rollback or restore asked for by hand
(rollback_to_instant, restore_to_savepoint: no options) gets Hudi's defaults, as a Java client with a default config
does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from pyhudi import config as C
from pyhudi.commit.retention import KEEP_LATEST_BY_HOURS, KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, CleanOptions

RETAINED_COMMITS = 20   # HoodieMetadataConfig.DEFAULT_METADATA_CLEANER_COMMITS_RETAINED: the floor under 1.2x


@dataclass(frozen=True)
class MetadataTableOptions:
    compact_max_delta_commits: int = C.METADATA_COMPACT_MAX_DELTA_COMMITS.default
    cleaner_policy: str = KEEP_LATEST_COMMITS
    commits_retained: int = RETAINED_COMMITS
    file_versions_retained: int = math.ceil(C.CLEANER_FILE_VERSIONS_RETAINED.default * 1.2)
    hours_retained: int = math.ceil(C.CLEANER_HOURS_RETAINED.default * 1.2)
    keep_min_commits: int = C.KEEP_MIN_COMMITS.default + 1
    keep_max_commits: int = C.KEEP_MAX_COMMITS.default + 1

    @classmethod
    def of(cls, options: Mapping[str, Any] | C.HoodieConfig | None) -> "MetadataTableOptions":
        """From a data writer's options (None: Hudi's defaults)."""
        cfg = C.config_of(options, False)
        clean = CleanOptions.of(cfg, warn_unknown=False)
        return cls(compact_max_delta_commits=cfg.get(C.METADATA_COMPACT_MAX_DELTA_COMMITS),
                   cleaner_policy=clean.policy,
                   commits_retained=max(RETAINED_COMMITS, int(clean.commits_retained * 1.2)),
                   file_versions_retained=math.ceil(clean.file_versions_retained * 1.2),
                   hours_retained=math.ceil(clean.hours_retained * 1.2),
                   keep_min_commits=cfg.get(C.KEEP_MIN_COMMITS) + 1, keep_max_commits=cfg.get(C.KEEP_MAX_COMMITS) + 1)

    def clean_options(self) -> CleanOptions:
        """The metadata table's cleaner settings as the cleaner's own type (the archival bounds it checks against
        are placeholders: the metadata table archives by keep_min/max_commits)."""
        retained = max(self.commits_retained, 1)
        return CleanOptions.of({C.CLEANER_POLICY.key: self.cleaner_policy,
                                C.CLEANER_COMMITS_RETAINED.key: str(self.commits_retained),
                                C.CLEANER_FILE_VERSIONS_RETAINED.key: str(self.file_versions_retained),
                                C.CLEANER_HOURS_RETAINED.key: str(self.hours_retained),
                                C.KEEP_MIN_COMMITS.key: str(retained + 1), C.KEEP_MAX_COMMITS.key: str(retained + 2)},
                               warn_unknown=False)


DEFAULT_OPTIONS = MetadataTableOptions()
__all__ = ["DEFAULT_OPTIONS", "KEEP_LATEST_BY_HOURS", "KEEP_LATEST_FILE_VERSIONS", "MetadataTableOptions"]
