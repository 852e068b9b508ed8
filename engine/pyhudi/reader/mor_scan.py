"""Merge-on-read snapshot on Spark's native parquet scan.

Base files are read by Spark's parquet reader; only the log files go through Python (``slice_changes``, one
``mapInArrow`` task per group of file slices with logs), which yields per slice the log records to emit and the
base keys to drop. The merge is then two Spark operations:

    (base rows of slices with logs) LEFT ANTI JOIN (drop keys) ON (base file name, record key)
    UNION ALL (emitted log records) UNION ALL (base rows of slices without logs: no join at all)

(Base files without logs join the first scan instead when they are few bytes: see FOLD_PLAIN_BYTES.)

The drop keys and the emitted records come from two separate Python passes over the log files (each yields only
its own rows): decoding the logs costs a few milliseconds per slice, less than sharing one pass through a shuffle
exchange and an optimizer barrier (a Python identity stage, run twice) did.

The decision which base rows go and which log records win is taken entirely from the log files (and, for the
event-time payloads, the base file's key and ordering columns read in Python), never from the rows a query keeps:
so a filter on any column may be pushed below the union and the anti join into the parquet scans (it commutes
with both), and column pruning applies to the base scans.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.reader.file_slice_reader import CHANGE_EMIT, CHANGE_KEY
from pyhudi.reader.plan import ScanPlan
from pyhudi.schema.meta_fields import RECORD_KEY
from pyhudi.spark.jvm import default_parallelism

DROP_FILE, DROP_KEY = "__pyhudi_drop_file", "__pyhudi_drop_key"   # a dropped base row: its file name and key
# The anti join's condition: a base row goes when a drop row names its file and key. Spark hashes on the 64-bit
# hash of the key alone and checks file and key only for the rows of equal hash: a join keyed on the two strings
# builds an UnsafeRow of both per base row and probes a bytes-to-bytes map (measured on 1.9M base rows: 0.72 s
# against 0.43 s). `if(...)`, not `AND`, keeps the two equalities out of the join keys. One SQL condition on
# distinct names: the anti join keeps the base columns in table order (a join on same-named columns would put them
# first), and costs a few py4j calls where column objects cost ~4 each.
DROP_CONDITION = (f"xxhash64({RECORD_KEY}) = xxhash64({DROP_KEY}) "
                  f"AND if(_metadata.file_name = {DROP_FILE}, {RECORD_KEY} = {DROP_KEY}, false)")
# Base files without log files join the scan of those with logs up to this many bytes (the join costs ~1 ms
# per MB of base file; a second scan ~40 ms of planning), and are scanned apart above it.
FOLD_PLAIN_BYTES = 64 * 1024 * 1024
# The pass that emits log records (in the stage of the base scans) takes one Python task per this many log bytes:
# on 1.9M base rows with 250 KB of logs, one task instead of two took the scan from 0.52 s to 0.49 s.
EMIT_TASK_LOG_BYTES = 16 * 1024 * 1024
# Above this many log bytes the drop keys are not broadcast (Spark joins by shuffle instead).
BROADCAST_LOG_BYTES = 64 * 1024 * 1024


def can_merge_natively(plan: ScanPlan) -> bool:
    """The native merge needs the record key in every base file and the ordering field in the table schema (the
    Python data source handles the rest: tables without meta fields raise there, and an ordering field only
    some files hold is typed from those files)."""
    from pyhudi.reader.file_slice_reader import ordering_field_type
    if plan.begin_exclusive is not None or not plan.table.properties.populate_meta_fields:
        return False
    return plan.ordering_field is None or ordering_field_type(plan.schema, plan.ordering_field) is not None


def merged_snapshot(spark: SparkSession, plan: ScanPlan, scan) -> DataFrame:
    """The snapshot rows of ``plan`` (which has slices with log files). ``scan(uris)`` is the native scan of
    base files in the table schema.

    The base scans come first in the union and the Python pass over the logs last: Spark launches a stage's tasks
    in partition order, and the pass's tasks (a Python worker each, ~0.1 s to start) would otherwise hold both
    cores of a small machine before the first base row is read."""
    with_logs = [s for s in plan.slices if s.log_files]
    merged = [s for s in with_logs if s.base_file is not None]
    scanned = [s.base_file for s in merged]
    plain = [s.base_file for s in plan.slices if not s.log_files and s.base_file is not None]
    if merged and sum(f.size or 0 for f in plain) <= FOLD_PLAIN_BYTES:
        scanned, plain = scanned + plain, []   # their rows meet no drop row: one scan plans faster than two
    storage = plan.table.storage
    parts = []
    if merged:
        base = scan([storage.uri(f.path) for f in scanned])
        drops = _changes(spark, plan, merged, emit=False)
        drops = drops.hint("broadcast" if _log_bytes(with_logs) <= BROADCAST_LOG_BYTES else "merge")
        parts.append(base.join(drops, F.expr(DROP_CONDITION), "left_anti"))
    if plain:
        parts.append(scan([storage.uri(f.path) for f in plain]))
    parts.append(_changes(spark, plan, with_logs, emit=True))   # in the table's column order
    out = parts[0]
    for part in parts[1:]:
        out = out.unionByName(part)
    return out


def _log_bytes(slices: list) -> int:
    return sum(s.log_size for s in slices)


def _changes(spark: SparkSession, plan: ScanPlan, slices: list, *, emit: bool) -> DataFrame:
    """``emit=True``: the log records of ``slices`` that the snapshot emits, in the table schema.
    ``emit=False``: the base rows they drop, as (DROP_FILE, DROP_KEY): base file name and record key."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    from pyspark.sql.types import StringType, StructField, StructType

    table_type = StructType([StructField(f.name, f.dataType, True) for f in from_arrow_schema(plan.schema).fields])
    if emit:
        out_type = table_type
    else:
        out_type = StructType([StructField(DROP_FILE, StringType(), False), StructField(DROP_KEY, StringType(), False)])
    tasks = min(len(slices), default_parallelism(spark))
    if emit:   # runs beside the base scans, which keep the cores busy: a Python task costs ~40 ms before its work
        tasks = min(tasks, -(-_log_bytes(slices) // EMIT_TASK_LOG_BYTES))
    tasks = max(1, tasks)
    groups = [slices[i::tasks] for i in range(tasks)]
    base_uri = plan.table.storage.base_uri
    visible, before, extents = plan.visible_instants, plan.committed_before, plan.committed_extents
    groups = [[(s, {log.path: extents[log.path] for log in s.log_files if log.path in extents}) for s in group]
              for group in groups]
    ordering_field, payload_class = plan.ordering_field, plan.payload_class

    def read_changes(batches):
        import pyarrow.compute as pc

        from pyhudi.reader.file_slice_reader import slice_changes
        from pyhudi.storage import Storage

        target = to_arrow_schema(out_type, timezone="UTC", prefers_large_types=False)
        schema = to_arrow_schema(table_type, timezone="UTC", prefers_large_types=False)   # as Spark types it
        storage = Storage(base_uri)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for file_slice, slice_extents in groups[task]:
                    changes = slice_changes(storage, file_slice, schema, visible_instants=visible,
                                            ordering_field=ordering_field, payload_class=payload_class,
                                            committed_before=before, committed_extents=slice_extents)
                    rows = changes.filter(pc.equal(changes[CHANGE_EMIT], emit))
                    if emit:
                        columns = [rows[f.name] for f in schema]
                    else:
                        name = file_slice.base_file.path.rsplit("/", 1)[-1]
                        columns = [pa.chunked_array([[name] * rows.num_rows], pa.string()), rows[CHANGE_KEY]]
                    yield from pa.Table.from_arrays(columns, schema=target).to_batches()

    return spark.range(0, tasks, 1, tasks).mapInArrow(read_changes, out_type)
