"""Timeline layouts: where a table's instants live and how their files are named.

Layout 1 (table versions 5 and 6): `.hoodie/<time>.<action>[.requested|.inflight]`, an inflight `commit` named
`<time>.inflight`, commit metadata as JSON.

Layout 2 (table versions 8 and 9, Hudi 1.x; Hudi's InstantFileNameGeneratorV2): `.hoodie/<hoodie.timeline.path>/`,
a completed instant named `<requested>_<completion>.<action>` (an instant upgraded from layout 1 keeps its old name,
`<time>.<action>`: a legacy instant without a completion time), pending ones named as in layout 1, metadata and plans
as Avro container files. A clustering is its own action (`<time>.clustering.requested|inflight`) until it completes
as a `replacecommit`; a compaction completes as a `commit`, a log compaction as a `deltacommit`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyhudi.timeline.instant import (ACTIONS, CLUSTERING, COMMIT, COMPACTION, DELTA_COMMIT, LOG_COMPACTION,
                                     METAFOLDER, REPLACE_COMMIT, Instant, State, parse_instant_file_name)

# The action a table service's instant completes as.
COMPLETES_AS = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT, CLUSTERING: REPLACE_COMMIT}


@dataclass(frozen=True)
class TimelineLayout:
    version: int                 # hoodie.timeline.layout.version: 1 or 2
    folder: str                  # the active timeline's folder, relative to the table
    history_folder: str          # the archived timeline's folder, relative to the table

    def file_name(self, instant: Instant) -> str:
        if self.version == 1 or not instant.is_completed:
            return instant.file_name
        action = COMPLETES_AS.get(instant.action, instant.action)
        time_part = f"{instant.time}_{instant.completion_time}" if instant.completion_time else instant.time
        return f"{time_part}.{action}"

    def path(self, instant: Instant) -> str:
        """The instant's file, relative to the table."""
        return f"{self.folder}/{self.file_name(instant)}"

    def parse(self, name: str) -> Instant | None:
        """The instant a file of this layout's timeline folder names, or None for any other file."""
        if self.version == 1:
            return parse_instant_file_name(name)
        time_part, _, rest = name.partition(".")
        requested, _, completion = time_part.partition("_")
        if not requested.isdigit() or (completion and not completion.isdigit()):
            return None
        if completion:
            if rest not in ACTIONS:
                return None
            return Instant(requested, rest, State.COMPLETED, completion)
        return parse_instant_file_name(name)


def layout_for(version: str | None, timeline_path: str | None, history_path: str | None) -> TimelineLayout:
    """The layout hoodie.properties describes (hoodie.timeline.layout.version, .path, .history.path)."""
    if (version or "1").strip() == "2":
        folder = f"{METAFOLDER}/{(timeline_path or 'timeline').strip()}"
        return TimelineLayout(2, folder, f"{folder}/{(history_path or 'history').strip()}")
    return LAYOUT_1


LAYOUT_1 = TimelineLayout(1, METAFOLDER, f"{METAFOLDER}/archived")
