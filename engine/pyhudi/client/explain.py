"""pyhudi.explain_write: what a write would do, without doing it (a dry run).

The explain runs the real write action (writer/write_action.py: keying, index lookup, small-file packing, the
merge and the file encoding, in the same Spark jobs) on a DryRunStorage (client/dry_run.py), whose filesystem
reads the table and discards every byte written. No transaction is begun, so there is no instant on the timeline,
no lock, no heartbeat, no marker and no file. The driver gets what a write gets: one stat row per file group and
the index counters. So its index figures are the write's own, not a model of them.

    validate options (as pyhudi.write) -> WriteAction on the dry storage -> prepare -> write(would-be instant)
    -> WritePlan: one row per file group the write would touch, the index stats and the totals
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from pyspark.sql import DataFrame

from pyhudi import config as C
from pyhudi import errors
from pyhudi.client.dry_run import DryRunStorage
from pyhudi.client.write import WriteResult
from pyhudi.keygen import build_key_generator
from pyhudi.services.clean import trigger as clean_trigger
from pyhudi.table import HudiTable
from pyhudi.timeline import WriteStat
from pyhudi.writer.options import (check_fields, check_identity, data_columns, drop_meta_columns,
                                   resolve_write_options, target_schema)
from pyhudi.writer.write_action import WriteAction

EXPLAINED_OPERATIONS = ("upsert", "insert", "bulk_insert", "delete")

# what happens to a file group: its base file rewritten (copy-on-write, or inserts into a small file), a log file
# appended (merge-on-read updates and deletes), or a new file group created
REWRITE, APPEND_LOG, CREATE = "rewrite", "append_log", "create"


@dataclass(frozen=True)
class FileGroupPlan:
    partition_path: str
    file_id: str
    action: str                  # REWRITE, APPEND_LOG or CREATE
    num_inserts: int
    num_updates: int
    num_deletes: int
    num_writes: int              # records in the file written (a rewrite copies the unchanged ones too)
    existing_bytes: int          # the latest base file a rewrite replaces (0 otherwise)
    bytes_written: int           # the size the new base or log file would have (encoded exactly as a write would)

    @property
    def into_small_file(self) -> bool:
        return self.action == REWRITE and self.num_inserts > 0


@dataclass
class WritePlan:
    """The explained write: `file_groups` (one FileGroupPlan each), `index_stats` (as WriteResult.index_stats)
    and totals; `str()` prints a short report, `as_dict()` gives everything as plain values."""

    path: str
    table_name: str
    table_type: str
    operation: str
    index_type: str
    file_groups: list[FileGroupPlan] = field(default_factory=list)
    index_stats: dict = field(default_factory=dict)
    write_stats: list[dict] = field(default_factory=list)   # the stats the write would commit (dry file paths)

    @property
    def partitions(self) -> list[str]:
        return sorted({g.partition_path for g in self.file_groups})

    def _sum(self, attr: str, action: str | None = None) -> int:
        return sum(getattr(g, attr) for g in self.file_groups if action is None or g.action == action)

    @property
    def summary(self) -> dict:
        groups = self.file_groups
        return {
            "partitions_touched": len(self.partitions),
            "file_groups_touched": len(groups),
            "existing_file_groups_touched": sum(1 for g in groups if g.action != CREATE),
            "new_file_groups": sum(1 for g in groups if g.action == CREATE),
            "small_files_filled": sum(1 for g in groups if g.into_small_file),
            "inserts": self._sum("num_inserts"),
            "updates": self._sum("num_updates"),
            "deletes": self._sum("num_deletes"),
            "inserts_into_small_files": sum(g.num_inserts for g in groups if g.into_small_file),
            "inserts_into_new_file_groups": self._sum("num_inserts", CREATE),
            "records_written": self._sum("num_writes"),
            "bytes_to_rewrite": self._sum("existing_bytes", REWRITE),
            "bytes_rewritten": self._sum("bytes_written", REWRITE),
            "bytes_appended_to_logs": self._sum("bytes_written", APPEND_LOG),
            "bytes_in_new_files": self._sum("bytes_written", CREATE),
            "bytes_written": self._sum("bytes_written"),
            "write_amplification": self.write_amplification,
        }

    @property
    def write_amplification(self) -> float | None:
        """As WriteResult.write_amplification: bytes written / bytes of the records that change."""
        return WriteResult("", self.operation, self.write_stats).write_amplification

    def as_dict(self) -> dict:
        return {"path": self.path, "table_name": self.table_name, "table_type": self.table_type,
                "operation": self.operation, "index_type": self.index_type, "partitions": self.partitions,
                "file_groups": [{**g.__dict__, "into_small_file": g.into_small_file} for g in self.file_groups],
                "index_stats": dict(self.index_stats), "summary": self.summary}

    def __str__(self) -> str:
        s, ix = self.summary, self.index_stats
        lines = [f"Write plan (dry run, nothing written): {self.operation} into {self.table_name} "
                 f"({self.table_type}, index {self.index_type}) at {self.path}",
                 f"  index: {ix.get('keys_looked_up', 0)} keys looked up; {ix.get('files_considered', 0)} files "
                 f"considered, {ix.get('files_pruned_by_range', 0)} pruned by key range, "
                 f"{ix.get('files_pruned_by_bloom', 0)} by bloom filter, {ix.get('candidate_files', 0)} candidates "
                 f"read, {ix.get('confirmed_files', 0)} hold incoming keys" if ix else
                 f"  index: not used ({self.operation} writes new file groups without a lookup)",
                 f"  records: {s['updates']} updates, {s['deletes']} deletes, {s['inserts']} inserts "
                 f"({s['inserts_into_small_files']} into {s['small_files_filled']} small files, "
                 f"{s['inserts_into_new_file_groups']} into {s['new_file_groups']} new file groups)",
                 f"  bytes: {s['bytes_to_rewrite']} of base files rewritten as {s['bytes_rewritten']}, "
                 f"{s['bytes_appended_to_logs']} appended to logs, {s['bytes_in_new_files']} in new files; "
                 f"write amplification {s['write_amplification']}"]
        header = ("partition", "file_id", "action", "inserts", "updates", "deletes", "existing_bytes",
                  "bytes_written")
        rows = [(g.partition_path or "(none)", g.file_id, g.action, g.num_inserts, g.num_updates, g.num_deletes,
                 g.existing_bytes, g.bytes_written) for g in self.file_groups]
        widths = [max(len(str(v)) for v in column) for column in zip(header, *rows)]
        for row in [header, tuple("-" * w for w in widths)] + rows:
            lines.append("  " + "  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
        return "\n".join(lines)


def explain_write(df: DataFrame, path: str, options: dict | None = None) -> WritePlan:
    """What pyhudi.write(df, path, options) would do to the existing table at `path`, without writing: the
    partitions and file groups it touches, what the index reads and prunes, the bytes rewritten or appended.
    It runs the write's Spark jobs (they read the table); only metadata reaches the driver."""
    path = str(path)
    options = {k: v for k, v in C.normalize_options(options or {}).items() if k not in clean_trigger.CLEAN_TRIGGER_KEYS}
    operation = C.WriteConfig.from_options(C.HoodieConfig(options)).operation
    if operation not in EXPLAINED_OPERATIONS:
        raise errors.ConfigError(f"explain_write explains {', '.join(EXPLAINED_OPERATIONS)} writes; "
                                 f"{C.OPERATION.key}={operation} is not one of them (table at {path})")
    if not HudiTable.exists(path):
        raise errors.NotAHudiTableError(f"explain_write: there is no Hudi table at {path}; check the path (a first "
                                        "write creates the table: pyhudi.write; all of its records are inserts)")
    table = HudiTable.load(DryRunStorage(path))
    config = C.HoodieConfig({**table.properties.write_options(), **check_identity(table, path, options)})
    incoming = drop_meta_columns(df)
    wc = resolve_write_options(config, incoming, table)
    name = wc.table_name or table.name
    keygen = build_key_generator(dict(wc.options), name)
    data = data_columns(incoming, operation, name)
    check_fields(data, keygen, wc)
    action = WriteAction(df.sparkSession, table, wc, keygen, incoming, target_schema(data, table, name, operation))
    try:
        action.prepare()
        timeline = table.timeline()
        metadata = action.write(timeline.new_instant_time(), timeline)   # the instant is never created
    finally:
        action.release()
    return _plan(table, path, name, operation, action.index.type, metadata.write_stats, action.index_stats_dict())


