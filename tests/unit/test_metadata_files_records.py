"""The metadata table's files records (commit/metadata_table): how an instant's metadata becomes records, how records
of one key merge (Java's HoodieMetadataPayload), and that they encode as Java encodes them (the Java-written base
file of tests/fixtures/hfile decodes to the listing hudi-rs's own test expects, and re-encodes byte for byte)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyhudi.commit.metadata_table.changes import clean_records, commit_records, rollback_records
from pyhudi.timeline import CommitMetadata
from pyhudi.commit.metadata_table.compaction import base_file_bytes
from pyhudi.commit.metadata_table.records import (ALL_PARTITIONS_KEY, FileEntry, FilesRecord, decode_record,
                                                  encode_record, record_schema_json)
from pyhudi.errors import CorruptFileError
from pyhudi.file_group.hfile import HFileReader
from pyhudi.timeline.clean_metadata import CleanMetadata
from pyhudi.timeline.rollback import RollbackMetadata

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hfile"


def _java_base(name: str) -> bytes:
    (path,) = FIXTURES.glob(f"*{name}*")
    return path.read_bytes()


def test_a_later_entry_keeps_the_larger_size_and_a_deletion_removes_the_file():
    record = FilesRecord("p", {"a.parquet": FileEntry(10), ".a.log.1_0-1-0": FileEntry(5)})
    record.merge(FilesRecord("p", {".a.log.1_0-1-0": FileEntry(3), "b.parquet": FileEntry(7),
                                   "a.parquet": FileEntry(0, True), "gone.parquet": FileEntry(0, True)}))
    assert record.live() == {".a.log.1_0-1-0": 5, "b.parquet": 7}
    assert record.entries["gone.parquet"].deleted    # a deletion of a file never listed stays a tombstone
    record.merge(FilesRecord("p", {"a.parquet": FileEntry(12)}))
    assert record.live()["a.parquet"] == 12


def test_a_commit_lists_its_files_and_partitions():
    metadata = {"partitionToWriteStats": {
        "p=1": [{"path": "p=1/f1_0-1-0_001.parquet", "fileSizeInBytes": 100},
                {"path": "p=1/.f2_001.log.1_0-1-0", "fileSizeInBytes": 20, "cdcStats": {"p=1/f2-cdc": 3}}],
        "": [{"path": "f3_0-1-0_001.parquet", "fileSizeInBytes": 50}]}}
    records = commit_records(CommitMetadata.from_json(metadata))
    assert records["p=1"].live() == {"f1_0-1-0_001.parquet": 100, ".f2_001.log.1_0-1-0": 20, "f2-cdc": 3}
    assert records["."].live() == {"f3_0-1-0_001.parquet": 50}     # a non-partitioned table's key is "."
    assert set(records[ALL_PARTITIONS_KEY].live()) == {"p=1", "."}


def test_a_clean_and_a_rollback_delete_files():
    clean = clean_records(CleanMetadata.from_avro({"partitionMetadata": {"p=1": {
        "successDeleteFiles": ["f1_0-1-0_001.parquet"], "isPartitionDeleted": True}}}))
    assert clean["p=1"].entries["f1_0-1-0_001.parquet"].deleted
    assert clean[ALL_PARTITIONS_KEY].entries["p=1"].deleted
    rollback = rollback_records(RollbackMetadata.from_avro({"partitionMetadata": {"p=1": {
        "successDeleteFiles": ["/t/p=1/f2_0-1-0_002.parquet"], "rollbackLogFiles": {"/t/p=1/.f_001.log.1_0-1-0": 9}}}}))
    assert rollback["p=1"].entries["f2_0-1-0_002.parquet"].deleted
    assert rollback["p=1"].live() == {".f_001.log.1_0-1-0": 9}


def test_a_java_rollback_lists_the_failed_commits_log_file_beside_its_rollback_block():
    """Java 0.x rolled a delta commit back by a rollback block in a new log file (log.2); the failed commit's own
    log file (log.1, in logFilesFromFailedCommit) stays on storage, and its metadata delta commit, which named it,
    is rolled back: the rollback's records name both, as Java's HoodieTableMetadataUtil does."""
    import zipfile

    zip_path = Path("/work/shared/fixtures/hudi-tables/mor_parquet_v6_nonpartitioned_rollback.zip")
    if not zip_path.exists():
        pytest.skip(f"{zip_path} is not here")
    with zipfile.ZipFile(zip_path) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".rollback") and "__MACOSX" not in n]
        metadata = RollbackMetadata.from_bytes(archive.read(name), name)
    records = rollback_records(metadata)
    assert records["."].live() == {
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1": 105,
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.1_0-33-43": 11828}
    assert records["."].entries["cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_20250126040826878.parquet"].deleted


def _records(data: bytes) -> tuple[dict[str, FilesRecord], str]:
    reader = HFileReader(data, "java base file")
    schema = reader.file_info[b"schema"].decode()
    return {k.decode(): decode_record(k.decode(), v, schema, "java") for k, v in reader.records()}, schema


def test_java_base_files_decode_and_reencode_byte_for_byte():
    compacted, _ = _records(_java_base("20251220210130942"))
    assert set(compacted[ALL_PARTITIONS_KEY].live()) == {"city=chennai", "city=san_francisco", "city=sao_paulo"}
    assert len(compacted["city=chennai"].live()) == 4
    # the initialising base file, written before the table's first commit: one empty __all_partitions__ record
    data = _java_base("00000000000000000")
    records, schema = _records(data)
    assert list(records) == [ALL_PARTITIONS_KEY] and not records[ALL_PARTITIONS_KEY].live()
    name = "files-0000-0_0-955-2690_00000000000000000.hfile"
    # the values name the base file; the keys live in the cells (the values' `key` is empty)
    reader = HFileReader(data, "java base file")
    assert all(encode_record(records[k.decode()], schema, name) == v for k, v in reader.records())
    assert base_file_bytes(records, schema, name) == data


def test_a_value_that_is_not_a_metadata_record_is_refused_with_the_fix():
    with pytest.raises(CorruptFileError, match="hoodie.metadata.enable=false"):
        decode_record("p", b"\x07garbage", record_schema_json("8"), "some file")


def test_version_8_and_9_schemas_encode_files_records_alike():
    record = FilesRecord("p", {"a.parquet": FileEntry(10)})
    assert encode_record(record, record_schema_json("8")) == encode_record(record, record_schema_json("9"))
