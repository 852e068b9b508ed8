"""Schemas: Arrow <-> Hudi's Avro writer schema, the storage (parquet) form, and write-time evolution.

Hudi keeps a table's schema as **Avro JSON**: every completed commit carries the writer schema (without the
five meta columns) in ``extraMetadata.schema``, and ``hoodie.properties`` keeps the schema of CREATE TABLE in
``hoodie.table.create.schema``.  Java Hudi derives both from a Spark ``StructType`` with Spark's
``SchemaConverters.toAvroType`` (Hudi keeps a copy of it) and, for commits, Hudi's
``AvroConversionUtils.convertStructTypeToAvroSchema``, which moves ``null`` first in every union and gives
nullable fields ``"default": null``.  pyhudi receives Spark data as Arrow, so this module reproduces those
conversions from Arrow types, byte for byte:

* top-level record ``<table>_record`` in namespace ``hoodie.<table>`` (the table name sanitised as by
  ``HoodieAvroUtils.sanitizeName``);
* a nested struct becomes a record named after its field, in namespace ``<full name of the parent record>``;
  array elements and map values reuse the field's name and namespace;
* ``decimal(p, s)`` becomes ``fixed`` named ``fixed`` in namespace ``<parent full name>.<field>``, of the fewest
  bytes that hold ``p`` digits, with ``logicalType: decimal``;
* nullable types are ``["null", T]`` (commits) or ``[T, "null"]`` (create schema);
* byte/short -> ``int``; date -> ``int``/``date``; timestamp -> ``long``/``timestamp-micros``;
  timestamp without time zone (Spark ``TIMESTAMP_NTZ``) -> ``long``/``local-timestamp-micros``.

Arrow -> Spark type correspondence used throughout (it is what Spark's own Arrow conversion produces):
int8 TINYINT, int16 SMALLINT, int32 INT, int64 BIGINT, float32 FLOAT, float64 DOUBLE, (large_)string STRING,
(large_)binary BINARY, decimal DECIMAL, date32 DATE, timestamp with tz TIMESTAMP, timestamp without tz
TIMESTAMP_NTZ, list ARRAY, map MAP, struct STRUCT.

The *storage schema* is the Arrow schema of the data as parquet-avro stores it (what a reader gets back from a
Java-written base file): int8/int16 -> int32, every timestamp -> microseconds (UTC when it has a zone),
large/view strings and binaries -> string/binary, date64 -> date32, decimal -> decimal128, lists with an
``element`` item, maps with a non-null string key.  pyhudi writes base files in this form.

Known differences with Java-written files, on purpose: parquet-avro writes lists in the legacy 2-level layout
(repeated ``array`` group, elements never null), pyhudi (like Spark's own writer) writes the standard 3-level
layout, which keeps the element's nullability; every Hudi reader reads both.

Modules, one concept each: ``types`` (meta columns, Avro names, Spark type names and DDL), ``storage`` (storage schema),
``to_avro`` (Arrow -> Avro), ``from_avro`` (Avro -> Arrow), ``cast`` (data into a storage schema), ``evolution``
(write-time compatibility). Import from ``pyhudi.schema``.
"""

from __future__ import annotations

from pyhudi.schema.cast import to_storage
from pyhudi.schema.evolution import check_compatible
from pyhudi.schema.from_avro import avro_to_arrow
from pyhudi.schema.storage import storage_schema, with_meta_columns
from pyhudi.schema.to_avro import arrow_to_avro, avro_json, create_table_avro, with_meta_fields_avro
from pyhudi.schema.types import (MAX_DECIMAL_PRECISION, META_COLUMNS, decimal_fixed_size, record_name_and_namespace,
                                 sanitize_avro_name, spark_ddl, spark_type_name)

__all__ = [
    "META_COLUMNS",
    "arrow_to_avro",
    "avro_to_arrow",
    "storage_schema",
    "to_storage",
    "with_meta_columns",
    "check_compatible",
    "spark_ddl",
    "create_table_avro",
    "avro_json",
    "with_meta_fields_avro",
    "record_name_and_namespace",
    "sanitize_avro_name",
    "decimal_fixed_size",
    "spark_type_name",
    "MAX_DECIMAL_PRECISION",
]
