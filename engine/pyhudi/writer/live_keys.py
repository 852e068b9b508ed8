"""Which stored keys a merge-on-read file group still holds, for the index.

The BLOOM and SIMPLE indexes look keys up in base files. In a merge-on-read file group a key deleted since its
base file was written (a delete block in a log file) is still in the base file. Once the key lives in another
file group - re-inserted by an `insert` (which skips the index), or moved by a global index's partition update -
the base-file lookup finds it in both, and an upsert would write it into both: the table would then hold the key
twice. So for the file groups whose latest slice has deletes in its logs, the keys a lookup finds there are kept
only if the slice, merged as a reader merges it, still holds them.

Which slices need that (metadata on the driver): those with a log file that a visible commit wrote deletes to
(its write stat's numDeletes), and, as a precaution, those with a log file archived commits may have written
(the stats are gone): a slice older than the active timeline whose log file was not created (a write stat at
log offset 0) by a visible commit on it. A log file created on the active timeline was appended to only by later
commits, whose stats are there too. The check itself runs in executors on those slices only
(reader/file_slice_reader.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from pyhudi.reader.file_slice_reader import CHANGE_EMIT, CHANGE_KEY, slice_changes
from pyhudi.reader.plan import table_schema
from pyhudi.schema.meta_fields import PARTITION_PATH, RECORD_KEY
from pyhudi.storage import Storage


@dataclass
class LiveKeyCheck:
    """Shipped to executors: the slices whose base-file keys may be deleted, and how to merge them."""

    storage: Storage
    slices: dict                      # (partition, file id) -> FileSlice (base file and log files)
    schema: pa.Schema
    visible_instants: frozenset
    committed_before: str | None
    ordering_field: str | None
    payload_class: str

    def live(self, partition: str, file_id: str, keys: pa.Array) -> pa.Array:
        """Of `keys` found in the file group's base file, those its latest slice still holds."""
        file_slice = self.slices.get((partition, file_id))
        if file_slice is None or not len(keys):
            return keys
        changes = slice_changes(self.storage, file_slice, self.schema, visible_instants=self.visible_instants,
                                ordering_field=self.ordering_field, payload_class=self.payload_class,
                                committed_before=self.committed_before)
        emitted = changes[CHANGE_EMIT].combine_chunks()
        dropped = changes[CHANGE_KEY].filter(pc.invert(emitted))
        dead = pc.unique(dropped.combine_chunks()) if len(dropped) else None
        if dead is None or not len(dead):
            return keys
        kept_by_log = changes[CHANGE_KEY].filter(emitted).combine_chunks()
        if len(kept_by_log):
            dead = dead.filter(pc.invert(pc.is_in(dead, value_set=kept_by_log)))
        return keys.filter(pc.invert(pc.is_in(keys, value_set=dead)))


def live_key_check(table, view, partitions=None) -> LiveKeyCheck | None:
    """The check for the latest slices (of `partitions`, default all) whose logs may delete base-file keys;
    None when there are none (the usual case: nothing changes for the write)."""
    slices = [s for s in view.merged_latest_slices(partitions) if s.base_file is not None and s.log_files]
    if not slices:
        return None
    by_log = {log.path: s for s in slices for log in s.log_files}
    flagged = {}
    created = set()    # log files a visible commit on the active timeline created (wrote at offset 0)
    first = min(s.base_instant for s in slices)
    timeline = view.timeline
    for instant in timeline.completed_writes():
        if instant.time < first or instant.time not in view.visible_instants:
            continue
        for stat in timeline.read_commit(instant).write_stats:
            file_slice = by_log.get(stat.path)
            if file_slice is None:
                continue
            if stat.log_offset == 0:
                created.add(stat.path)
            if int(stat.num_deletes or 0) > 0:
                flagged[(file_slice.partition_path, file_slice.file_id)] = file_slice
    for s in slices:
        if view.before_timeline_start(s.base_instant) and any(log.path not in created for log in s.log_files):
            flagged[(s.partition_path, s.file_id)] = s
    if not flagged:
        return None
    props = table.properties
    return LiveKeyCheck(table.storage, flagged, table_schema(table, timeline), frozenset(view.visible_instants),
                        view.timeline_start, props.precombine_field, props.payload_class)


def drop_dead_locations(locations: DataFrame, check: LiveKeyCheck | None, file_id_col: str) -> DataFrame:
    """`locations` (key, partition, file id) without the keys a flagged slice no longer holds: a pass over the
    locations grouped by file group, only when some slice is flagged."""
    if check is None:
        return locations

    def live(table: pa.Table) -> pa.Table:
        keys = check.live(table[PARTITION_PATH][0].as_py(), table[file_id_col][0].as_py(),
                          table[RECORD_KEY].combine_chunks())
        return table if len(keys) == table.num_rows else table.filter(pc.is_in(table[RECORD_KEY], value_set=keys))

    return locations.groupBy(PARTITION_PATH, file_id_col).applyInArrow(live, locations.schema)
