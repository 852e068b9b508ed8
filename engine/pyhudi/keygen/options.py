"""The key generators' options (Hudi's keys, the timestamp family, table properties the SQL layer writes), the
key generator class names and types, and the small parsers of those options."""

from __future__ import annotations

from pyhudi.errors import ConfigError


# ---------------------------------------------------------------------------------------------- option keys

RECORDKEY_FIELD = "hoodie.datasource.write.recordkey.field"
PARTITIONPATH_FIELD = "hoodie.datasource.write.partitionpath.field"
KEYGENERATOR_CLASS = "hoodie.datasource.write.keygenerator.class"
KEYGENERATOR_TYPE = "hoodie.datasource.write.keygenerator.type"
HIVE_STYLE_PARTITIONING = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE_PARTITIONING = "hoodie.datasource.write.partitionpath.urlencode"
CONSISTENT_LOGICAL_TIMESTAMP = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"
#: ``true``: a ComplexKeyGenerator with ONE record key field writes the bare value (Hudi 0.14.1, 0.15.0, 1.0.0-1.0.2);
#: ``false``: it writes ``field:value`` (Hudi <= 0.14.0, and the default again from 0.14.2 / 0.15.1 / 1.1.0).
COMPLEX_KEYGEN_NEW_ENCODING = "hoodie.write.complex.keygen.new.encoding"
COMPLEX_KEYGEN_NEW_ENCODING_ALIASES = (COMPLEX_KEYGEN_NEW_ENCODING,
                                       "hoodie.datasource.write.complex.keygen.new.encoding")
#: pyhudi writes like Hudi 0.15.0 unless told otherwise (see the report in the package docstring).
COMPLEX_KEYGEN_NEW_ENCODING_DEFAULT = True

# the same settings as hoodie.properties stores them
TABLE_RECORDKEY_FIELDS = "hoodie.table.recordkey.fields"
TABLE_PARTITION_FIELDS = "hoodie.table.partition.fields"
TABLE_KEYGENERATOR_CLASS = "hoodie.table.keygenerator.class"
TABLE_KEYGENERATOR_TYPE = "hoodie.table.keygenerator.type"
SQL_ORIGIN_KEYGEN_CLASS = "hoodie.sql.origin.keygen.class"
SQL_PARTITION_SCHEMA = "hoodie.sql.partition.schema"

TIMESTAMP_PREFIXES = ("hoodie.keygen.timebased.", "hoodie.deltastreamer.keygen.timebased.")
TIMESTAMP_TYPE = "hoodie.keygen.timebased.timestamp.type"
TIMESTAMP_SCALAR_UNIT = "hoodie.keygen.timebased.timestamp.scalar.time.unit"
TIMESTAMP_INPUT_FORMAT = "hoodie.keygen.timebased.input.dateformat"
TIMESTAMP_INPUT_FORMAT_DELIMITER = "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex"
TIMESTAMP_TIMEZONE = "hoodie.keygen.timebased.timezone"
TIMESTAMP_INPUT_TIMEZONE = "hoodie.keygen.timebased.input.timezone"
TIMESTAMP_OUTPUT_FORMAT = "hoodie.keygen.timebased.output.dateformat"
TIMESTAMP_OUTPUT_TIMEZONE = "hoodie.keygen.timebased.output.timezone"

NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"

# ---------------------------------------------------------------------------------------------- class names

SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP, CUSTOM, GLOBAL_DELETE = (
    "SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE")

KEYGEN_PACKAGE = "org.apache.hudi.keygen."
TYPE_TO_CLASS = {
    SIMPLE: KEYGEN_PACKAGE + "SimpleKeyGenerator",
    COMPLEX: KEYGEN_PACKAGE + "ComplexKeyGenerator",
    NON_PARTITION: KEYGEN_PACKAGE + "NonpartitionedKeyGenerator",
    TIMESTAMP: KEYGEN_PACKAGE + "TimestampBasedKeyGenerator",
    CUSTOM: KEYGEN_PACKAGE + "CustomKeyGenerator",
    GLOBAL_DELETE: KEYGEN_PACKAGE + "GlobalDeleteKeyGenerator",
}
AVRO_CLASSES = {
    SIMPLE: KEYGEN_PACKAGE + "SimpleAvroKeyGenerator",
    COMPLEX: KEYGEN_PACKAGE + "ComplexAvroKeyGenerator",
    NON_PARTITION: KEYGEN_PACKAGE + "NonpartitionedAvroKeyGenerator",
    TIMESTAMP: KEYGEN_PACKAGE + "TimestampBasedAvroKeyGenerator",
    CUSTOM: KEYGEN_PACKAGE + "CustomAvroKeyGenerator",
    GLOBAL_DELETE: KEYGEN_PACKAGE + "GlobalAvroDeleteKeyGenerator",
}
CLASS_TO_TYPE = {**{c: t for t, c in TYPE_TO_CLASS.items()}, **{c: t for t, c in AVRO_CLASSES.items()}}
SQL_KEYGEN_CLASS = "org.apache.spark.sql.hudi.command.SqlKeyGenerator"


def table_label(table_name: str | None) -> str:
    return f"table '{table_name}'" if table_name else "the table"


def split_fields(value: str | None) -> list[str]:
    """Hudi's ``StringUtils.split(value, ",")``: trimmed, empty entries dropped."""
    if value is None:
        return []
    return [part.strip() for part in str(value).split(",") if part.strip()]


def bool_option(options: dict, key: str, default: bool, table_name: str | None) -> bool:
    raw = options.get(key)
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"{table_label(table_name)}: option {key}={raw!r} is not a boolean; use 'true' or 'false'.")


def first_option(options: dict, *keys: str) -> str | None:
    for key in keys:
        value = options.get(key)
        if value is not None:
            return str(value)
    return None
