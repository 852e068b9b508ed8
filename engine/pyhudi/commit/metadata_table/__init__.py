"""The metadata table (`.hoodie/metadata`): Hudi's MOR table of HFiles that lists a table's files (and indexes its
keys), which every Java writer since 0.11 keeps and lists files from. pyhudi keeps its `files` partition on
version 8 and 9 tables in each instant's commit protocol (sync.py) and drops it on every other table
(table/metadata_table.py). One module per concern: records (HoodieMetadataRecord), changes (an instant's
records), files_slice (the partition's state), deltacommit (writing and undoing one), compaction, clean, archive,
options (their settings, from the data writer's), initialize (building the partition from the file listing), sync."""

from __future__ import annotations

from pyhudi import config as C
from pyhudi.commit.metadata_table.deltacommit import undo_deltacommit
from pyhudi.commit.metadata_table.initialize import initialize_files_partition
from pyhudi.commit.metadata_table.options import MetadataTableOptions
from pyhudi.commit.metadata_table.records import FILES_PARTITION
from pyhudi.commit.metadata_table.sync import maintained, metadata_storage, sync_metadata_table
from pyhudi.storage import Storage
from pyhudi.table.properties import HUDI_1X_TABLE_VERSIONS


def can_build_files_partition(values: dict[str, str]) -> bool:
    """A version 8/9 table without a ready files partition: pyhudi can build one (initialize.py)."""
    return values.get(C.TABLE_VERSION.key) in HUDI_1X_TABLE_VERSIONS and not maintained(values)


def undo_metadata_deltacommit(storage: Storage, instant_time: str) -> bool:
    """Undo the metadata delta commit of a data instant that will not complete (its abort), if there is one."""
    mdt = metadata_storage(storage)
    if not mdt.exists(FILES_PARTITION):
        return False
    return undo_deltacommit(mdt, instant_time)


__all__ = ["MetadataTableOptions", "can_build_files_partition", "initialize_files_partition", "maintained",
           "metadata_storage", "sync_metadata_table", "undo_metadata_deltacommit"]
