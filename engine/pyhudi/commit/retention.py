"""The cleaner's retention policy (``hoodie.cleaner.*``): which commits a query may still need. Shared by the
cleaner, which deletes file slices older than the earliest commit to retain, and the archiver, which must keep the
commits the cleaner retains (Hudi's archiver reads the cleaner's config the same way)."""

from __future__ import annotations

from datetime import datetime
from typing import Mapping

from pyhudi import config as C
from pyhudi.timeline import COMPACTION, LOG_COMPACTION, WRITE_ACTIONS, Instant, Timeline, instant_time_before

KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
# The timeline of "commits" the cleaner counts and the pending instants that bound it
# (HoodieActiveTimeline.getCommitsAndCompactionTimeline).
COMMITS_AND_COMPACTION = WRITE_ACTIONS + (COMPACTION, LOG_COMPACTION)


# --- options ------------------------------------------------------------------------------------------------
class CleanOptions(C.CleanConfig):
    """The cleaner's typed config (config.clean.CleanConfig: its parsers refuse out-of-range retention counts)."""

    @classmethod
    def of(cls, options: Mapping | C.HoodieConfig | None, warn_unknown: bool = True) -> "CleanOptions":
        return cls.from_options(options, warn_unknown)


def earliest_commit_to_retain(timeline: Timeline, opts: CleanOptions, now: datetime | None = None) -> Instant | None:
    """CleanerUtils.getEarliestCommitToRetain: None when the policy keeps everything (or counts versions)."""
    completed = [i for i in timeline.completed_writes()]
    if opts.policy == KEEP_LATEST_COMMITS:
        if len(completed) <= opts.commits_retained:
            return None
        nth = completed[len(completed) - opts.commits_retained] if opts.commits_retained else None
        pending = timeline.pending(COMMITS_AND_COMPACTION)
        if pending:
            if nth is not None and nth.time <= pending[0].time:
                return nth
            before = [i for i in completed if i.time < pending[0].time]
            return before[-1] if before else None
        return nth if nth is not None else None
    if opts.policy == KEEP_LATEST_BY_HOURS:
        floor = instant_time_before(opts.hours_retained, timeline.zone, now)   # in the table's timeline zone
        return next((i for i in completed if i.time >= floor), None)
    return None
