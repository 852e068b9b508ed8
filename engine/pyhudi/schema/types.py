"""Names and types shared by the schema modules: the meta columns, Avro name rules, Arrow -> Spark type
names, Spark DDL text, and the SchemaError text for unsupported types."""

from __future__ import annotations

import re

import pyarrow as pa

from pyhudi.errors import SchemaError
from pyhudi.schema.meta_fields import META_FIELDS, META_SET  # noqa: F401 - META_SET re-exported


META_COLUMNS = list(META_FIELDS)
AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
COMMENT = b"comment"
MAX_DECIMAL_PRECISION = 38  # Spark's DecimalType.MAX_PRECISION


# --------------------------------------------------------------------------------------------------------------
# names


def sanitize_avro_name(name: str) -> str:
    """Make ``name`` a legal Avro name the way Hudi's ``HoodieAvroUtils.sanitizeName`` does.

    An illegal first character (the first match of ``[^A-Za-z_]``) becomes ``__``, then every remaining
    character outside ``[A-Za-z0-9_]`` becomes ``__``.
    """
    if not name:
        raise SchemaError("a Hudi table needs a non-empty name to derive its Avro record name; fix: name the table")
    if re.match(r"[^A-Za-z_]", name[0]):
        name = re.sub(r"[^A-Za-z_]", "__", name, count=1)
    return re.sub(r"[^A-Za-z0-9_]", "__", name)


def record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """``("<table>_record", "hoodie.<table>")``: the top-level Avro record name and namespace Hudi uses."""
    name = sanitize_avro_name(table_name)
    return f"{name}_record", f"hoodie.{name}"


def decimal_fixed_size(precision: int) -> int:
    """Fewest bytes of a two's-complement ``fixed`` holding ``precision`` decimal digits (Spark's
    ``Decimal.minBytesForPrecision``)."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


# --------------------------------------------------------------------------------------------------------------
# helpers: Spark type names, error text


def _is(pred: str, t: pa.DataType) -> bool:
    fn = getattr(pa.types, pred, None)
    return bool(fn and fn(t))


def is_string(t: pa.DataType) -> bool:
    return _is("is_string", t) or _is("is_large_string", t) or _is("is_string_view", t)


def is_binary(t: pa.DataType) -> bool:
    return (_is("is_binary", t) or _is("is_large_binary", t) or _is("is_binary_view", t)
            or _is("is_fixed_size_binary", t))


def is_listlike(t: pa.DataType) -> bool:
    return (_is("is_list", t) or _is("is_large_list", t) or _is("is_fixed_size_list", t)
            or _is("is_list_view", t) or _is("is_large_list_view", t))


def is_decimal(t: pa.DataType) -> bool:
    return _is("is_decimal", t)


def spark_type_name(t: pa.DataType) -> str:
    """The Spark SQL type (DDL spelling) Spark uses for an Arrow type, e.g. ``BIGINT`` or ``ARRAY<STRING>``."""
    if isinstance(t, pa.DictionaryType):
        return spark_type_name(t.value_type)
    if isinstance(t, pa.ExtensionType):
        return spark_type_name(t.storage_type)
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int8(t):
        return "TINYINT"
    if pa.types.is_int16(t) or pa.types.is_uint8(t):
        return "SMALLINT"
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return "INT"
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return "BIGINT"
    if pa.types.is_uint64(t):
        return "DECIMAL(20,0)"
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if is_string(t):
        return "STRING"
    if is_binary(t):
        return "BINARY"
    if is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.tz else "TIMESTAMP_NTZ"
    if pa.types.is_null(t):
        return "VOID"
    if is_listlike(t):
        return f"ARRAY<{spark_type_name(t.value_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{spark_type_name(t.key_type)}, {spark_type_name(t.item_type)}>"
    if pa.types.is_struct(t):
        inner = ", ".join(ddl_field(t.field(i), struct=True) for i in range(t.num_fields))
        return f"STRUCT<{inner}>"
    raise SchemaError(f"Arrow type {t} has no Spark SQL equivalent; fix: cast the column to a Spark type "
                      f"(e.g. STRING or BIGINT)")


def describe(t: pa.DataType) -> str:
    try:
        spark = spark_type_name(t)
    except SchemaError:
        return f"Arrow {t}"
    return f"{spark} (Arrow {t})"


def table_prefix(table_name: str | None) -> str:
    return f"table `{table_name}`: " if table_name else ""


def unsupported(t: pa.DataType, where: str, table_name: str | None) -> SchemaError:
    if pa.types.is_uint64(t):
        fix = f"cast `{where}` to BIGINT (int64) or DECIMAL(20,0)"
        why = "Hudi (Avro) has no unsigned 64-bit integer"
    elif pa.types.is_time(t):
        fix = f"cast `{where}` to STRING, or to an INT/BIGINT of seconds or microseconds since midnight"
        why = "Spark and Hudi have no TIME type"
    elif pa.types.is_null(t):
        fix = f"give `{where}` a type, e.g. CAST(NULL AS STRING) AS `{where}`"
        why = "a column of type VOID (all nulls, no type) cannot be stored in parquet or Avro"
    elif is_decimal(t):
        fix = (f"cast `{where}` to DECIMAL({MAX_DECIMAL_PRECISION},{min(t.scale, MAX_DECIMAL_PRECISION)}) "
               "or to STRING")
        why = f"Spark decimals hold at most {MAX_DECIMAL_PRECISION} digits (and no negative scale)"
    elif pa.types.is_duration(t) or pa.types.is_interval(t):
        fix = f"cast `{where}` to BIGINT (e.g. microseconds) or STRING"
        why = "Hudi (Avro) has no interval type"
    elif pa.types.is_map(t):
        fix = f"cast the keys of `{where}` to STRING, or store it as an ARRAY of STRUCT<key, value>"
        why = f"Avro maps have string keys, not {spark_type_name(t.key_type) if safe_spark(t.key_type) else t.key_type}"
    else:
        fix = f"cast `{where}` to a supported type (STRING, BIGINT, DOUBLE, DECIMAL, ...)"
        why = "Hudi cannot store this type"
    return SchemaError(f"{table_prefix(table_name)}column `{where}` has type {describe(t)}: {why}. Fix: {fix}.")


def safe_spark(t: pa.DataType) -> bool:
    try:
        spark_type_name(t)
        return True
    except SchemaError:
        return False


# --------------------------------------------------------------------------------------------------------------
# Spark DDL


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ddl_field(f: pa.Field, struct: bool) -> str:
    sep = ": " if struct else " "
    out = f"{_quote(f.name)}{sep}{spark_type_name(f.type)}"
    if not f.nullable:
        out += " NOT NULL"
    comment = (f.metadata or {}).get(COMMENT)
    if comment is not None:
        out += f" COMMENT {_sql_string(comment.decode('utf-8'))}"
    return out


def spark_ddl(schema: pa.Schema) -> str:
    """A Spark DDL column list for ``schema``, e.g. ```id` INT NOT NULL, `s` STRUCT<`a`: STRING>``.

    Arrow types map to the Spark types Spark's own Arrow conversion uses (see :func:`spark_type_name`);
    names are backquoted; non-nullable columns and struct fields get NOT NULL; Arrow field metadata
    ``comment`` becomes COMMENT. (Spark DDL cannot say that array elements or map values are non-null.)
    """
    return ", ".join(ddl_field(f, struct=False) for f in schema)
