"""Findings: what a table's health model says needs doing, each with the fix in Hudi's words (the procedure or
setting to use). Thresholds are the table's own settings (hoodie.parquet.small.file.limit,
hoodie.compact.inline.max.delta.commits, hoodie.keep.max.commits), so a finding means what the writer would do."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from pyhudi.report.health import TableHealth

SKEW_FACTOR = 10              # a partition this many times the median size is skewed


@dataclass(frozen=True)
class Finding:
    severity: str             # error (the table is damaged) | warn | info
    what: str
    fix: str


def _mib(n: int) -> str:
    return f"{n / 1048576:.1f} MiB"


def _compaction(h: TableHealth, table: str) -> list[Finding]:
    due = h.settings["compact_max_delta_commits"]
    backlog = [g for g in h.groups if g.log_files >= due]
    if not h.is_mor or not backlog:
        return []
    return [Finding("warn", f"compaction is due: {len(backlog)} file group(s) have {due}+ log files "
                            f"({_mib(sum(g.log_bytes for g in backlog))} of logs a snapshot query merges)",
                    f"CALL run_compaction(op => 'scheduleAndExecute', table => '{table}'), or set "
                    "hoodie.compact.inline=true")]


def _small_files(h: TableHealth, table: str) -> list[Finding]:
    limit = h.settings["small_file_limit"]
    per_partition: dict[str, int] = {}
    for g in h.groups:
        if 0 < g.base_size < limit:
            per_partition[g.partition] = per_partition.get(g.partition, 0) + 1
    crowded = {p: n for p, n in per_partition.items() if n > 1}
    if not crowded:
        return []
    return [Finding("info", f"{sum(crowded.values())} small base files (< hoodie.parquet.small.file.limit = "
                            f"{_mib(limit)}) share {len(crowded)} partition(s) with other small files",
                    f"CALL run_clustering(table => '{table}') merges them into files of up to "
                    "hoodie.clustering.plan.strategy.target.file.max.bytes")]


def _clean(h: TableHealth, table: str) -> list[Finding]:
    if not h.reclaimable_files:
        return []
    return [Finding("warn", f"the cleaner would reclaim {_mib(h.reclaimable_bytes)} in {h.reclaimable_files} "
                            "file(s) of old versions now", f"CALL run_clean(table => '{table}')")]


def _pending(h: TableHealth, table: str) -> list[Finding]:
    out = []
    for i in h.pending():
        if i.action == "compaction":
            fix = f"CALL run_compaction(op => 'run', table => '{table}', timestamp => {i.time})"
        elif i.action == "replacecommit" and i.state == "REQUESTED":
            fix = f"CALL run_clustering(table => '{table}') runs the pending clustering plan"
        else:
            fix = ("the next write rolls it back (hoodie.cleaner.policy.failed.writes=EAGER), or CALL "
                   f"rollback_to_instant(table => '{table}', instant_time => '{i.time}')")
        out.append(Finding("warn", f"{i.action} {i.time} is {i.state.lower()}", fix))
    return out


def _archive(h: TableHealth, table: str) -> list[Finding]:
    active = sum(1 for i in h.instants if i.state == "COMPLETED")
    limit = h.settings["keep_max_commits"]
    if active <= limit:
        return []
    return [Finding("info", f"the active timeline holds {active} completed instants (> hoodie.keep.max.commits = "
                            f"{limit})", f"CALL archive_commits(table => '{table}')")]


def _skew(h: TableHealth, table: str) -> list[Finding]:
    sizes = h.partition_bytes()
    if len(sizes) < 3:
        return []
    median = statistics.median(sizes.values())
    skewed = sorted((p for p, n in sizes.items() if median and n > SKEW_FACTOR * median), key=sizes.get,
                    reverse=True)
    if not skewed:
        return []
    return [Finding("info", f"partition skew: {', '.join(repr(p) for p in skewed[:5])} hold more than "
                            f"{SKEW_FACTOR}x the median partition ({_mib(int(median))})",
                    "choose a partition column with more even values, or a BUCKET index "
                    "(hoodie.index.type=BUCKET) to spread writes within a partition")]


def _damage(h: TableHealth, table: str) -> list[Finding]:
    """report/damage.py: what earlier writers broke, and how to recover without losing more."""
    d, out = h.damage, []
    if d.hidden_writes:
        kept = [w for w in d.hidden_writes if w.on_storage]
        gone = len(d.hidden_writes) - len(kept)
        first = kept[0] if kept else d.hidden_writes[0]
        out.append(Finding(
            "error", f"{len(d.hidden_writes)} base file(s) are hidden by their own replacecommit (e.g. {first.path} "
                     f"of {first.instant}, {sum(w.records for w in d.hidden_writes)} records): readers drop the rows "
                     f"those commits wrote" + (f"; {gone} of the files were already cleaned" if gone else ""),
            "before any clean runs (set hoodie.clean.automatic=false, do not CALL run_clean), read each file with "
            "spark.read.parquet(<table path>/<file>), drop its _hoodie_* columns and write the rows back with "
            f"pyhudi.write(..., operation='upsert') (or INSERT INTO {table}); then clean as usual"))
    if d.non_bucket_groups:
        partition, file_id = d.non_bucket_groups[0]
        out.append(Finding(
            "error", f"{len(d.non_bucket_groups)} file group(s) of this BUCKET table are not buckets (e.g. "
                     f"{partition or '(non-partitioned)'}/{file_id}, from a clustering): every write refuses the "
                     "table; its rows are intact",
            f"rewrite it in bucket layout: INSERT OVERWRITE TABLE {table} SELECT * FROM {table} (or pyhudi.write("
            "pyhudi.read(spark, path), path, {..., 'hoodie.datasource.write.operation': 'insert_overwrite_table'}))"))
    if d.keys_in_several_partitions:
        out.append(Finding(
            "error", f"{d.keys_in_several_partitions} record key(s) are stored in more than one partition of this "
                     f"global-index table (e.g. {', '.join(d.sample_keys)}): a partition move left the old copy",
            "read the copies (pyhudi.read(spark, path).filter(col('_hoodie_record_key').isin(...))), choose the "
            "version to keep, delete the keys (operation='delete' removes every copy under a global index), then "
            "upsert the kept versions"))
    return out


RULES = (_damage, _pending, _compaction, _clean, _small_files, _archive, _skew)


def findings(health: TableHealth, table: str | None = None) -> list[Finding]:
    """Every finding, most urgent first; `table` is the name the fixes use (default: the path)."""
    name = table or health.path
    out = [f for rule in RULES for f in rule(health, name)]
    return sorted(out, key=lambda f: ("error", "warn", "info").index(f.severity))
