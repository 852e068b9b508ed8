"""Typed instant metadata of the table services (timeline/clean_plan, clean_metadata, rollback, restore,
savepoint_metadata, compaction_plan): every Java-written instant file of these kinds in the fixtures parses into its
type and serialises back to the same record (fields pyhudi does not model, e.g. a newer Hudi's, kept); the ones
pyhudi writes keep their bytes (the typed builders give what the dict-building code wrote before them)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import fastavro
import pytest

from pyhudi.commit.timeline_metadata import clean_metadata, cleaner_plan
from pyhudi.timeline import Instant
from pyhudi.timeline import avro_record as avro
from pyhudi.timeline.clean_metadata import CleanMetadata
from pyhudi.timeline.clean_plan import CleanerPlan
from pyhudi.timeline.clustering_plan import RequestedReplaceMetadata
from pyhudi.timeline.compaction_plan import CompactionOperation, CompactionPlan
from pyhudi.timeline.restore import RestoreMetadata, RestorePlan
from pyhudi.timeline.rollback import InstantInfo, RollbackMetadata, RollbackPlan
from pyhudi.timeline.savepoint_metadata import SavepointMetadata, SavepointPartitionMetadata

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path("/work/shared/fixtures/hudi-tables")

# Hudi's record name -> the type that owns it
TYPES = {"HoodieRollbackPlan": RollbackPlan, "HoodieRollbackMetadata": RollbackMetadata,
         "HoodieCompactionPlan": CompactionPlan, "HoodieCleanerPlan": CleanerPlan, "HoodieCleanMetadata": CleanMetadata,
         "HoodieSavepointMetadata": SavepointMetadata, "HoodieRestorePlan": RestorePlan,
         "HoodieRestoreMetadata": RestoreMetadata, "HoodieRequestedReplaceMetadata": RequestedReplaceMetadata}
SUFFIXES = (".rollback", ".rollback.requested", ".compaction.requested", ".clean", ".clean.requested",
            ".savepoint", ".restore", ".restore.requested", ".replacecommit.requested", ".clustering.requested")


def _same_file(a: bytes, b: bytes) -> bool:
    """Two Avro data files equal byte for byte but for their sync markers (random per file; each block, the last
    one too, ends with it)."""
    return a.replace(a[-16:], bytes(16)) == b.replace(b[-16:], bytes(16))


def _java_instant_files():
    """(where, Hudi's record name, the record) of every non-empty service instant file in the fixture tables, the
    metadata tables' included."""
    zips = sorted((ROOT / "tests" / "fixtures" / "hudi-rs").glob("*.zip"))
    if SHARED.is_dir():
        zips += sorted(SHARED.glob("*.zip"))
    for z in zips:
        with zipfile.ZipFile(z) as archive:
            for name in archive.namelist():
                if "__MACOSX" in name or "/.hoodie/" not in name or not name.endswith(SUFFIXES):
                    continue
                data = archive.read(name)
                if data:
                    reader = fastavro.reader(io.BytesIO(data))
                    (record,) = list(reader)
                    yield f"{z.name}:{name}", reader.writer_schema["name"].rsplit(".", 1)[-1], record


def test_java_service_instants_round_trip():
    seen: dict[str, int] = {}
    for where, kind, record in _java_instant_files():
        typed = TYPES[kind].from_avro(record)
        assert typed.to_avro() == record, where
        assert list(typed.to_avro()) == list(record), where     # same field order
        seen[kind] = seen.get(kind, 0) + 1
    assert seen.get("HoodieRollbackPlan", 0) >= 2 and seen.get("HoodieRollbackMetadata", 0) >= 2, seen
    assert seen.get("HoodieCompactionPlan", 0) >= 3, seen
    assert seen.get("HoodieRequestedReplaceMetadata", 0) >= 5, seen


def test_a_java_clustering_plan():
    data = _one(".clustering.requested", "mor_avro_v9_txns_complex_meta.zip", ROOT / "tests" / "fixtures" / "hudi-rs")
    requested = RequestedReplaceMetadata.from_bytes(data, "clustering")
    assert requested.is_clustering and requested.clustering_plan is not None
    groups = requested.clustering_plan.input_groups or ()
    apac = [s for g in groups for s in g.slices or () if s.partition_path == "region=apac"]
    assert [s.file_id for s in apac] == ["1a227a38-6665-4983-bee3-4643ec2a91bb-0",
                                         "dcae9272-b2c6-4f9d-b5b0-760a64ba5c3c-0"]
    assert (apac[0].data_file_path or "").endswith(
        "region=apac/1a227a38-6665-4983-bee3-4643ec2a91bb-0_0-223-547_20260307162647496.parquet")
    assert groups[0].num_output_file_groups == 1 and "extraMetadata" in groups[0].rest   # Hudi 1.x's field: kept
    assert RequestedReplaceMetadata.from_bytes(requested.to_bytes(), "again").clustering_plan is not None
    # Java's insert_overwrite writes an all-null requested record: not a clustering
    overwrite = RequestedReplaceMetadata.from_bytes(_one(
        ".replacecommit.requested", "mor_avro_v9_txns_complex_meta.zip", ROOT / "tests" / "fixtures" / "hudi-rs"), "ow")
    assert not overwrite.is_clustering and overwrite.to_avro() == dict.fromkeys(
        ("operationType", "clusteringPlan", "extraMetadata", "version"))


def _one(suffix: str, zip_name: str, root: Path = SHARED):
    path = root / zip_name
    if not path.exists():
        pytest.skip(f"{path} is not here")
    with zipfile.ZipFile(path) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(suffix) and "__MACOSX" not in n and "/metadata/" not in n]
        return archive.read(name)


