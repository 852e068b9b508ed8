"""Creating a metadata table's `files` partition from the file listing, as Java's writer initialises it on a table
of version 8 or 9 (HoodieBackedTableMetadataWriter.initializeFromFilesystem): hoodie.properties names `files` as
inflight; the metadata table gets its hoodie.properties and its initialising delta commit `00000000000000000`
holding a base HFile of every committed data file (and an empty log file, as Java's initializeFileGroups writes);
then hoodie.properties names `files` as ready. A crash before the last step leaves a partition no reader uses
(named inflight only); the next initialisation starts again from scratch.
"""

from __future__ import annotations

import posixpath

from pyhudi import config as C
from pyhudi.commit.metadata_table.compaction import base_file_bytes, base_file_name
from pyhudi.commit.metadata_table.deltacommit import WRITE_TOKEN
from pyhudi.commit.metadata_table.files_slice import FILE_GROUP
from pyhudi.commit.metadata_table.records import (ALL_PARTITIONS_KEY, FILES_PARTITION, FileEntry, FilesRecord,
                                                  partition_key, record_schema_json)
from pyhudi.commit.metadata_table.sync import metadata_storage
from pyhudi.file_group.log_block.blocks import delete_block
from pyhudi.file_group.log_file import write_log_file
from pyhudi.file_group.naming import PARTITION_METAFILE, log_file_name, parse_base_file_name, parse_log_file_name
from pyhudi.storage import Storage
from pyhudi.table.listing import table_listing
from pyhudi.table.metadata_table import METADATA_FOLDER, PARTITIONS, PARTITIONS_INFLIGHT
from pyhudi.table.properties import dump_properties, read_table_properties, update_table_properties
from pyhudi.testing import crash_point
from pyhudi.timeline import (DELTA_COMMIT, METAFOLDER, PROPERTIES_FILE, Timeline, create_requested,
                             transition_to_completed, transition_to_inflight)

INITIAL_INSTANT = "00000000000000000"   # the files partition's initialising instant (Hudi 1.x)


def metadata_table_properties(values: dict[str, str]) -> dict[str, str]:
    """The metadata table's hoodie.properties, as Java writes it for a data table of these properties."""
    version = values[C.TABLE_VERSION.key]
    return {
        "hoodie.table.name": f"{values[C.TABLE_NAME.key]}_metadata", "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": version, "hoodie.table.initial.version": version,
        "hoodie.timeline.layout.version": "2", "hoodie.timeline.path": "timeline",
        "hoodie.timeline.history.path": "history", "hoodie.archivelog.folder": "history",
        "hoodie.table.base.file.format": "HFILE", "hoodie.table.recordkey.fields": "key",
        "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA", "hoodie.populate.meta.fields": "false",
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.record.merge.mode": "CUSTOM",
        "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
        "hoodie.datasource.write.drop.partition.columns": "false",
    }


def committed_files(storage: Storage, timeline: Timeline) -> dict[str, FilesRecord]:
    """A files record per partition of every data file whose instant completed (on Hudi 1.x a log file is named by
    its own delta commit), and the partitions under __all_partitions__."""
    done = {i.time for i in timeline.completed()}
    records: dict[str, FilesRecord] = {}
    for relative, name, size in table_listing(storage).files(timeline):
        if name.startswith(PARTITION_METAFILE):
            continue
        base, log = parse_base_file_name(name), parse_log_file_name(name)
        instant = base[2] if base else (log[1] if log else None)
        if instant is None or instant not in done:
            continue
        key = partition_key(posixpath.dirname(relative))
        records.setdefault(key, FilesRecord(key)).entries[name] = FileEntry(size)
    records[ALL_PARTITIONS_KEY] = FilesRecord(ALL_PARTITIONS_KEY, {key: FileEntry(0) for key in list(records)})
    return records


def initialize_files_partition(storage: Storage) -> None:
    """Build the files partition of a version 8/9 table that has no metadata table (see the module docstring)."""
    values = read_table_properties(storage).values
    update_table_properties(storage, {PARTITIONS_INFLIGHT: FILES_PARTITION, PARTITIONS: ""})
    storage.delete_dir(METADATA_FOLDER)   # what an interrupted initialisation left
    mdt = metadata_storage(storage)
    mdt.write_bytes(f"{METAFOLDER}/{PROPERTIES_FILE}", dump_properties(metadata_table_properties(values)))
    mdt.makedirs(f"{METAFOLDER}/timeline/history")
    mdt.write_bytes(f"{FILES_PARTITION}/{PARTITION_METAFILE}",
                    f"commitTime={INITIAL_INSTANT}\npartitionDepth=1\n".encode())
    schema = record_schema_json(values[C.TABLE_VERSION.key])
    records = committed_files(storage, Timeline.load(storage))
    requested = create_requested(mdt, INITIAL_INSTANT, DELTA_COMMIT)
    inflight = transition_to_inflight(mdt, requested, b"")
    name = base_file_name(INITIAL_INSTANT)
    data = base_file_bytes(records, schema, name)
    mdt.write_bytes(f"{FILES_PARTITION}/{name}", data)
    log = log_file_name(FILE_GROUP, INITIAL_INSTANT, 1, WRITE_TOKEN)
    write_log_file(mdt.fs, mdt.full(f"{FILES_PARTITION}/{log}"), [delete_block([], INITIAL_INSTANT)])
    stat = {"fileId": FILE_GROUP, "path": f"{FILES_PARTITION}/{name}", "prevCommit": "null",
            "numWrites": len(records), "numInserts": len(records), "numDeletes": 0, "numUpdateWrites": 0,
            "totalWriteBytes": len(data), "totalWriteErrors": 0, "partitionPath": FILES_PARTITION,
            "fileSizeInBytes": len(data)}
    transition_to_completed(mdt, inflight, {"partitionToWriteStats": {FILES_PARTITION: [stat]}, "compacted": False,
                                            "extraMetadata": {"schema": schema}, "operationType": "BULK_INSERT"})
    crash_point("metadata_table.initialize.before_ready")
    update_table_properties(storage, {PARTITIONS: FILES_PARTITION, PARTITIONS_INFLIGHT: ""})
