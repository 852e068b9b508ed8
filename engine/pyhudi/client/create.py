"""Creating an empty table, as Hudi's CREATE TABLE does (the SQL layer's CREATE TABLE ... USING hudi calls this):
hoodie.properties with the table's identity (keys, partitioning, key generator, payload) and its create schema, and
no instant. A write to a path without a table creates it itself (client/write.py)."""

from __future__ import annotations

from typing import Mapping

import pyarrow as pa

from pyhudi import config as C
from pyhudi.keygen import build_key_generator
from pyhudi.schema import storage_schema
from pyhudi.table import HudiTable
from pyhudi.writer.options import table_properties

# keys that a CREATE TABLE stores in hoodie.properties as given, beside the identity table_properties derives
_STORED_AS_GIVEN = (C.DATABASE_NAME.key, C.DROP_PARTITION_COLUMNS.key)


def create_table(path: str, options: Mapping[str, str], schema: pa.Schema, table_name: str) -> HudiTable:
    """A new, empty Hudi table at `path` with the data columns of `schema` and the table options `options`."""
    options = dict(options)
    keygen = build_key_generator(options, table_name)
    props = table_properties(options, keygen, storage_schema(schema, table_name=table_name))
    props.update({key: options[key] for key in _STORED_AS_GIVEN if key in options})
    if str(options.get(C.POPULATE_META_FIELDS.key, "true")).lower() == "false":
        props[C.POPULATE_META_FIELDS.key] = "false"
    return HudiTable.create(path, props)
