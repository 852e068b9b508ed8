"""Write planning on the driver (metadata only): where inserts go, how large files get, what executors must know
about existing file groups, and Hudi's auto-generated record keys."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyhudi import config as C
from pyhudi.file_group.naming import new_file_id
from pyhudi.timeline import Timeline
from pyhudi.writer.file_writer import RECORD_KEY, GroupState


def with_auto_keys(keyed: DataFrame, instant_time: str) -> DataFrame:
    """Hudi's auto-generated record keys `<instant>_<sparkPartitionId>_<rowId>` for a table without a record key
    (rows that already carry a key, a prepped write's stored rows, keep it). Spark expressions, evaluated where the
    batch's partitions are: a Python task's TaskContext.partitionId() is the task's, which a downstream coalesce
    shares between several partitions (their keys then repeated)."""
    partition = F.spark_partition_id().cast("bigint")
    row = F.monotonically_increasing_id() - F.shiftleft(partition, 33)   # the row number within its partition
    auto = F.concat(F.lit(f"{instant_time}_"), partition.cast("string"), F.lit("_"), row.cast("string"))
    return keyed.withColumn(RECORD_KEY, F.when(F.col(RECORD_KEY) == "", auto).otherwise(F.col(RECORD_KEY)))


def average_record_size(timeline: Timeline, wc: C.WriteConfig) -> int:
    """Bytes per record from the latest commits that wrote enough data, else hoodie.copyonwrite.record.size.estimate."""
    threshold = wc.small_file_limit * 1.0  # Hudi: hoodie.record.size.estimation.threshold = 1.0 x limit
    for instant in reversed(timeline.completed_writes()[-20:]):
        # base files only (log files hold other encodings), as Hudi reads only the commit timeline
        stats = [s for s in timeline.read_commit(instant).write_stats if not s.is_log_file]
        total_bytes = sum(s.total_write_bytes or 0 for s in stats)
        total_records = sum(s.num_writes or 0 for s in stats)
        if total_records and total_bytes > threshold:
            return max(1, total_bytes // total_records)
    return wc.record_size_estimate


def group_states(view) -> dict[tuple[str, str], GroupState]:
    """Per existing file group: its latest base file and where new log files go (metadata for executors)."""
    pending = view.pending_compaction_groups
    states = {}
    for key, group in view.file_groups.items():
        latest = group.latest_slice
        base = next((s.base_file for s in reversed(group.slices) if s.base_file is not None), None)
        log_base = pending.get(key, latest.base_instant)
        logs = sorted((log for s in group.slices if s.base_instant == log_base for log in s.log_files),
                      key=lambda log: log.sort_key())
        latest_log = (logs[-1].name, logs[-1].version, logs[-1].size) if logs else None
        states[key] = GroupState(base.path if base else None, base.instant_time if base else "null", log_base,
                                 max((log.version for log in logs), default=0) + 1, latest_log)
    return states


def inserts_to_logs(is_mor: bool, index_is_bucket: bool, operation: str) -> bool:
    """Whether a write's records for a file group that does not exist yet start it with a log file: Hudi's
    delta commit (upsert, insert, delete) hands inserts to an AppendHandle when the index can index log files
    (BaseSparkDeltaCommitActionExecutor.handleInsert; HoodieBucketIndex.canIndexLogFiles is true). bulk_insert
    and the insert_overwrite operations write base files (create handles), as other indexes do."""
    return is_mor and index_is_bucket and operation in ("upsert", "insert", "delete")


def plan_insert_buckets(counts: dict, view, record_size: int, wc: C.WriteConfig) -> list[tuple]:
    """Per partition, weighted slots [lo, hi) -> file id: small files by free capacity, then new file groups."""
    max_size, small_limit = wc.max_file_size, wc.small_file_limit
    per_file = wc.records_per_new_file(record_size)
    slices_by_partition: dict[str, list] = {}
    if small_limit > 0:
        # Merge-on-read: only slices without log files (and not being compacted) take inserts, as in Hudi for
        # an index that cannot index log files.
        for slice_ in view.latest_slices(counts.keys()):
            if slice_.base_file is None or slice_.log_files:
                continue
            if (slice_.partition_path, slice_.file_id) in view.busy_groups:
                continue
            slices_by_partition.setdefault(slice_.partition_path, []).append(slice_.base_file)
    rows = []
    for partition, total in sorted(counts.items()):
        assignments: list[tuple[str, int]] = []
        remaining = total
        for base in sorted(slices_by_partition.get(partition, []), key=lambda b: b.size):
            if remaining <= 0 or base.size >= small_limit:
                continue
            capacity = max(0, (max_size - base.size) // record_size)
            take = min(capacity, remaining)
            if take > 0:
                assignments.append((base.file_id, take))
                remaining -= take
        while remaining > 0:
            take = min(per_file, remaining)
            assignments.append((new_file_id(), take))
            remaining -= take
        lo = 0.0
        for index, (file_id, take) in enumerate(assignments):
            hi = 1.01 if index == len(assignments) - 1 else lo + take / total
            rows.append((partition, lo, hi, file_id))
            lo = hi
    return rows
