"""Write options and validation, before anything is written: Hudi's option defaults resolved against the table,
the batch's fields checked against the key generator, the table's identity and schema checked, and the
hoodie.properties of a new table."""

from __future__ import annotations

import warnings

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from pyhudi import config as C
from pyhudi import errors
from pyhudi.cdc import cdc_table_properties
from pyhudi.errors import ConfigError, RecordKeyError, SchemaError
from pyhudi.file_group.base_file import META_COLUMNS
from pyhudi.index import check_table_index, index_spec
from pyhudi.index import table_properties as index_table_properties
from pyhudi.merge import SUPPORTED_PAYLOADS
from pyhudi.schema import avro_json, avro_to_arrow, check_compatible, create_table_avro, storage_schema
from pyhudi.schema.meta_fields import PARTITION_PATH as PARTITION_PATH_META
from pyhudi.schema.meta_fields import RECORD_KEY as RECORD_KEY_META
from pyhudi.table import COPY_ON_WRITE, HudiTable
from pyhudi.table.properties import HUDI_1X_TABLE_VERSIONS, at_table_version
from pyhudi.writer import virtual_keys
from pyhudi.writer.file_writer import DELETE_COLUMN

# An upsert's per-row delete flag (true: the row deletes its key), as Hudi's MERGE INTO decides per row in one
# commit. Not a table column: left out of the table schema, never written to files; it joins _hoodie_is_deleted
# where the write decides deletes.
DELETE_FLAG_COLUMN = DELETE_COLUMN

SUPPORTED_OPERATIONS = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table",
                        "delete_partition")
# Operations that need no record key (Hudi generates keys for tables created without one).
AUTO_KEY_OPERATIONS = ("insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table", "delete_partition")


def check_identity(table: HudiTable, path: str, options: dict) -> dict:
    """Options may not contradict the table's identity (key fields, partition fields, table type)."""
    props = table.properties
    check_table_index(table, options)   # a BUCKET table's layout is part of its identity
    checks = {
        C.RECORD_KEY.key: ",".join(props.record_key_fields),
        C.PARTITION_PATH.key: ",".join(props.partition_fields),
        C.TABLE_TYPE.key: props.table_type,
    }
    for key, table_value in checks.items():
        given = options.get(key)
        if key == C.TABLE_TYPE.key and given is not None:
            given = given.upper()   # the enum name, as stored
        if given is not None and norm_list(given) != norm_list(table_value):
            raise ConfigError(f"table {props.name} at {path} has {key}={table_value!r} but the write "
                              f"passes {given!r}; drop the option or write with mode='overwrite' to recreate "
                              "the table")
    asked = str(options.get(C.WRITE_TABLE_VERSION.key) or "").strip()
    if asked.isdigit() and props.version.isdigit() and int(asked) < int(props.version):
        # a higher version upgrades the table first (client/upgrade.py, hoodie.write.auto.upgrade)
        raise ConfigError(f"table {props.name} at {path} is version {props.version} but the write passes "
                          f"{C.WRITE_TABLE_VERSION.key}={asked}; pyhudi does not downgrade tables. Drop the option "
                          "to write the table at its version, or downgrade it with Hudi's downgrade_table procedure")
    return options


def target_schema(incoming: DataFrame, table: HudiTable | None, table_name: str, operation: str) -> pa.Schema:
    """The schema the write stores: the batch's, checked against (and widened to) the table's latest."""
    batch_schema = storage_schema(arrow_schema(incoming.schema), table_name=table_name)
    avro = table.latest_avro_schema() if table is not None else None
    if avro is None:
        return batch_schema
    if operation == "delete":   # a delete batch may carry only the key fields
        return avro_to_arrow(avro)
    return check_compatible(avro_to_arrow(avro), batch_schema, table_name)


def data_columns(incoming: DataFrame, operation: str, table_name: str) -> DataFrame:
    """The batch's data columns: the upsert's DELETE_FLAG_COLUMN (a boolean) and the PREPPED_* key columns are
    not among them."""
    prepped = [c for c in PREPPED_COLUMNS if c in incoming.columns]
    if prepped:
        incoming = incoming.drop(*prepped)
    if DELETE_FLAG_COLUMN not in incoming.columns:
        return incoming
    if operation != "upsert":
        raise SchemaError(f"column {DELETE_FLAG_COLUMN} of the batch written to table {table_name} is the upsert's "
                          f"per-row delete flag, but the operation is {operation}; use {C.OPERATION.key}=upsert "
                          "or drop the column")
    flag_type = incoming.schema[DELETE_FLAG_COLUMN].dataType
    if not isinstance(flag_type, T.BooleanType):
        raise SchemaError(f"column {DELETE_FLAG_COLUMN} of the batch written to table {table_name} is the upsert's "
                          f"per-row delete flag and must be boolean, not {flag_type.simpleString()}; cast it")
    return incoming.drop(DELETE_FLAG_COLUMN)


