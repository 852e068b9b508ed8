"""Writer side of CDC: the `-cdc` log file a copy-on-write merge writes next to its new base file.

As Hudi's HoodieCDCLogger: a log file `.<fileId>_<instant>.log.1_<token>-cdc` in the file group's partition,
holding one CDC_DATA_BLOCK (Avro records, SCHEMA and INSTANT_TIME headers) whose records follow the table's
supplemental logging mode -- DATA_BEFORE_AFTER: op, ts_ms, before, after; DATA_BEFORE: op, record_key, before;
OP_KEY_ONLY: op, record_key. Images are the record without its meta fields. A new file group (all inserts)
gets no CDC log: readers infer its inserts from the base file (BASE_FILE_INSERT), as Hudi does.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.cdc import DELETE, INSERT, UPDATE
from pyhudi.file_group.log_block import BlockType, LogBlock, encode_avro_content
from pyhudi.file_group.naming import log_file_name, parse_log_file_name

CDC_SUFFIX = "-cdc"           # HoodieCDCUtils.CDC_LOGFILE_SUFFIX (0.14/0.15)
KEY = "_hoodie_record_key"
_NULL_STRING = ["null", "string"]
_OP_KEY_SCHEMA = {"type": "record", "name": "Record", "fields": [
    {"name": "op", "type": _NULL_STRING, "default": None},
    {"name": "record_key", "type": _NULL_STRING, "default": None}]}


def cdc_log_name(file_id: str, instant_time: str, token: str) -> str:
    return log_file_name(file_id, instant_time, 1, token) + CDC_SUFFIX


def parse_cdc_log_name(name: str) -> tuple[str, str, int, str] | None:
    """(file_id, base_instant, version, write_token) of a `-cdc` log file name, else None. The base instant is the
    commit that wrote it (also its new base file's): Hudi's file system view counts the file among that file
    slice's log files, so the cleaner, rollback and savepoints treat it with the slice."""
    if not name.endswith(CDC_SUFFIX):
        return None
    return parse_log_file_name(name[:-len(CDC_SUFFIX)])


def cdc_avro_schema(mode: str, table_avro_json: str) -> str:
    """Hudi's CDC log schema for `mode` (HoodieCDCUtils.schemaBySupplementalLoggingMode) around the table's
    record schema without meta fields."""
    if mode == "OP_KEY_ONLY":
        return json.dumps(_OP_KEY_SCHEMA)
    table = json.loads(table_avro_json)
    table = {**table, "fields": [f for f in table["fields"] if not f["name"].startswith("_hoodie_")]}
    namespace = table.get("namespace")
    full_name = f"{namespace}.{table['name']}" if namespace else table["name"]
    op = {"name": "op", "type": _NULL_STRING, "default": None}
    before = {"name": "before", "type": ["null", table], "default": None}
    if mode == "DATA_BEFORE_AFTER":
        fields = [op, {"name": "ts_ms", "type": _NULL_STRING, "default": None}, before,
                  {"name": "after", "type": ["null", full_name], "default": None}]
    else:
        fields = [op, {"name": "record_key", "type": _NULL_STRING, "default": None}, before]
    out = {"type": "record", "name": "CDC", "fields": fields}
    if namespace:
        out["namespace"] = namespace
    return json.dumps(out)


def cdc_block(mode: str, instant_time: str, table_avro_json: str, stored: pa.Table | None,
              written: pa.Table, final_keys: pa.Array, data_columns: list[str]) -> LogBlock | None:
    """The CDC_DATA_BLOCK of a merge: `stored` the file group's records before, `written` the records this
    commit wrote (inserts and new versions), `final_keys` every key the new base file holds. None: no change."""
    stored_keys = stored[KEY].combine_chunks() if stored is not None else pa.array([], pa.string())
    known = pc.is_in(written[KEY], value_set=stored_keys)
    inserted = written.filter(pc.invert(known))
    updated = written.filter(known)
    deleted = stored.filter(pc.invert(pc.is_in(stored[KEY], value_set=final_keys))) if stored is not None \
        else None
    previous = stored.take(pc.index_in(updated[KEY], value_set=stored_keys)) if updated.num_rows else None
    schema_json = cdc_avro_schema(mode, table_avro_json)
    parts = [(INSERT, None, inserted), (UPDATE, previous, updated), (DELETE, deleted, None)]
    tables = [_records(mode, op, instant_time, before, after, data_columns) for op, before, after in parts
              if (after if after is not None else before) is not None
              and (after if after is not None else before).num_rows]
    if not tables:
        return None
    records = pa.concat_tables(tables)
    header = {"INSTANT_TIME": instant_time, "SCHEMA": schema_json}
    return LogBlock(BlockType.CDC_DATA_BLOCK, header, {}, content=encode_avro_content(records, schema_json))


def _records(mode: str, op: str, instant: str, before: pa.Table | None, after: pa.Table | None,
             data_columns: list[str]) -> pa.Table:
    rows = after if after is not None else before
    n = rows.num_rows
    columns = {"op": pa.repeat(pa.scalar(op), n)}
    if mode == "DATA_BEFORE_AFTER":
        columns["ts_ms"] = pa.repeat(pa.scalar(instant), n)
    else:
        columns["record_key"] = rows[KEY].combine_chunks()
    if mode != "OP_KEY_ONLY":
        columns["before"] = _image(before, data_columns, n, rows if before is None else None)
    if mode == "DATA_BEFORE_AFTER":
        columns["after"] = _image(after, data_columns, n, rows if after is None else None)
    return pa.table(columns)


def _image(table: pa.Table | None, data_columns: list[str], n: int, like: pa.Table | None) -> pa.Array:
    """The records' data columns as a struct column (all null when the image is absent)."""
    source = table if table is not None else like
    arrays = [source[c].combine_chunks() for c in data_columns]
    fields = [source.schema.field(c) for c in data_columns]
    mask = pa.array([table is None] * n, pa.bool_())
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=mask)


def cdc_stats_json(stats: dict[str, int] | None) -> str | None:
    """The write stat's cdcStats ({relative path: size}) as the stats row carries it."""
    return json.dumps(stats) if stats else None
