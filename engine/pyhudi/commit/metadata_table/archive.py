"""Archiving the metadata table's own timeline into its LSM history, as Java's metadata writer does after its
table services (HoodieTimelineArchiver on the metadata table): without it every data commit would leave three more
instant files in `.hoodie/metadata/.hoodie/timeline` for good, and every sync lists them all.

Java's rules for the metadata table: it keeps keep_min..keep_max_commits completed commits (the data table's
hoodie.keep.min/max.commits + 1, options.py; cleans likewise, counted apart), and never archives an instant at or
after the earliest commit or pending instant on the data table's active timeline (its reader checks delta commits
against the data timeline: HoodieTableMetadataUtil#processRollbackMetadata), the first pending metadata instant,
the delta commits since the last metadata compaction (which the compaction counts), or the commits the last
metadata clean retains. The files of archived slices stay readable: files_slice.py counts a metadata instant older
than the active timeline as completed.
"""

from __future__ import annotations

from pyhudi.commit.history_archive import move_to_history
from pyhudi.commit.metadata_table.options import MetadataTableOptions
from pyhudi.commit.timeline_metadata import last_clean_metadata
from pyhudi.storage import Storage
from pyhudi.timeline import CLEAN, CLUSTERING, COMMIT, DELTA_COMMIT, WRITE_ACTIONS, Instant, Timeline


def archive_if_due(mdt: Storage, mdt_timeline: Timeline, data_timeline: Timeline,
                   options: MetadataTableOptions) -> list[Instant]:
    """Archive what is due on the metadata timeline; returns the archived instants."""
    selected = instants_to_archive(mdt, mdt_timeline, data_timeline, options)
    if selected:
        move_to_history(mdt, mdt_timeline.layout, selected)
    return selected


def instants_to_archive(mdt: Storage, mdt_timeline: Timeline, data_timeline: Timeline,
                        options: MetadataTableOptions) -> list[Instant]:
    selected: list[Instant] = []
    keep_min, keep_max = options.keep_min_commits, options.keep_max_commits
    cleans = mdt_timeline.completed([CLEAN])
    if len(cleans) > keep_max:
        selected += cleans[:len(cleans) - keep_min]
    commits = mdt_timeline.completed([COMMIT, DELTA_COMMIT])
    if len(commits) > keep_max:
        bound = min(_bounds(mdt, mdt_timeline, data_timeline, commits), default=None)
        eligible = [i for i in commits if bound is None or i.time < bound]
        selected += eligible[:len(commits) - keep_min]
    return sorted(selected)


def _bounds(mdt: Storage, mdt_timeline: Timeline, data_timeline: Timeline, commits: list[Instant]) -> list[str]:
    """Instant times the archived metadata commits must be strictly older than (the module docstring's rules)."""
    data_commits = [i.time for i in data_timeline.instants if i.action in WRITE_ACTIONS + (CLUSTERING,)]
    bounds = data_commits[:1] + [i.time for i in data_timeline.pending()][:1]
    bounds += [i.time for i in mdt_timeline.pending()][:1]
    compactions = [i.time for i in commits if i.action == COMMIT]
    since = [i.time for i in commits if i.action == DELTA_COMMIT and (not compactions or i.time > compactions[-1])]
    bounds += since[:1]
    last_clean = last_clean_metadata(mdt, mdt_timeline)
    retained = last_clean.earliest_commit_to_retain if last_clean is not None else None
    if retained:
        bounds.append(retained)
    return bounds
