"""The Hudi timeline: instants as files in `.hoodie/` (table versions 5 and 6, timeline layout 1) or
`.hoodie/timeline/` (table versions 8 and 9, layout 2).

An instant is (time, action, state). Its file name is `<time>.<action>[.<state suffix>]`, with one historical
quirk: `commit` and `deltacommit` inflight files for `commit` are named `<time>.inflight`. A write moves its
instant requested -> inflight -> completed; the completed file is published last and atomically, which is what
makes a commit visible to readers.

One module per concern: instant (names, states, layout-1 file names), layout (where a layout keeps instants and
how it names them), instant_time (new and parsed instant times, the
timeline zone), commit_metadata (the commit JSON and its process cache), active (the Timeline snapshot) and
transitions (the writer's state changes). The table services' instant files as typed values, each the one owner of
its Avro field names: clean_plan, clean_metadata, rollback, restore, savepoint_metadata, compaction_plan,
clustering_plan (on avro_record: the schemas and the AvroRecord base). Import from `pyhudi.timeline`; the names
below are its API (the typed service records from their modules).
"""

from __future__ import annotations

from pyhudi.timeline.instant import (ACTIONS, ARCHIVED_FOLDER, CLEAN, CLUSTERING, COMMIT, COMPACTION, DELTA_COMMIT, INDEXING,
                                     LOG_COMPACTION, METAFOLDER, REPLACE_COMMIT, RESTORE, ROLLBACK, SAVEPOINT,
                                     SCHEMA_COMMIT, TEMP_FOLDER, WRITE_ACTIONS, Instant, State,
                                     parse_instant_file_name)
from pyhudi.timeline.instant_time import (LOCAL_ZONE, TIMELINE_TIMEZONE, TIMELINE_ZONES, UTC_ZONE, ZonedInstantTime,
                                          check_timeline_zone, format_instant_time, instant_time_before,
                                          instant_time_of_clock,
                                          new_instant_time, normalize_instant_argument, now_in_zone,
                                          parse_instant_time)
from pyhudi.timeline.layout import COMPLETES_AS, LAYOUT_1, TimelineLayout, layout_for
from pyhudi.timeline.commit_metadata import (METADATA_CACHE, CommitMetadata, commit_metadata_bytes, parse_commit,
                                             parse_commit_metadata)
from pyhudi.timeline.write_stat import WriteStat
from pyhudi.timeline.active import PROPERTIES_FILE, Timeline, has_archived_instants, instant_file, timeline_layout
from pyhudi.timeline.transitions import (commit_content, complete_instant, create_requested, transition_to_completed,
                                        transition_to_inflight)

__all__ = ["ACTIONS", "ARCHIVED_FOLDER", "CLEAN", "CLUSTERING", "COMMIT", "COMPACTION", "DELTA_COMMIT", "INDEXING", "LOG_COMPACTION",
           "METAFOLDER", "REPLACE_COMMIT", "RESTORE", "ROLLBACK", "SAVEPOINT", "SCHEMA_COMMIT", "TEMP_FOLDER",
           "WRITE_ACTIONS", "Instant", "State", "parse_instant_file_name", "LOCAL_ZONE", "TIMELINE_TIMEZONE",
           "TIMELINE_ZONES", "UTC_ZONE", "ZonedInstantTime", "check_timeline_zone", "format_instant_time",
           "instant_time_before", "instant_time_of_clock", "new_instant_time", "normalize_instant_argument", "now_in_zone",
           "parse_instant_time", "METADATA_CACHE", "commit_metadata_bytes", "parse_commit_metadata", "parse_commit", "CommitMetadata", "WriteStat",
           "PROPERTIES_FILE", "Timeline", "has_archived_instants", "create_requested",
           "transition_to_completed", "transition_to_inflight", "COMPLETES_AS", "LAYOUT_1", "TimelineLayout", "layout_for",
           "timeline_layout", "instant_file", "commit_content", "complete_instant"]
