"""The key generators' options (Hudi's keys, the timestamp family, table properties the SQL layer writes), the
key generator class names and types, and the small parsers of those options."""

from __future__ import annotations

from pyhudi import config as C
from pyhudi.errors import ConfigError


# ---------------------------------------------------------------------------------------------- option keys
# declared once (Hudi's key, default, doc) in pyhudi.config; the key generators use the key strings

RECORDKEY_FIELD = C.RECORD_KEY.key
PARTITIONPATH_FIELD = C.PARTITION_PATH.key
KEYGENERATOR_CLASS = C.KEYGEN_CLASS.key
KEYGENERATOR_TYPE = C.KEYGEN_TYPE.key
HIVE_STYLE_PARTITIONING = C.HIVE_STYLE.key
URL_ENCODE_PARTITIONING = C.URL_ENCODE.key
CONSISTENT_LOGICAL_TIMESTAMP = C.CONSISTENT_LOGICAL_TIMESTAMP.key
COMPLEX_KEYGEN_NEW_ENCODING = C.COMPLEX_KEYGEN_NEW_ENCODING.key
COMPLEX_KEYGEN_NEW_ENCODING_ALIASES = (COMPLEX_KEYGEN_NEW_ENCODING, C.COMPLEX_KEYGEN_NEW_ENCODING_LEGACY.key)
COMPLEX_KEYGEN_NEW_ENCODING_DEFAULT = C.COMPLEX_KEYGEN_NEW_ENCODING.default

# the same settings as hoodie.properties stores them
TABLE_RECORDKEY_FIELDS = C.TABLE_RECORDKEY_FIELDS.key
TABLE_PARTITION_FIELDS = C.TABLE_PARTITION_FIELDS.key
TABLE_KEYGENERATOR_CLASS = C.TABLE_KEYGEN_CLASS.key
TABLE_KEYGENERATOR_TYPE = C.TABLE_KEYGEN_TYPE.key
SQL_ORIGIN_KEYGEN_CLASS = C.SQL_ORIGIN_KEYGEN_CLASS.key
SQL_PARTITION_SCHEMA = C.SQL_PARTITION_SCHEMA.key

TIMESTAMP_PREFIXES = C.TIMESTAMP_PREFIXES
TIMESTAMP_TYPE = C.TIMESTAMP_TYPE.key
TIMESTAMP_SCALAR_UNIT = C.TIMESTAMP_SCALAR_UNIT.key
TIMESTAMP_INPUT_FORMAT = C.TIMESTAMP_INPUT_FORMAT.key
TIMESTAMP_INPUT_FORMAT_DELIMITER = C.TIMESTAMP_INPUT_FORMAT_DELIMITER.key
TIMESTAMP_TIMEZONE = C.TIMESTAMP_TIMEZONE.key
TIMESTAMP_INPUT_TIMEZONE = C.TIMESTAMP_INPUT_TIMEZONE.key
TIMESTAMP_OUTPUT_FORMAT = C.TIMESTAMP_OUTPUT_FORMAT.key
TIMESTAMP_OUTPUT_TIMEZONE = C.TIMESTAMP_OUTPUT_TIMEZONE.key

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
