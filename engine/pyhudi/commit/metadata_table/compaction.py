"""Compacting the metadata table's `files` partition: the latest slice's base HFile and trusted log files merged into
a new base HFile, under a compaction instant of its own (Hudi 1.x: a new instant time; completed as a commit), as
Java compacts its metadata table every hoodie.metadata.compact.max.delta.commits delta commits (options.py).
Without it every reader would merge one more log file per data commit.
"""

from __future__ import annotations

from pyhudi.timeline.compaction_plan import (TOTAL_LOG_FILES, TOTAL_LOG_FILES_SIZE, CompactionOperation,
                                           CompactionPlan)
from pyhudi.commit.metadata_table.deltacommit import WRITE_TOKEN
from pyhudi.commit.metadata_table.files_slice import FILE_GROUP, FilesSlice, read_files_records
from pyhudi.commit.metadata_table.records import FILES_PARTITION, FilesRecord, cells
from pyhudi.file_group.bloom_filter import BloomFilter
from pyhudi.file_group.hfile import write_hfile
from pyhudi.storage import Storage
from pyhudi.testing import crash_point
from pyhudi.timeline import COMPACTION, create_requested, transition_to_completed, transition_to_inflight

BASE_BLOCK_SIZE = 1024 * 1024   # hoodie.metadata... base HFile block size (HoodieStorageConfig.HFILE_BLOCK_SIZE)


def base_file_name(instant_time: str) -> str:
    return f"{FILE_GROUP}_{WRITE_TOKEN}_{instant_time}.hfile"


def base_file_bytes(records: dict[str, FilesRecord], schema_json: str, name: str) -> bytes:
    """A base HFile of `records`, as Java's HoodieAvroHFileWriter writes one for the metadata table (GZ blocks):
    values name the file; file info holds the schema, the bloom filter's type and the min and max record keys;
    the bloom filter of the keys is the `bloomFilter` meta block."""
    keys = sorted(records, key=str.encode)
    bloom = BloomFilter.create()
    bloom.add_keys(keys)
    info = {b"schema": schema_json.encode(), b"bloomFilterTypeCode": bloom.type_code.encode()}
    if keys:
        info.update({b"minRecordKey": keys[0].encode(), b"maxRecordKey": keys[-1].encode()})
    return write_hfile(cells(records, schema_json, name), file_info=info, block_size=BASE_BLOCK_SIZE, compression="gz",
                       meta_blocks={b"bloomFilter": bloom.serialize().encode()})


def compact(mdt: Storage, instant_time: str, files_slice: FilesSlice, schema_json: str) -> str:
    """Compact `files_slice` under the compaction instant `instant_time`; returns the new base file's name."""
    records = read_files_records(mdt, files_slice)
    sizes = [mdt.file_size(files_slice.relative(name)) for name, _ in files_slice.log_files]
    operation = CompactionOperation(FILES_PARTITION, FILE_GROUP, files_slice.base_instant, files_slice.base_file,
                                    tuple(name for name, _ in files_slice.log_files),
                                    {TOTAL_LOG_FILES: float(len(sizes)), TOTAL_LOG_FILES_SIZE: float(sum(sizes))})
    requested = create_requested(mdt, instant_time, COMPACTION, CompactionPlan([operation]).to_bytes())
    inflight = transition_to_inflight(mdt, requested, b"")
    name = base_file_name(instant_time)
    data = base_file_bytes(records, schema_json, name)
    mdt.write_bytes(f"{FILES_PARTITION}/{name}", data)
    crash_point("metadata_table.compaction.after_base_file")
    stat = {"fileId": FILE_GROUP, "path": f"{FILES_PARTITION}/{name}", "prevCommit": files_slice.base_instant,
            "numWrites": len(records), "numDeletes": 0, "numUpdateWrites": 0, "numInserts": len(records),
            "totalWriteBytes": len(data), "totalWriteErrors": 0, "partitionPath": FILES_PARTITION,
            "fileSizeInBytes": len(data), "prevBaseFile": files_slice.base_file,
            "totalLogFilesCompacted": len(sizes), "totalLogSizeCompacted": sum(sizes)}
    metadata = {"partitionToWriteStats": {FILES_PARTITION: [stat]}, "compacted": True,
                "extraMetadata": {"schema": schema_json}, "operationType": "COMPACT"}
    transition_to_completed(mdt, inflight, metadata)
    return name
