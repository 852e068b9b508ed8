"""Table config: the keys of .hoodie/hoodie.properties (Hudi's HoodieTableConfig; hudi-rs config/table.rs) and
the table-identity write options (name, database, type) they are created from."""

from __future__ import annotations

from pyhudi.config.core import bool_value, declare, upper

# --- identity as write options --------------------------------------------------------------------------
TABLE_NAME = declare("hoodie.table.name", None, doc="Table name, stored in hoodie.properties.")
DATABASE_NAME = declare("hoodie.database.name", "default")
TABLE_TYPE = declare("hoodie.datasource.write.table.type", "COPY_ON_WRITE", upper,
                     ("COPY_ON_WRITE", "MERGE_ON_READ"))
TIMELINE_TIMEZONE = declare("hoodie.table.timeline.timezone", "LOCAL", upper, ("LOCAL", "UTC"),
                            doc="Table config: the zone instant times are written in (stored in hoodie.properties).")

# --- hoodie.properties (values are stored as text; readers parse what they use) --------------------------
TABLE_PROP_TYPE = declare("hoodie.table.type", "COPY_ON_WRITE", doc="COPY_ON_WRITE or MERGE_ON_READ.")
WRITE_TABLE_VERSION = declare("hoodie.write.table.version", "6", str, ("6", "8", "9"),
                              doc="The table version a write or CREATE TABLE creates a new table at: 6 (Hudi 0.14/0.15, "
                                  "pyhudi's default), 8 (Hudi 1.0) or 9 (Hudi 1.1). On an existing table "
                                  "of a lower version the write upgrades it first (hoodie.write.auto.upgrade); a "
                                  "lower one is refused.")
AUTO_UPGRADE = declare("hoodie.write.auto.upgrade", True, bool_value,
                       doc="When a write passes a hoodie.write.table.version above its table's version: true upgrades "
                           "the table first (6 -> 8 or 9, 8 -> 9, as Hudi's UpgradeDowngrade), false writes at the "
                           "table's version and warns.")
TABLE_VERSION = declare("hoodie.table.version", "6",
                        doc="Table format version: 5 and 6 (Hudi 0.x), 8 (Hudi 1.0), 9 (Hudi 1.1).")
TIMELINE_LAYOUT_VERSION = declare("hoodie.timeline.layout.version", "1",
                                  doc="1: instants in .hoodie/ named <time>.<action>; 2 (table versions 8 and 9): "
                                      "in .hoodie/<hoodie.timeline.path>, completed ones named "
                                      "<requested>_<completion>.<action>, their metadata in Avro.")
TIMELINE_PATH = declare("hoodie.timeline.path", "timeline",
                        doc="Timeline layout 2: the folder under .hoodie that holds the active timeline.")
TIMELINE_HISTORY_PATH = declare("hoodie.timeline.history.path", "history",
                                doc="Timeline layout 2: the folder under the timeline folder that holds the "
                                    "archived (LSM) timeline.")
TABLE_ORDERING_FIELDS = declare("hoodie.table.ordering.fields", None,
                                doc="Table version 9: the ordering (precombine) field(s); earlier versions store "
                                    "hoodie.table.precombine.field.")
RECORD_MERGE_MODE = declare("hoodie.record.merge.mode", None, upper,
                            ("EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING", "CUSTOM"),
                            doc="Table versions 8 and 9: how records of one key merge. EVENT_TIME_ORDERING keeps the "
                                "greatest ordering value (DefaultHoodieRecordPayload), COMMIT_TIME_ORDERING the "
                                "latest write (OverwriteWithLatestAvroPayload).")
ARCHIVELOG_FOLDER = declare("hoodie.archivelog.folder", "archived",
                            doc="Folder under .hoodie that holds the archived timeline.")
TABLE_CHECKSUM = declare("hoodie.table.checksum", None, doc="CRC32 of '<database>.<table>'.")
TABLE_METADATA_PARTITIONS = declare("hoodie.table.metadata.partitions", None,
                                    doc="Metadata table partitions ready for readers (files, column_stats, ...); "
                                        "pyhudi keeps files on version 8/9 tables (commit/metadata_table) and drops "
                                        "the metadata table elsewhere (table/metadata_table.py).")
TABLE_METADATA_PARTITIONS_INFLIGHT = declare("hoodie.table.metadata.partitions.inflight", None,
                                             doc="Metadata table partitions being built.")
TABLE_RECORDKEY_FIELDS = declare("hoodie.table.recordkey.fields", None)
TABLE_PARTITION_FIELDS = declare("hoodie.table.partition.fields", None)
TABLE_PRECOMBINE_FIELD = declare("hoodie.table.precombine.field", None)
TABLE_KEYGEN_CLASS = declare("hoodie.table.keygenerator.class", None)
TABLE_KEYGEN_TYPE = declare("hoodie.table.keygenerator.type", None)
TABLE_BASE_FILE_FORMAT = declare("hoodie.table.base.file.format", "PARQUET")
TABLE_CREATE_SCHEMA = declare("hoodie.table.create.schema", None, doc="Avro schema JSON of the table at creation.")
POPULATE_META_FIELDS = declare("hoodie.populate.meta.fields", True, bool_value,
                               doc="false: virtual keys (no _hoodie_* values written).")
