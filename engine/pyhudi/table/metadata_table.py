"""A table's metadata table (`.hoodie/metadata`, Hudi's MOR table of HFiles that lists files and indexes keys).

Every Java writer since 0.11 keeps one and lists files from it; a commit it does not know makes the next Java writer
miss files (duplicates, lost updates). pyhudi keeps the files partition of version 8/9 tables
(commit/metadata_table); on every other table, before any instant completes, it drops the metadata table exactly as Java Hudi's writer with hoodie.metadata.enable=false does
(HoodieTable.maybeDeleteMetadataTable -> HoodieTableMetadataUtil.deleteMetadataTable): first
hoodie.table.metadata.partitions (and .inflight) are cleared through the hoodie.properties update protocol, so no
reader uses the metadata table any more, then its folder is deleted. A crash between the two leaves a folder that no
reader uses; the next action deletes it. A Java writer with the metadata table enabled rebuilds it from the file
listing on its next commit.
"""

from __future__ import annotations

import warnings

from pyhudi import config as C
from pyhudi.storage import Storage
from pyhudi.table.properties import read_table_properties, update_table_properties
from pyhudi.testing import crash_point
from pyhudi.timeline import METAFOLDER

METADATA_FOLDER = f"{METAFOLDER}/metadata"
PARTITIONS = C.TABLE_METADATA_PARTITIONS.key
PARTITIONS_INFLIGHT = C.TABLE_METADATA_PARTITIONS_INFLIGHT.key


def metadata_partitions(values: dict[str, str]) -> list[str]:
    """The metadata table partitions hoodie.properties names as ready or being built."""
    names = f"{values.get(PARTITIONS) or ''},{values.get(PARTITIONS_INFLIGHT) or ''}"
    return sorted({name.strip() for name in names.split(",") if name.strip()})


_WHY = ("as Java Hudi's writer does with hoodie.metadata.enable=false: pyhudi keeps the metadata table of version 8 "
        "and 9 tables only. Java writers with the metadata table enabled rebuild it from the file listing")


def drop_metadata_table(storage: Storage, why: str = _WHY) -> bool:
    """Drop the table's metadata table if it has one (properties first, then the folder); True when it did. The
    warning says `why`."""
    try:
        values = read_table_properties(storage).values
    except FileNotFoundError:   # no hoodie.properties (a bare timeline): nothing can name a metadata table
        return False
    named = metadata_partitions(values)
    present = storage.exists(METADATA_FOLDER)
    if not named and not present:
        return False
    if named:
        update_table_properties(storage, {key: "" for key in (PARTITIONS, PARTITIONS_INFLIGHT) if key in values})
        crash_point("metadata_table.drop.after_properties")
    storage.delete_dir(METADATA_FOLDER)
    warnings.warn(f"table {values.get(C.TABLE_NAME.key)} at {storage.base_uri}: its metadata table "
                  f"({METADATA_FOLDER}{': ' + ', '.join(named) if named else ''}) was dropped, {why}", stacklevel=3)
    return True