def test_a_java_rollback_plan_and_its_metadata():
    plan = RollbackPlan.from_bytes(_one(".rollback.requested", "mor_parquet_v6_nonpartitioned_rollback.zip"), "plan")
    assert plan.instant_to_rollback == InstantInfo("20250126040826878", "deltacommit")
    assert plan.requests is not None and len(plan.requests) == 2
    base, log = plan.requests
    assert [p.rsplit("/", 1)[-1] for p in base.files_to_delete] == [
        "cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_20250126040826878.parquet"]
    assert log.file_id == "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0" and log.latest_base_instant == "20250126040823628"
    assert list((log.log_blocks_to_delete or {}).values()) == [11828]
    done = RollbackMetadata.from_bytes(_one(".rollback", "mor_parquet_v6_nonpartitioned_rollback.zip"), "meta")
    assert done.commits_rollback == ["20250126040826878"] and done.total_files_deleted == 1
    partition = done.partition_metadata[""]
    assert partition.success_delete_files == base.files_to_delete and partition.failed_delete_files == []
    assert list((partition.rollback_log_files or {}).values()) == [105]
    # the failed commit's log file the rollback left: its size is the plan's
    assert partition.log_files_from_failed_commit == {
        "file:/opt/data/external_tables/v6_nonpartitioned_rollback/"
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.1_0-33-43": 11828}
    assert not partition.rest                                          # every field Java wrote is modelled
    assert done.instants_rollback == (InstantInfo("20250126040826878", "deltacommit"),)
    # written back with pyhudi's schema, it is the same record
    again = RollbackMetadata.from_bytes(done.to_bytes(), "again")
    assert again == done and again.to_avro() == done.to_avro()


@pytest.mark.parametrize("zip_name", ["mor_parquet_v6_nonpartitioned_rollback.zip", "mor_avro_v9_nonpartitioned_rollback.zip"])
def test_the_rollback_metadata_schema_is_javas(zip_name):
    """pyhudi's HoodieRollbackMetadata has the fields, in order, that Java's writer schema has (0.x and 1.x)."""
    root = SHARED if zip_name.startswith("mor_parquet") else ROOT / "tests" / "fixtures" / "hudi-rs"
    data = _one(".rollback", zip_name, root)
    java = fastavro.reader(io.BytesIO(data)).writer_schema

    def names(schema):
        return [f["name"] for f in schema["fields"]]

    java_partition = java["fields"][4]["type"]["values"]
    ours_partition = avro.ROLLBACK_METADATA["fields"][4]["type"]["values"]
    assert names(ours_partition) == names(java_partition)
    assert names(avro.ROLLBACK_METADATA) == names(java)


def test_a_java_compaction_plan():
    plan = CompactionPlan.from_bytes(_one(".compaction.requested", "qs_mor_avro_v8_trips_8i3u1d.zip"), "plan")
    assert plan.version == 2 and plan.rest == {"missingSchedulePartitions": []}   # Hudi 1.x's field: kept
    chennai = [op for op in plan.operations if op.partition_path == "city=chennai"]
    assert chennai[0].data_file == "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_2-986-2794_20251220210108078.parquet"
    assert chennai[0].base_instant == "20251220210108078" and len(chennai[0].delta_files) == 2
    assert chennai[0].metrics["TOTAL_LOG_FILES_SIZE"] == 2117.0
    assert CompactionPlan.from_bytes(plan.to_bytes(), "again") == plan


def test_a_new_compaction_plan_keeps_its_bytes():
    op = CompactionOperation("p=1", "f1-0", "001", "f1-0_0-1-0_001.parquet", (".f1-0_001.log.1_0-1-0",),
                             {"TOTAL_LOG_FILES": 1.0})
    plan = CompactionPlan([op], None, 2)
    legacy = {"operations": [{"baseInstantTime": "001", "deltaFilePaths": [".f1-0_001.log.1_0-1-0"],
                              "dataFilePath": "f1-0_0-1-0_001.parquet", "fileId": "f1-0", "partitionPath": "p=1",
                              "metrics": {"TOTAL_LOG_FILES": 1.0}, "bootstrapFilePath": None}],
              "extraMetadata": None, "version": 2, "strategy": None, "preserveHoodieMetadata": None}
    assert _same_file(plan.to_bytes(), avro.to_bytes(avro.COMPACTION_PLAN_SCHEMA, legacy))
    assert CompactionPlan.from_bytes(plan.to_bytes()) == plan
    # a version-1 plan's full paths become names (Hudi's CompactionV2MigrationHandler)
    v1 = CompactionPlan.from_avro({**legacy, "version": 1, "operations": [{
        **legacy["operations"][0], "dataFilePath": "/t/p=1/f1-0_0-1-0_001.parquet"}]})
    assert v1.operations[0].data_file == "f1-0_0-1-0_001.parquet"


def _legacy_cleaner_plan(retain, policy, files, partitions_to_delete, extra) -> dict:
    """commit/timeline_metadata.cleaner_plan as it was before the typed plan (the reference for byte identity)."""
    return {"earliestInstantToRetain": {"timestamp": retain.time, "action": retain.action, "state": "COMPLETED"}
            if retain else None, "policy": policy, "filesToBeDeletedPerPartition": None, "version": 2,
            "filePathsToBeDeletedPerPartition": {p: [{"filePath": f, "isBootstrapBaseFile": False} for f in fs]
                                                 for p, fs in files.items()},
            "partitionsToBeDeleted": partitions_to_delete, "extraMetadata": extra}


@pytest.mark.parametrize("retain", [Instant("003", "commit"), None])
def test_clean_plan_and_metadata_keep_their_bytes(retain):
    files = {"p=1": ["file:/t/p=1/f1_0-1-0_001.parquet", "file:/t/p=1/f2_0-1-0_001.parquet"], "p=2": []}
    plan = cleaner_plan(retain, "KEEP_LATEST_COMMITS", files, ["p=2"], {"savepointed_timestamps": ""})
    legacy = _legacy_cleaner_plan(retain, "KEEP_LATEST_COMMITS", files, ["p=2"], {"savepointed_timestamps": ""})
    assert plan.to_avro() == legacy
    assert _same_file(plan.to_bytes(), avro.to_bytes(avro.CLEANER_PLAN_SCHEMA, legacy))
    parsed = CleanerPlan.from_bytes(plan.to_bytes(), "plan")
    assert parsed == plan and parsed.to_avro() == legacy
    assert parsed.earliest_commit_to_retain == (retain.time if retain else None)

    deleted = {"p=1": ["f1_0-1-0_001.parquet", "f2_0-1-0_001.parquet"]}
    meta = clean_metadata("005", plan, deleted, {"p=1/f2_0-1-0_001.parquet"}, {"p=2"}, "004", 12)
    legacy_meta = {
        "startCleanTime": "005", "timeTakenInMillis": 12, "totalFilesDeleted": 1,
        "earliestCommitToRetain": retain.time if retain else "", "lastCompletedCommitTimestamp": "004",
        "partitionMetadata": {
            "p=1": {"partitionPath": "p=1", "policy": "KEEP_LATEST_COMMITS", "deletePathPatterns": deleted["p=1"],
                    "successDeleteFiles": ["f1_0-1-0_001.parquet"], "failedDeleteFiles": ["f2_0-1-0_001.parquet"],
                    "isPartitionDeleted": False},
            "p=2": {"partitionPath": "p=2", "policy": "KEEP_LATEST_COMMITS", "deletePathPatterns": [],
                    "successDeleteFiles": [], "failedDeleteFiles": [], "isPartitionDeleted": True}},
        "version": 2, "bootstrapPartitionMetadata": {}, "extraMetadata": {"savepointed_timestamps": ""}}
    assert meta.to_avro() == legacy_meta
    assert _same_file(meta.to_bytes(), avro.to_bytes(avro.CLEAN_METADATA_SCHEMA, legacy_meta))
    back = CleanMetadata.from_bytes(meta.to_bytes(), "meta")
    assert back == meta and back.deleted_files() == {"p=1": ["f1_0-1-0_001.parquet"], "p=2": []}
    assert back.partition_metadata["p=2"].is_partition_deleted is True


def test_unknown_fields_survive_a_round_trip():
    record = {**_legacy_cleaner_plan(None, "KEEP_LATEST_FILE_VERSIONS", {}, [], None), "newerHudiField": [1, 2]}
    plan = CleanerPlan.from_avro(record)
    assert plan.rest == {"newerHudiField": [1, 2]} and plan.to_avro() == record
    # a version-1 plan (file names per partition) keeps them
    v1 = CleanerPlan.from_avro({**record, "version": 1, "filesToBeDeletedPerPartition": {"p": ["a.parquet"]},
                                "filePathsToBeDeletedPerPartition": None})
    assert v1.files == {"p": ["a.parquet"]} and v1.file_paths is None


def test_savepoint_metadata_keeps_its_bytes():
    meta = SavepointMetadata("alice", 1700000000000, "before w3",
                             {"us": SavepointPartitionMetadata("us", ["f1_0-1-0_001.parquet"])}, 1)
    legacy = {"savepointedBy": "alice", "savepointedAt": 1700000000000, "comments": "before w3",
              "partitionMetadata": {"us": {"partitionPath": "us", "savepointDataFile": ["f1_0-1-0_001.parquet"]}},
              "version": 1}
    assert meta.to_avro() == legacy
    assert _same_file(meta.to_bytes(), avro.to_bytes(avro.SAVEPOINT_METADATA, legacy))
    assert SavepointMetadata.from_bytes(meta.to_bytes(), "sp") == meta


def test_restore_plan_and_metadata_round_trip():
    plan = RestorePlan((InstantInfo("004", "commit"), InstantInfo("003", "deltacommit")), 2, "002")
    legacy = {"instantsToRollback": [{"commitTime": "004", "action": "commit"},
                                     {"commitTime": "003", "action": "deltacommit"}],
              "version": 2, "savepointToRestoreTimestamp": "002"}
    assert _same_file(plan.to_bytes(), avro.to_bytes(avro.RESTORE_PLAN, legacy))
    assert RestorePlan.from_bytes(plan.to_bytes(), "plan") == plan
    rollback = RollbackMetadata.from_avro({
        "startRollbackTime": "005", "timeTakenInMillis": 3, "totalFilesDeleted": 2, "commitsRollback": ["004"],
        "partitionMetadata": {"p": {"partitionPath": "p", "successDeleteFiles": ["/t/p/a", "/t/p/b"],
                                    "failedDeleteFiles": [], "rollbackLogFiles": {}, "logFilesFromFailedCommit": {}}},
        "version": 1, "instantsRollback": [{"commitTime": "004", "action": "commit"}]})
    meta = RestoreMetadata("005", 7, ["004"], {"004": (rollback,)}, 1, plan.instants_to_rollback[:1], None)
    back = RestoreMetadata.from_bytes(meta.to_bytes(), "restore")
    assert back == meta and back.total_files_deleted == 2
    assert back.rollbacks["004"][0].partition_metadata["p"].success_delete_files == ["/t/p/a", "/t/p/b"]
