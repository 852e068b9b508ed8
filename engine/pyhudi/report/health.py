"""A table's health, read from its metadata only: the timeline, the file listing and the commit write stats.

No record is read (except, given a Spark session, the record keys of a global-index table: report/damage.py).
What hudi-cli shows across `commits show`, `stats filesizes`, `compactions show` and `cleans show`, in one model
that the findings (report/findings.py), the charts and `CALL show_table_health` share.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Mapping

from pyhudi import config as C
from pyhudi.commit.retention import CleanOptions
from pyhudi.report.damage import Damage, table_damage
from pyhudi.services.clean.plan import plan_clean
from pyhudi.table import HudiTable
from pyhudi.table.listing import table_listing
from pyhudi.timeline import WRITE_ACTIONS, WriteStat, parse_instant_time


@dataclass(frozen=True)
class InstantRow:
    time: str
    action: str
    state: str                 # REQUESTED | INFLIGHT | COMPLETED


@dataclass(frozen=True)
class CommitRow:
    """One completed write's totals from its commit metadata."""
    time: str
    action: str
    operation: str
    bytes_written: int
    records_written: int       # numWrites: every record in the files written (a COW rewrite counts the whole file)
    records_changed: int       # numInserts + numUpdateWrites + numDeletes

    @property
    def write_amplification(self) -> float | None:
        """Records written per record changed: 1 for logs and new files, records per file / changed for COW."""
        return round(self.records_written / self.records_changed, 2) if self.records_changed else None


@dataclass(frozen=True)
class FileGroupRow:
    partition: str
    file_id: str
    base_size: int             # 0 when the latest slice has only log files
    log_files: int             # log files of the latest slice: written since its base (the last compaction)
    log_bytes: int


@dataclass
class TableHealth:
    path: str
    name: str
    table_type: str
    record_key: str
    settings: dict[str, int]   # the size and service thresholds the findings compare against
    instants: list[InstantRow] = field(default_factory=list)
    commits: list[CommitRow] = field(default_factory=list)
    groups: list[FileGroupRow] = field(default_factory=list)
    partition_records: dict[str, int] = field(default_factory=dict)   # records in the latest base files
    bytes_on_disk: int = 0     # every data file listed (all versions)
    bytes_latest: int = 0      # the latest file slices: what a snapshot query reads
    reclaimable_files: int = 0  # what a clean with the table's settings would delete now
    reclaimable_bytes: int = 0
    damage: Damage = field(default_factory=Damage)   # report/damage.py

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def partitions(self) -> list[str]:
        return sorted({g.partition for g in self.groups})

    def partition_bytes(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for g in self.groups:
            out[g.partition] += g.base_size + g.log_bytes
        return dict(out)

    @property
    def bytes_old_versions(self) -> int:
        return max(0, self.bytes_on_disk - self.bytes_latest)

    def pending(self) -> list[InstantRow]:
        return [i for i in self.instants if i.state != "COMPLETED"]


def _settings(options: Mapping[str, str]) -> dict[str, int]:
    cfg = C.HoodieConfig(dict(options), warn_unknown=False)
    return {"max_file_size": cfg.get(C.MAX_FILE_SIZE), "small_file_limit": cfg.get(C.SMALL_FILE_LIMIT),
            "compact_max_delta_commits": cfg.get(C.COMPACT_MAX_DELTA_COMMITS),
            "keep_max_commits": cfg.get(C.KEEP_MAX_COMMITS)}


def _commit_rows(timeline) -> tuple[list[CommitRow], dict[str, WriteStat]]:
    """Totals per completed write, and every write stat by the file path it names (for record counts)."""
    rows, stats_by_path = [], {}
    for instant in timeline.completed(WRITE_ACTIONS + ("compaction",)):
        meta = timeline.read_commit(instant)
        stats = meta.write_stats
        for s in stats:
            if s.path:
                stats_by_path[s.path] = s
        rows.append(CommitRow(
            instant.time, instant.action, str(meta.operation_type or ""),
            sum(int(s.total_write_bytes or 0) for s in stats),
            sum(int(s.num_writes or 0) for s in stats),
            sum(int(s.num_inserts or 0) + int(s.num_update_writes or 0) + int(s.num_deletes or 0)
                for s in stats)))
    return rows, stats_by_path


def _reclaimable(table: HudiTable, timeline, options: Mapping[str, str], sizes: dict[str, int]) -> tuple[int, int]:
    """Files and bytes the cleaner would delete now under the table's cleaner settings (its plan, not run)."""
    plan = plan_clean(table, timeline, CleanOptions.of(dict(options), warn_unknown=False))
    if plan is None:
        return 0, 0
    base = table.storage.uri("")
    files = [entry.file_path or "" for entries in (plan.file_paths or {}).values() for entry in entries]
    relative = [f[len(base):].lstrip("/") if f.startswith(base) else f for f in files]
    return len(files), sum(sizes.get(r, 0) for r in relative)


def table_health(path: str, options: Mapping[str, str] | None = None, spark=None) -> TableHealth:
    """The health model of the Hudi table at `path`; `options` (hoodie.*) override hoodie.properties. With a
    Spark session, a table written with a global index is also checked for keys in several partitions (a Spark
    job over the record keys); everything else is metadata."""
    table = HudiTable.load(str(path))
    timeline = table.timeline()
    props = table.properties
    merged = {**props.values, **dict(options or {})}
    health = TableHealth(str(path), table.name, props.table_type, ",".join(props.record_key_fields),
                         _settings(merged))
    health.instants = [InstantRow(i.time, i.action, i.state.name) for i in timeline.instants]
    health.commits, stats_by_path = _commit_rows(timeline)
    listing = table_listing(table.storage).files(timeline)
    sizes = {relative: size for relative, _, size in listing}
    health.bytes_on_disk = sum(sizes.values())
    records: dict[str, int] = defaultdict(int)
    view = table.view(timeline=timeline)
    for slice_ in view.latest_slices():
        base = slice_.base_file
        health.groups.append(FileGroupRow(slice_.partition_path, slice_.file_id, base.size if base else 0,
                                          len(slice_.log_files), slice_.log_size))
        health.bytes_latest += slice_.total_size
        if base is not None:
            stat = stats_by_path.get(base.path)
            records[slice_.partition_path] += int((stat.num_writes if stat else 0) or 0)
    health.partition_records = dict(records)
    health.reclaimable_files, health.reclaimable_bytes = _reclaimable(table, timeline, merged, sizes)
    health.damage = table_damage(table, timeline, view, set(sizes), dict(options or {}), spark)
    return health


def instant_moment(time: str):
    """The wall-clock moment of an instant time (for the timeline chart)."""
    return parse_instant_time(time)
