"""Writing the metadata table's `files` partition: one delta commit per data instant, at the data instant's time,
as Java's HoodieBackedTableMetadataWriter does on Hudi 1.x (a new log file per delta commit, holding one
HFILE_DATA_BLOCK of HoodieMetadataRecords keyed by partition), and undoing one that a failed data write left.
"""

from __future__ import annotations

from pyhudi.commit.metadata_table.files_slice import FILE_GROUP, FilesSlice
from pyhudi.commit.metadata_table.records import FILES_PARTITION, FilesRecord, cells
from pyhudi.file_group.hfile import write_hfile
from pyhudi.file_group.log_block.model import BlockType, LogBlock
from pyhudi.file_group.log_file import parse_log_file_path, write_log_file
from pyhudi.file_group.naming import log_file_name
from pyhudi.storage import Storage
from pyhudi.testing import crash_point
from pyhudi.timeline import (DELTA_COMMIT, Instant, State, create_requested, instant_file, transition_to_completed,
                             transition_to_inflight)

WRITE_TOKEN = "0-0-0"
LOG_BLOCK_SIZE = 64 * 1024   # HFile block size of a log block's HFile (HoodieHFileDataBlock)


def hfile_bytes(records: dict[str, FilesRecord], schema_json: str) -> bytes:
    """The records as an HFile (key: the record key, value: its Avro binary), ordered by key, schema in file info."""
    return write_hfile(cells(records, schema_json), file_info={b"schema": schema_json.encode()},
                       block_size=LOG_BLOCK_SIZE, compression="gz")


def write_deltacommit(mdt: Storage, instant_time: str, records: dict[str, FilesRecord], schema_json: str,
                      files_slice: FilesSlice) -> Instant:
    """The metadata table's delta commit `instant_time` holding `records`: requested, inflight, its log file,
    completed. A leftover of an earlier attempt at the same instant is undone first."""
    undo_deltacommit(mdt, instant_time)
    requested = create_requested(mdt, instant_time, DELTA_COMMIT)
    inflight = transition_to_inflight(mdt, requested, b"")
    name = log_file_name(FILE_GROUP, instant_time, 1, WRITE_TOKEN)
    block = LogBlock(BlockType.HFILE_DATA_BLOCK, header={"SCHEMA": schema_json, "INSTANT_TIME": instant_time},
                     content=hfile_bytes(records, schema_json))
    size = write_log_file(mdt.fs, mdt.full(f"{FILES_PARTITION}/{name}"), [block])
    crash_point("metadata_table.deltacommit.after_log")
    stat = {"fileId": FILE_GROUP, "path": f"{FILES_PARTITION}/{name}", "prevCommit": instant_time,
            "numWrites": len(records), "numDeletes": 0, "numUpdateWrites": len(records), "numInserts": 0,
            "totalWriteBytes": size, "totalWriteErrors": 0, "partitionPath": FILES_PARTITION,
            "fileSizeInBytes": size, "logVersion": 1, "logOffset": 0, "baseFile": files_slice.base_file or "",
            "logFiles": [name]}
    metadata = {"partitionToWriteStats": {FILES_PARTITION: [stat]}, "compacted": False,
                "extraMetadata": {"schema": schema_json}, "operationType": "UPSERT_PREPPED"}
    return transition_to_completed(mdt, inflight, metadata)


def undo_deltacommit(mdt: Storage, instant_time: str) -> bool:
    """Remove the metadata table's delta commit `instant_time` (a data write that did not complete): its log files
    first, then its instant files, completed first. True when there was something to undo."""
    undone = False
    for info in mdt.list_files(FILES_PARTITION) if mdt.exists(FILES_PARTITION) else []:
        name = info.base_name
        if name.startswith(f".{FILE_GROUP}_{instant_time}.log.") and \
                parse_log_file_path(name)[1] == instant_time:
            mdt.delete_file(f"{FILES_PARTITION}/{name}")
            undone = True
    for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
        path = instant_file(mdt, Instant(instant_time, DELTA_COMMIT, state))
        if mdt.exists(path):
            mdt.delete_file(path)
            undone = True
    return undone