def _plan(table: HudiTable, path: str, name: str, operation: str, index_type: str, stats: Sequence[WriteStat],
          index_stats: dict) -> WritePlan:
    """One FileGroupPlan per file group (a group whose log output rolls over past hoodie.logfile.max.size has a
    write stat per log file), with the size of the base file a rewrite replaces (from the view). A new group is
    CREATE whether it starts with a base file or, under MOR + BUCKET, with a log file."""
    view = table.view()
    base_sizes = {(s.partition_path, s.file_id): s.base_file.size for s in view.latest_slices(None)
                  if s.base_file is not None}
    by_group: dict[tuple, list[WriteStat]] = {}
    for s in sorted(stats, key=lambda s: (s.partition_path, s.prev_commit == "null", s.file_id)):
        by_group.setdefault((s.partition_path, s.file_id), []).append(s)
    groups = []
    for key, group in by_group.items():
        first = group[0]
        action = CREATE if first.prev_commit == "null" else APPEND_LOG if first.is_log_file else REWRITE
        groups.append(FileGroupPlan(key[0], key[1], action, sum(s.num_inserts or 0 for s in group),
                                    sum(s.num_update_writes or 0 for s in group),
                                    sum(s.num_deletes or 0 for s in group), sum(s.num_writes or 0 for s in group),
                                    base_sizes.get(key, 0) if action == REWRITE else 0,
                                    sum(s.total_write_bytes or 0 for s in group)))
    return WritePlan(path, name, table.properties.table_type, operation, index_type, groups, index_stats,
                     [s.to_json() for s in stats])
