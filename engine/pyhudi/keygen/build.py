"""Building the KeyGenerator of a write from its options and the table's properties (type resolution as Hudi does)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.errors import ConfigError
from pyhudi.keygen import joda
from pyhudi.keygen.timestamp import TIME_UNITS, TIMESTAMP_TYPES, TimestampOptions, split_input_formats
from pyhudi.keygen.generator import KeyGenerator, SimplePart, TimestampPart
from pyhudi.keygen.options import (AVRO_CLASSES, CLASS_TO_TYPE, COMPLEX, COMPLEX_KEYGEN_NEW_ENCODING_ALIASES,
                                   COMPLEX_KEYGEN_NEW_ENCODING_DEFAULT, CONSISTENT_LOGICAL_TIMESTAMP, CUSTOM,
                                   GLOBAL_DELETE, HIVE_STYLE_PARTITIONING, KEYGENERATOR_CLASS, KEYGENERATOR_TYPE,
                                   KEYGEN_PACKAGE, NON_PARTITION, PARTITIONPATH_FIELD, RECORDKEY_FIELD, SIMPLE,
                                   SQL_KEYGEN_CLASS, SQL_ORIGIN_KEYGEN_CLASS, SQL_PARTITION_SCHEMA,
                                   TABLE_KEYGENERATOR_CLASS, TABLE_KEYGENERATOR_TYPE, TABLE_PARTITION_FIELDS,
                                   TABLE_RECORDKEY_FIELDS, TIMESTAMP, TIMESTAMP_INPUT_FORMAT,
                                   TIMESTAMP_INPUT_FORMAT_DELIMITER, TIMESTAMP_INPUT_TIMEZONE,
                                   TIMESTAMP_OUTPUT_FORMAT, TIMESTAMP_OUTPUT_TIMEZONE, TIMESTAMP_PREFIXES,
                                   TIMESTAMP_SCALAR_UNIT, TIMESTAMP_TIMEZONE, TIMESTAMP_TYPE, TYPE_TO_CLASS,
                                   URL_ENCODE_PARTITIONING, bool_option, first_option, split_fields, table_label)


# ---------------------------------------------------------------------------------------------- building


def _ts_option(options: dict, key: str) -> str | None:
    suffix = key[len(TIMESTAMP_PREFIXES[0]):]
    return first_option(options, *(prefix + suffix for prefix in TIMESTAMP_PREFIXES))


def _ts_has(options: dict, key: str) -> bool:
    suffix = key[len(TIMESTAMP_PREFIXES[0]):]
    return any(prefix + suffix in options for prefix in TIMESTAMP_PREFIXES)


def _timestamp_options(options: dict, consistent: bool, table_name: str | None) -> TimestampOptions:
    where = table_label(table_name)
    ts_type = (_ts_option(options, TIMESTAMP_TYPE) or "").strip().upper()
    if not ts_type:
        raise ConfigError(f"{where}: the timestamp-based key generator needs {TIMESTAMP_TYPE} "
                          f"(one of {', '.join(TIMESTAMP_TYPES)}).")
    if ts_type not in TIMESTAMP_TYPES:
        raise ConfigError(f"{where}: {TIMESTAMP_TYPE}={ts_type!r} is not one of {', '.join(TIMESTAMP_TYPES)}.")
    unit = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS",
            "EPOCHMICROSECONDS": "MICROSECONDS"}.get(ts_type)
    if ts_type == "SCALAR":
        unit = (_ts_option(options, TIMESTAMP_SCALAR_UNIT) or "SECONDS").strip().upper()
        if unit not in TIME_UNITS:
            raise ConfigError(f"{where}: {TIMESTAMP_SCALAR_UNIT}={unit!r} is not a java TimeUnit; use one of "
                              f"{', '.join(TIME_UNITS)}.")
    output_format = _ts_option(options, TIMESTAMP_OUTPUT_FORMAT)
    if not output_format:
        raise ConfigError(f"{where}: the timestamp-based key generator needs {TIMESTAMP_OUTPUT_FORMAT} "
                          "(a Joda pattern such as yyyy/MM/dd).")
    try:
        joda.tokenize(output_format)
    except joda.PatternError as exc:
        raise ConfigError(f"{where}: {TIMESTAMP_OUTPUT_FORMAT}: {exc}.") from None
    input_formats: tuple[str, ...] = ()
    if ts_type in ("DATE_STRING", "MIXED"):
        raw = _ts_option(options, TIMESTAMP_INPUT_FORMAT) or ""
        delimiter = (_ts_option(options, TIMESTAMP_INPUT_FORMAT_DELIMITER) or "").strip() or ","
        input_formats = tuple(f for f in split_input_formats(raw, delimiter) if f)
        if not input_formats:
            raise ConfigError(f"{where}: {TIMESTAMP_TYPE}={ts_type} needs {TIMESTAMP_INPUT_FORMAT} "
                              "(Joda patterns such as yyyy-MM-dd'T'HH:mm:ss.SSSZ, comma separated).")
        for fmt in input_formats:
            try:
                joda.compile_input(fmt)
            except joda.PatternError as exc:
                raise ConfigError(f"{where}: {TIMESTAMP_INPUT_FORMAT}: {exc}.") from None
    if _ts_has(options, TIMESTAMP_TIMEZONE):
        zone_text = _ts_option(options, TIMESTAMP_TIMEZONE)
        input_text = output_text = zone_text
        zone_key = TIMESTAMP_TIMEZONE
    else:
        input_text = _ts_option(options, TIMESTAMP_INPUT_TIMEZONE)
        output_text = _ts_option(options, TIMESTAMP_OUTPUT_TIMEZONE)
        zone_key = None
    zones = []
    for text, key in ((input_text, zone_key or TIMESTAMP_INPUT_TIMEZONE),
                      (output_text, zone_key or TIMESTAMP_OUTPUT_TIMEZONE)):
        try:
            zones.append(joda.resolve_zone(text))
        except joda.ZoneError:
            raise ConfigError(
                f"{where}: {key}={text!r} is not a time zone Java knows (Java would silently use GMT). Use an "
                "IANA id such as 'UTC', 'Asia/Shanghai', or a fixed offset such as 'GMT+8:00'.") from None
    return TimestampOptions(ts_type, unit, input_formats, zones[0], output_format, zones[1], consistent)


def _resolve_type(options: dict, record_key_fields: list[str], partition_raw: str,
                  table_name: str | None) -> tuple[str, str]:
    """(key generator type, java class) from the class option, the type option, or Hudi's inference."""
    where = table_label(table_name)
    cls = first_option(options, KEYGENERATOR_CLASS, TABLE_KEYGENERATOR_CLASS)
    cls = cls.strip() if cls else None
    if cls == SQL_KEYGEN_CLASS:
        cls = (first_option(options, SQL_ORIGIN_KEYGEN_CLASS) or "").strip() or None
    if cls:
        full = cls if "." in cls else KEYGEN_PACKAGE + cls
        if full not in CLASS_TO_TYPE:
            raise ConfigError(
                f"{where}: key generator class '{cls}' is not supported by pyhudi. Use one of "
                f"{', '.join(sorted(TYPE_TO_CLASS.values()))} (or set {KEYGENERATOR_TYPE}).")
        return CLASS_TO_TYPE[full], full
    typ = first_option(options, KEYGENERATOR_TYPE, TABLE_KEYGENERATOR_TYPE)
    if typ and typ.strip():
        name = typ.strip().upper()
        avro = name.endswith("_AVRO")
        base = name[:-5] if avro else name
        if base not in TYPE_TO_CLASS:
            raise ConfigError(f"{where}: {KEYGENERATOR_TYPE}={typ!r} is not one of "
                              f"{', '.join(TYPE_TO_CLASS)}.")
        return base, (AVRO_CLASSES if avro else TYPE_TO_CLASS)[base]
    # KeyGenUtils.inferKeyGeneratorType
    partition_fields = [p.strip() for p in partition_raw.split(",")] if partition_raw.strip() else []
    if not partition_fields:
        inferred = NON_PARTITION
    elif ":" in partition_fields[0]:
        inferred = CUSTOM
    elif len(partition_fields) == 1:
        inferred = COMPLEX if len(record_key_fields) > 1 else SIMPLE
    else:
        inferred = COMPLEX
    return inferred, TYPE_TO_CLASS[inferred]


