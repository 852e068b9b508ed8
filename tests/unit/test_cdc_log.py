"""The -cdc log a CDC table's merge writes, without Spark: Hudi's file name, block type and the Avro schema
of each supplemental logging mode (HoodieCDCUtils), and records that round-trip through the log file."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from pyhudi.cdc.logging import cdc_avro_schema, cdc_block, cdc_log_name
from pyhudi.file_group.log_block import BlockType, decode_avro_content
from pyhudi.file_group.log_file import read_log_file, write_log_file
from pyhudi.file_group.naming import parse_log_file_name

TABLE = json.dumps({"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
    {"name": "_hoodie_commit_time", "type": ["null", "string"], "default": None},
    {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"], "default": None}]})
INSTANT = "20240101000000000"


def _rows(keys, names, commit="c0"):
    return pa.table({"_hoodie_commit_time": pa.array([commit] * len(keys), pa.string()),
                     "_hoodie_record_key": pa.array([str(k) for k in keys], pa.string()),
                     "id": pa.array(keys, pa.int64()), "name": pa.array(names, pa.string())})


def test_name_is_hudis_and_not_a_data_log_file():
    name = cdc_log_name("abc-0", INSTANT, "1-2-3")
    assert name == f".abc-0_{INSTANT}.log.1_1-2-3-cdc"
    assert parse_log_file_name(name) is None       # readers of data log files skip it


@pytest.mark.parametrize("mode,fields", [("DATA_BEFORE_AFTER", ["op", "ts_ms", "before", "after"]),
                                         ("DATA_BEFORE", ["op", "record_key", "before"]),
                                         ("OP_KEY_ONLY", ["op", "record_key"])])
def test_schema_per_mode(mode, fields):
    schema = json.loads(cdc_avro_schema(mode, TABLE))
    assert [f["name"] for f in schema["fields"]] == fields
    assert all(f["default"] is None and f["type"][0] == "null" for f in schema["fields"])
    if mode != "OP_KEY_ONLY":
        image = schema["fields"][2]["type"][1]
        assert schema["name"] == "CDC" and schema["namespace"] == "hoodie.t"
        assert [f["name"] for f in image["fields"]] == ["id", "name"]          # meta fields removed
    if mode == "DATA_BEFORE_AFTER":
        assert schema["fields"][3]["type"] == ["null", "hoodie.t.t_record"]   # a reference, not a redefinition


def test_block_round_trips(tmp_path):
    stored = _rows([1, 2, 3], ["a", "b", "c"])
    written = _rows([4, 2], ["d", "b2"], INSTANT)
    block = cdc_block("DATA_BEFORE_AFTER", INSTANT, TABLE, stored, written, pa.array(["1", "2", "4"]), ["id", "name"])
    path = str(tmp_path / cdc_log_name("abc-0", INSTANT, "0-1-1"))
    write_log_file(pafs.LocalFileSystem(), path, [block])
    (read,) = list(read_log_file(pafs.LocalFileSystem(), path))
    assert read.block_type == BlockType.CDC_DATA_BLOCK and read.header["INSTANT_TIME"] == INSTANT
    records = decode_avro_content(read.content, read.header["SCHEMA"]).to_pylist()
    assert sorted((r["op"], json.dumps(r["before"]), json.dumps(r["after"])) for r in records) == sorted([
        ("i", "null", json.dumps({"id": 4, "name": "d"})),
        ("u", json.dumps({"id": 2, "name": "b"}), json.dumps({"id": 2, "name": "b2"})),
        ("d", json.dumps({"id": 3, "name": "c"}), "null")])
    assert all(r["ts_ms"] == INSTANT for r in records)


def test_no_change_no_block():
    stored = _rows([1], ["a"])
    assert cdc_block("OP_KEY_ONLY", INSTANT, TABLE, stored, _rows([], []), pa.array(["1"]), ["id", "name"]) is None