def norm_list(text: str) -> str:
    """Comparable form of a field list: trimmed, and without CustomKeyGenerator's ':type' suffixes."""
    return ",".join(part.split(":")[0].strip() for part in str(text).split(",") if part.strip())


def resolve_write_options(config: C.HoodieConfig, incoming: DataFrame, table: HudiTable | None) -> C.WriteConfig:
    """The write's WriteConfig, parsed once from `config` and resolved against the table: its name, Hudi's
    default ordering field `ts` for a new table, the payload (option, else the table's, else Hudi's default);
    refuses what no write can do (no table name, no record key for a keyed operation, a MOR ordering field
    that differs from the precombine field)."""
    wc = C.WriteConfig.from_options(config)
    name = wc.table_name or (table.name if table else None)
    if not name:
        raise ConfigError(f"option {C.TABLE_NAME.key} is required to create a table; pass e.g. "
                          f"{{'{C.TABLE_NAME.key}': 'trips'}}")
    resolved = {"table_name": name}
    if not wc.record_key_field and wc.operation not in AUTO_KEY_OPERATIONS \
            and PREPPED_KEY_COLUMN not in incoming.columns:
        raise ConfigError(f"table {name} has no record key, so {C.OPERATION.key}={wc.operation} cannot find the "
                          f"records to change; set {C.RECORD_KEY.key} (SQL: primaryKey) to the column(s) that "
                          f"identify a record, or use one of {', '.join(AUTO_KEY_OPERATIONS)}")
    if not wc.precombine_field and table is None and "ts" in incoming.columns:
        resolved["precombine_field"] = "ts"   # Hudi's default ordering field
    payload = wc.payload_class if wc.given("payload_class") else \
        table.properties.payload_class if table else C.PAYLOAD_CLASS.default
    if payload not in SUPPORTED_PAYLOADS:
        raise ConfigError(f"{C.PAYLOAD_CLASS.key}={payload} is not supported; use one of "
                          f"{', '.join(SUPPORTED_PAYLOADS)}")
    resolved["payload_class"] = payload
    wc = wc.with_values(**resolved)
    ordering = wc.payload_ordering_field
    is_mor = table.properties.is_mor if table else wc.table_type == "MERGE_ON_READ"
    if ordering and is_mor and ordering != wc.precombine_field:
        # MOR reads and compaction order log records against base records by the table's precombine field
        raise ConfigError(f"{C.PAYLOAD_ORDERING_FIELD.key}={ordering} differs from the precombine field "
                          f"{wc.precombine_field!r} of merge-on-read table {name}, whose readers order by "
                          f"the precombine field; drop the option or set {C.PRECOMBINE.key}={ordering}")
    version = table.properties.version if table else str(wc.write_table_version)
    if wc.metadata_enable and wc.given("metadata_enable") and version not in HUDI_1X_TABLE_VERSIONS:
        warnings.warn(f"{C.METADATA_ENABLE.key}=true is ignored on table version {version}: pyhudi keeps the "
                      "metadata table (its files partition) of version 8 and 9 tables only; this table's metadata "
                      "table is dropped before pyhudi commits, as Java Hudi does with it disabled, and Java writers "
                      f"rebuild it. To keep it, upgrade the table ({C.WRITE_TABLE_VERSION.key}=8, or CALL "
                      "upgrade_table)", stacklevel=4)
    return wc


def check_fields(incoming: DataFrame, keygen, wc: C.WriteConfig) -> None:
    columns = {c.lower() for c in incoming.columns}
    name = wc.table_name
    available = ", ".join(incoming.columns)
    for field in keygen.record_key_fields:
        if field.split(".")[0].lower() not in columns:
            raise RecordKeyError(f"record key field {field!r} of table {name} is not in the batch "
                                 f"(columns: {available}); add it or fix {C.RECORD_KEY.key}")
    for field in keygen.partition_path_fields:
        if field.split(".")[0].lower() not in columns:
            raise errors.PartitionPathError(f"partition path field {field!r} of table {name} is not in the batch "
                                            f"(columns: {available}); add it or fix {C.PARTITION_PATH.key}")
    precombine = wc.precombine_field
    if precombine and wc.operation != "delete" and precombine.lower() not in columns:
        raise SchemaError(f"precombine field {precombine!r} of table {name} is not in the batch "
                          f"(columns: {available}); add it or set {C.PRECOMBINE.key}")