def build_key_generator(options: dict[str, str], table_name: str | None = None) -> KeyGenerator:
    """A key generator configured from Hudi datasource options (or ``hoodie.properties`` keys).

    Reads ``hoodie.datasource.write.{recordkey.field, partitionpath.field, keygenerator.class, keygenerator.type,
    hive_style_partitioning, partitionpath.urlencode, keygenerator.consistent.logical.timestamp.enabled}``, the
    ``hoodie.keygen.timebased.*`` settings, ``hoodie.write.complex.keygen.new.encoding``, and falls back to the
    ``hoodie.table.{recordkey.fields, partition.fields, keygenerator.class, keygenerator.type}`` keys of
    ``hoodie.properties``. Without a class or type the generator is inferred as Hudi does: no partition field ->
    Nonpartitioned; ``field:type`` partition fields -> Custom; several record key or partition fields -> Complex;
    else Simple. Raises :class:`~pyhudi.errors.ConfigError` for inconsistent settings.
    """
    options = {k: v for k, v in (options or {}).items() if v is not None}
    where = table_label(table_name)
    record_key_fields = split_fields(first_option(options, RECORDKEY_FIELD, TABLE_RECORDKEY_FIELDS))
    partition_raw = first_option(options, PARTITIONPATH_FIELD, TABLE_PARTITION_FIELDS) or ""
    ktype, java_class = _resolve_type(options, record_key_fields, partition_raw, table_name)
    hive = bool_option(options, HIVE_STYLE_PARTITIONING, False, table_name)
    encode = bool_option(options, URL_ENCODE_PARTITIONING, False, table_name)
    consistent = bool_option(options, CONSISTENT_LOGICAL_TIMESTAMP, False, table_name)
    new_encoding = COMPLEX_KEYGEN_NEW_ENCODING_DEFAULT
    for key in COMPLEX_KEYGEN_NEW_ENCODING_ALIASES:
        if key in options:
            new_encoding = bool_option(options, key, COMPLEX_KEYGEN_NEW_ENCODING_DEFAULT, table_name)
            break
    partition_fields = split_fields(partition_raw)
    class_name = java_class.rsplit(".", 1)[-1]

    if ktype in (SIMPLE, TIMESTAMP):
        if len(record_key_fields) > 1:
            raise ConfigError(
                f"{where}: {class_name} takes one record key field but {RECORDKEY_FIELD} lists "
                f"{len(record_key_fields)} ({', '.join(record_key_fields)}); use "
                f"org.apache.hudi.keygen.ComplexKeyGenerator (or CustomKeyGenerator) for composite keys.")
        if len(partition_fields) != 1:
            raise ConfigError(
                f"{where}: {class_name} takes exactly one partition field but {PARTITIONPATH_FIELD} lists "
                f"{len(partition_fields)}; use ComplexKeyGenerator for several fields, NonpartitionedKeyGenerator "
                f"for none.")
        if ":" in partition_fields[0]:
            raise ConfigError(f"{where}: partition field '{partition_fields[0]}' has a ':type' suffix, which only "
                              f"org.apache.hudi.keygen.CustomKeyGenerator understands.")
    if ktype == SIMPLE:
        parts = [SimplePart(partition_fields[0])]
        mode = "simple"
    elif ktype == TIMESTAMP:
        parts = [TimestampPart(partition_fields[0], _timestamp_options(options, consistent, table_name))]
        mode = "simple"
    elif ktype == COMPLEX:
        for field in partition_fields:
            if ":" in field:
                raise ConfigError(f"{where}: partition field '{field}' has a ':type' suffix, which only "
                                  f"org.apache.hudi.keygen.CustomKeyGenerator understands.")
        parts = [SimplePart(f) for f in partition_fields]
        mode = "simple" if len(record_key_fields) == 1 and new_encoding else "composite"
    elif ktype == NON_PARTITION:
        parts = []
        mode = "simple" if len(record_key_fields) == 1 else "composite"
    elif ktype == GLOBAL_DELETE:
        parts = []
        mode = "composite"
    else:  # CUSTOM
        parts = []
        timestamp_options = None
        for field in partition_fields:
            name, sep, kind = field.partition(":")
            kind = kind.strip().upper()
            if not sep or not name.strip() or ":" in kind:
                raise ConfigError(
                    f"{where}: CustomKeyGenerator needs partition fields as field:type, e.g. "
                    f"'region:simple,ts:timestamp'; got '{field}' in {PARTITIONPATH_FIELD}.")
            if kind == "SIMPLE":
                parts.append(SimplePart(name.strip()))
            elif kind == "TIMESTAMP":
                if timestamp_options is None:
                    timestamp_options = _timestamp_options(options, consistent, table_name)
                parts.append(TimestampPart(name.strip(), timestamp_options))
            else:
                raise ConfigError(f"{where}: partition type '{kind}' in '{field}' is not SIMPLE or TIMESTAMP.")
        mode = "simple" if len(record_key_fields) == 1 else "composite"

    sql_parts: tuple[int, ...] = ()
    sql_count = 0
    if str(options.get(KEYGENERATOR_CLASS, "")).strip() == SQL_KEYGEN_CLASS and options.get(SQL_PARTITION_SCHEMA):
        schema = _ddl_fields(str(options[SQL_PARTITION_SCHEMA]))
        sql_count = len(schema)
        sql_parts = tuple(i for i, (_, typ) in enumerate(schema) if i < len(parts) and typ == "TIMESTAMP")
    return KeyGenerator(
        java_class=java_class, key_generator_type=ktype, record_key_fields=record_key_fields,
        record_key_mode=mode, parts=parts, hive_style_partitioning=hive, url_encode_partition_path=encode,
        consistent_logical_timestamp=consistent, table_name=table_name, sql_timestamp_parts=sql_parts,
        sql_partition_count=sql_count)


def _ddl_fields(ddl: str) -> list[tuple[str, str]]:
    """``(name, TYPE)`` of a Spark DDL field list such as ```ts` TIMESTAMP, amount DECIMAL(10,2)``."""
    fields, depth, current = [], 0, []
    for ch in ddl + ",":
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            text = "".join(current).strip()
            current = []
            if text:
                if text.startswith("`"):
                    end = text.index("`", 1)
                    name, rest = text[1:end], text[end + 1:]
                else:
                    name, _, rest = text.partition(" ")
                fields.append((name, rest.strip().split(" ")[0].split("(")[0].upper().rstrip(":")))
            continue
        current.append(ch)
    return fields


def auto_record_keys(instant_time: str, partition_id: int, first_row: int, count: int) -> pa.StringArray:
    """Record keys Hudi generates when no record key field is set: ``<instant>_<sparkPartitionId>_<rowId>``."""
    ids = pa.array(np.arange(first_row, first_row + count, dtype=np.int64)).cast(pa.string())
    return pc.binary_join_element_wise(pa.scalar(f"{instant_time}_{partition_id}_"), ids, "")
