"""Upgrading a table to Hudi 1.x: version 6 to 8 or 9, and 8 to 9 (CALL upgrade_table, `pyhudi.upgrade_table`, and
a write that passes a higher hoodie.write.table.version while hoodie.write.auto.upgrade is true), as Java's
UpgradeDowngrade runs SixToEightUpgradeHandler and EightToNineUpgradeHandler:

1. Failed writes are rolled back (never a live one: a pending write whose heartbeat is fresh refuses the upgrade),
   and a merge-on-read table is compacted whole (pending compactions, then every slice with log files), as Java's
   rollbackFailedWritesAndCompact: Hudi 1.x slices log files by completion time, and a version 6 log file is
   named by its slice's base instant.
2. From version 6: a metadata table goes (pyhudi does not keep a version 6 one; dropped as Java's writer with it
   disabled drops it), then the timeline is copied into layout 2 and the archived timeline into the LSM history
   (commit/timeline_upgrade.py).
3. hoodie.properties names the new version in one replace, with the table properties Java's handlers add
   (layout 2, initial version 6, the record merge mode, the key generator type; on 9 the ordering fields).
4. The layout-1 files go, and with hoodie.metadata.enable (Hudi's default, true) the metadata table's files
   partition is built from the file listing, as a Java 1.x writer builds it.

A crash before step 3 leaves the table at its old version, whole (the next upgrade starts over); after it, at the
new version, with stray layout-1 files the next upgrade call removes. Downgrades are not written: Hudi's
downgrade_table does them.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import TYPE_CHECKING, Iterator, Mapping

from pyhudi import config as C
from pyhudi.client import compaction
from pyhudi.commit.metadata_table import can_build_files_partition, initialize_files_partition
from pyhudi.commit.timeline_upgrade import copy_archive_to_history, copy_timeline, remove_layout_1_files
from pyhudi.errors import ConfigError, TimelineError
from pyhudi.keygen import CUSTOM, PARTITIONPATH_FIELD, TYPE_TO_CLASS
from pyhudi.services.compaction.plan import UNBOUNDED_STRATEGY
from pyhudi.table import HudiTable
from pyhudi.table.metadata_table import drop_metadata_table
from pyhudi.table.properties import (HUDI_1X_TABLE_VERSIONS, TableProperties, at_table_version,
                                     update_table_properties)
from pyhudi.testing import crash_point
from pyhudi.timeline import LAYOUT_1, WRITE_ACTIONS, check_timeline_zone, layout_for
from pyhudi.transaction.heartbeat import is_heartbeat_expired
from pyhudi.transaction.service_guard import table_service_guard

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# HoodieTableVersion's names, as CALL upgrade_table's to_version takes them.
VERSION_NAMES = {"SIX": "6", "EIGHT": "8", "NINE": "9"}
_INITIAL_VERSION = "hoodie.table.initial.version"
_CLASS_TO_TYPE = {java_class: name for name, java_class in TYPE_TO_CLASS.items()}


def target_version(value: object, where: str) -> str:
    """"8", 8 or "EIGHT" (HoodieTableVersion's name) as "8"; ConfigError for a version pyhudi cannot write."""
    text = str(value).strip().upper()
    version = VERSION_NAMES.get(text, text)
    if version not in VERSION_NAMES.values():
        raise ConfigError(f"{where}: table version {value!r} is not one pyhudi writes; use 6, 8 or 9 (SIX, EIGHT, "
                          "NINE)")
    return version


def upgrade_table(spark: "SparkSession", path: str, to_version: object, options: Mapping[str, str] | None = None) -> bool:
    """Upgrade the table at `path` to `to_version` (see the module docstring); False when it already is at that
    version (stray files of an interrupted upgrade are removed then)."""
    options = C.normalize_options(dict(options or {}))
    table = HudiTable.load(str(path))
    where = f"table {table.name} at {table.storage.base_uri}"
    version = target_version(to_version, where)
    current = table.properties.version
    if version == current:
        _finish(table)
        return False
    if int(version) < int(current):
        raise ConfigError(f"{where} is version {current}; pyhudi does not downgrade tables to {version}. Write it "
                          "at its version (drop hoodie.write.table.version), or downgrade it with Hudi's "
                          f"downgrade_table procedure (Java)")
    table.check_writable("upgrade")
    if table.properties.is_mor:   # Java's rollbackFailedWritesAndCompact: no slice keeps log files
        compaction.compact(spark, table.storage.base_uri, "execute", options=options)
        compaction.compact(spark, table.storage.base_uri, "scheduleAndExecute",
                           options={**options, C.COMPACTION_STRATEGY.key: UNBOUNDED_STRATEGY})
    with _upgrade_guard(table, options):
        table = HudiTable.load(str(path))
        values = table.properties.values
        if current not in HUDI_1X_TABLE_VERSIONS:
            drop_metadata_table(table.storage, f"before the upgrade to version {version}; it is built again in "
                                               "that version's format")
            layout = layout_for("2", None, None)
            copy_timeline(table.storage, layout, check_timeline_zone(values.get(C.TIMELINE_TIMEZONE.key)))
            copy_archive_to_history(table.storage, layout)
        changes, remove = upgraded_properties(values, version, options)
        update_table_properties(table.storage, changes, remove)
        crash_point("upgrade.after_properties")
        upgraded = HudiTable.load(str(path))
        _finish(upgraded)
        if str(options.get(C.METADATA_ENABLE.key, "true")).strip().lower() != "false" \
                and can_build_files_partition(upgraded.properties.values):
            initialize_files_partition(upgraded.storage)
    return True


def upgraded_properties(values: Mapping[str, str], version: str,
                        options: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(keys to set, keys to drop) of hoodie.properties at `version`: a new table's properties at that version
    (table/properties.at_table_version), the initial version kept (6 for a version 6 table), the key generator's
    type named, a CustomKeyGenerator's typed partition fields from the write options (SevenToEightUpgradeHandler)."""
    payload = TableProperties(dict(values)).payload_class
    target = at_table_version(values, version, payload)
    target[_INITIAL_VERSION] = values.get(_INITIAL_VERSION) or values[C.TABLE_VERSION.key]
    keygen_type = _CLASS_TO_TYPE.get(str(values.get(C.TABLE_KEYGEN_CLASS.key) or "").strip())
    if keygen_type:
        target[C.TABLE_KEYGEN_TYPE.key] = keygen_type
    if keygen_type == CUSTOM and options.get(PARTITIONPATH_FIELD):
        target[C.TABLE_PARTITION_FIELDS.key] = str(options[PARTITIONPATH_FIELD])
    changes = {k: v for k, v in target.items() if values.get(k) != v}
    return changes, [k for k in values if k not in target]


@contextlib.contextmanager
def _upgrade_guard(table: HudiTable, options: Mapping[str, str]) -> Iterator[None]:
    """Failed writes rolled back and no live one pending; under optimistic concurrency control the table lock is
    held throughout (table_service_guard), as Java upgrades under the table lock."""
    with table_service_guard(table, options):
        live = [i.time for i in table.timeline().pending(WRITE_ACTIONS)
                if not is_heartbeat_expired(table.storage, i.time, options)]
        if live:
            raise TimelineError(f"table {table.name} at {table.storage.base_uri} has a write in progress (instant "
                                f"{', '.join(live)}); upgrade it when no writer runs")
        yield


def _finish(table: HudiTable) -> None:
    """Remove what an upgrade that stopped after hoodie.properties changed left of the layout-1 timeline."""
    if table.properties.timeline_layout_version == "2" and table.storage.list_files(LAYOUT_1.folder):
        remove_layout_1_files(table.storage)


def upgrade_if_asked(spark: "SparkSession", table: HudiTable, options: Mapping[str, str]) -> HudiTable:
    """A write's hoodie.write.table.version above its table's version: upgrade first (hoodie.write.auto.upgrade),
    or warn and write at the table's version (false), as Java's UpgradeDowngrade.needsUpgrade decides. The option
    is parsed as declared (6, 8 or 9) before anything is written: a bad value raises ConfigError, table untouched."""
    if not str(C.normalize_options(options).get(C.WRITE_TABLE_VERSION.key) or "").strip():
        return table
    asked = C.option(options, C.WRITE_TABLE_VERSION)
    current = table.properties.version
    if asked == current:
        _finish(table)   # what an interrupted upgrade to this version left
        return table
    if int(asked) < int(current or 0):
        return table   # refused as a downgrade by the write's checks (writer/options.check_identity)
    if not C.option(options, C.AUTO_UPGRADE):
        warnings.warn(f"table {table.name} at {table.storage.base_uri} stays at version {current}: "
                      f"{C.AUTO_UPGRADE.key}=false, so {C.WRITE_TABLE_VERSION.key}={asked} is not applied and the "
                      "write uses the table's version (as Hudi does)", stacklevel=3)
        return table
    upgrade_table(spark, table.storage.base_uri, asked, options)
    return HudiTable.load(table.storage.base_uri)


__all__ = ["VERSION_NAMES", "target_version", "upgrade_if_asked", "upgrade_table", "upgraded_properties"]
