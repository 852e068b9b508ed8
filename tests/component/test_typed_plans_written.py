"""The service instants pyhudi writes (clean, savepoint, rollback, restore, compaction; no Java fixture has a clean,
savepoint or restore) parse into their timeline types and serialise back to the same record and the same bytes
(but for the Avro sync marker, random per file), with the values the run produced."""

from __future__ import annotations

import io

import fastavro

import pyhudi
from pyhudi.timeline.clean_metadata import CleanMetadata
from pyhudi.timeline.clean_plan import CleanerPlan
from pyhudi.timeline.compaction_plan import CompactionPlan
from pyhudi.timeline.restore import RestoreMetadata, RestorePlan
from pyhudi.timeline.rollback import RollbackMetadata, RollbackPlan
from pyhudi.timeline.savepoint_metadata import SavepointMetadata

TYPES = {".clean.requested": CleanerPlan, ".clean": CleanMetadata, ".savepoint": SavepointMetadata,
         ".rollback.requested": RollbackPlan, ".rollback": RollbackMetadata, ".restore.requested": RestorePlan,
         ".restore": RestoreMetadata, ".compaction.requested": CompactionPlan}
OPTIONS = {"hoodie.table.name": "typed", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
           "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.parquet.small.file.limit": "0",
           "hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"}


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, region string")


def _same_file(a: bytes, b: bytes) -> bool:
    return a.replace(a[-16:], bytes(16)) == b.replace(b[-16:], bytes(16))


def test_service_instants_pyhudi_writes_round_trip(spark, tmp_path):
    path = str(tmp_path / "t")
    w1 = pyhudi.write(_df(spark, [(i, "v1", 1, "eu" if i % 2 else "us") for i in range(6)]), path, OPTIONS)
    for ts in (2, 3):
        pyhudi.write(_df(spark, [(0, f"v{ts}", ts, "us"), (1, f"v{ts}", ts, "eu")]), path, OPTIONS)
    pyhudi.compact(spark, path)
    pyhudi.create_savepoint(spark, path)
    pyhudi.write(_df(spark, [(0, "v4", 4, "us")]), path, OPTIONS)
    w5 = pyhudi.write(_df(spark, [(2, "v5", 5, "us")]), path, OPTIONS)
    pyhudi.rollback_to_instant(spark, path, w5.instant_time)
    savepoint = pyhudi.show_savepoints(spark, path)[0]
    pyhudi.write(_df(spark, [(3, "v6", 6, "eu")]), path, OPTIONS)
    pyhudi.restore_to_savepoint(spark, path, savepoint.time)
    cleaned = pyhudi.clean(spark, path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                         "hoodie.cleaner.fileversions.retained": "1"})
    assert cleaned is not None and cleaned.files_deleted > 0

    seen: dict[str, object] = {}
    for file in sorted((tmp_path / "t" / ".hoodie").iterdir()):
        kind = next((s for s in sorted(TYPES, key=len, reverse=True) if file.name.endswith(s)), None)
        data = file.read_bytes() if file.is_file() else b""
        if kind is None or not data:
            continue
        (record,) = list(fastavro.reader(io.BytesIO(data)))
        typed = TYPES[kind].from_bytes(data, str(file))
        assert typed.to_avro() == record, file.name
        assert _same_file(typed.to_bytes(), data), file.name
        seen[kind] = typed
    assert set(seen) == set(TYPES), sorted(seen)

    clean = seen[".clean"]
    assert isinstance(clean, CleanMetadata) and clean.start_clean_time == cleaned.instant_time
    assert clean.deleted_files() == cleaned.deleted_files and clean.total_files_deleted == cleaned.files_deleted
    plan = seen[".clean.requested"]
    assert isinstance(plan, CleanerPlan) and plan.policy == "KEEP_LATEST_FILE_VERSIONS"
    planned = sorted(f.file_path.rsplit("/", 1)[-1] for fs in (plan.file_paths or {}).values() for f in fs
                     if f.file_path)
    assert planned == sorted(n for ns in cleaned.deleted_files.values() for n in ns)
    sp = seen[".savepoint"]
    assert isinstance(sp, SavepointMetadata) and set(sp.partition_metadata) == {"eu", "us"}
    rollback = seen[".rollback"]
    assert isinstance(rollback, RollbackMetadata) and rollback.commits_rollback == [w5.instant_time]
    restore = seen[".restore"]
    assert isinstance(restore, RestoreMetadata) and restore.instants_to_rollback and \
        all(t > savepoint.time for t in restore.instants_to_rollback)
    assert w1.instant_time < savepoint.time