def table_properties(resolved: dict, keygen, schema: pa.Schema) -> dict:
    props = {
        C.TABLE_NAME.key: resolved[C.TABLE_NAME.key],
        C.TABLE_PROP_TYPE.key: (resolved.get(C.TABLE_TYPE.key) or COPY_ON_WRITE).upper(),   # Hudi's enum name
        C.TABLE_KEYGEN_CLASS.key: keygen.java_class,
        C.HIVE_STYLE.key: resolved.get(C.HIVE_STYLE.key, "false").lower(),
        C.URL_ENCODE.key: resolved.get(C.URL_ENCODE.key, "false").lower(),
        C.DROP_PARTITION_COLUMNS.key: "false",
        C.TABLE_BASE_FILE_FORMAT.key: C.TABLE_BASE_FILE_FORMAT.default,
        C.POPULATE_META_FIELDS.key: "false" if virtual_keys.wanted(resolved) else "true",
        C.TABLE_CREATE_SCHEMA.key: avro_json(create_table_avro(schema, resolved[C.TABLE_NAME.key])),
    }
    if keygen.record_key_fields:   # Hudi omits the key of a table with auto-generated record keys
        props[C.TABLE_RECORDKEY_FIELDS.key] = ",".join(keygen.record_key_fields)
    if keygen.partition_path_fields:   # plain names, also for CustomKeyGenerator's "field:type" form
        props[C.TABLE_PARTITION_FIELDS.key] = ",".join(keygen.partition_path_fields)
    if resolved.get(C.PRECOMBINE.key):
        props[C.TABLE_PRECOMBINE_FIELD.key] = resolved[C.PRECOMBINE.key]
    if props[C.TABLE_PROP_TYPE.key] == "MERGE_ON_READ":
        props[C.COMPACTION_PAYLOAD_CLASS.key] = resolved[C.PAYLOAD_CLASS.key]
    props.update({k: v for k, v in resolved.items() if k.startswith("hoodie.keygen.")})
    config = C.HoodieConfig(resolved, warn_unknown=False)
    props.update(cdc_table_properties(config))
    spec = index_spec(config, keygen.record_key_fields, props[C.TABLE_NAME.key])
    if virtual_keys.wanted(resolved):   # refused before the table exists
        virtual_keys.check(props[C.TABLE_NAME.key], keygen, props[C.TABLE_PROP_TYPE.key], spec.type)
    props.update(index_table_properties(spec))
    wc = C.WriteConfig.from_options(config)
    return at_table_version(props, wc.write_table_version, wc.payload_class)


# A write to a table without a record key that changes stored records (an SQL UPDATE, DELETE or MERGE): each row
# carries its stored _hoodie_record_key / _hoodie_partition_path (null for a new row), renamed to these staging
# columns, and is keyed by them (Hudi's prepped writes of key-less tables).
PREPPED_KEY_COLUMN = "_pyhudi_prepped_key"
PREPPED_PARTITION_COLUMN = "_pyhudi_prepped_partition"
PREPPED_COLUMNS = (PREPPED_KEY_COLUMN, PREPPED_PARTITION_COLUMN)


def drop_meta_columns(df: DataFrame, keep_keys: bool = False) -> DataFrame:
    """The batch without Hudi's meta columns; `keep_keys`: the stored key and partition path stay as the staging
    PREPPED_* columns."""
    present = [c for c in df.columns if c in META_COLUMNS]
    if keep_keys and RECORD_KEY_META in present and PARTITION_PATH_META in present:
        df = df.withColumnRenamed(RECORD_KEY_META, PREPPED_KEY_COLUMN) \
            .withColumnRenamed(PARTITION_PATH_META, PREPPED_PARTITION_COLUMN)
        present = [c for c in present if c not in (RECORD_KEY_META, PARTITION_PATH_META)]
    return df.drop(*present) if present else df


def arrow_schema(spark_schema: T.StructType) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema
    return to_arrow_schema(spark_schema, timezone="UTC", prefers_large_types=False)


def spark_schema(arrow_schema: pa.Schema) -> T.StructType:
    from pyspark.sql.pandas.types import from_arrow_schema
    return from_arrow_schema(arrow_schema)
