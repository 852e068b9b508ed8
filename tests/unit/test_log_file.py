"""Hudi log files (merge-on-read): reading Java-written fixtures, byte-exact re-encoding, round trips, corruption."""

from __future__ import annotations

import datetime as dt
import decimal
import glob
import json
import os
import shutil
import struct
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from support import FIXTURES, fixture_table

from pyhudi.errors import CorruptFileError, PyHudiError, SchemaError
from pyhudi.file_group import log_file as lf
from pyhudi.file_group.log_block import (
    ORDERING_VAL_BRANCHES,
    natural_delete,
    avro_schema_to_arrow,
    decode_delete_content,
    encode_delete_content,
)
from pyhudi.file_group.log_file import (
    BlockType,
    CorruptLogBlockWarning,
    DeleteRecord,
    LogAppendNotSupportedError,
    LogBlock,
    LogFileExistsError,
    LogFileNameError,
    append_log_blocks,
    avro_data_block,
    delete_block,
    encode_block,
    log_file_name,
    parquet_data_block,
    parse_log_file_path,
    read_log_bytes,
    read_log_file,
    rollback_command_block,
    rollover_log_file_name,
    write_log_file,
)

TABLES = sorted(p.stem for p in FIXTURES.glob("mor_parquet_v6_*.zip")) + \
    sorted(p.stem for p in FIXTURES.glob("qs_mor_avro_v6_*.zip"))
LOCAL = pafs.LocalFileSystem()


# ---------------------------------------------------------------------------------------------------------------
# Fixture tables
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    """Each fixture zip unzipped into its own temporary folder; name -> table root."""
    if not TABLES:
        pytest.skip(f"no fixture tables under {FIXTURES}")
    return {name: fixture_table(name, tmp_path_factory) for name in TABLES}


def _log_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob(".*.log.*") if ".hoodie" not in p.relative_to(root).parts)


def _timeline(root: Path) -> dict[str, set[str]]:
    """Completed instants by action (timeline layout 1: .hoodie/<ts>.<action>)."""
    actions: dict[str, set[str]] = {}
    for p in (root / ".hoodie").iterdir():
        parts = p.name.split(".")
        if len(parts) == 2 and parts[0].isdigit():
            actions.setdefault(parts[1], set()).add(parts[0])
    return actions


def _write_stats(root: Path) -> dict[str, tuple[str, dict]]:
    """Log file relative path -> (deltacommit instant, its write stat)."""
    stats = {}
    for ts in _timeline(root).get("deltacommit", ()):
        meta = json.loads((root / ".hoodie" / f"{ts}.deltacommit").read_text())
        for entries in meta["partitionToWriteStats"].values():
            for stat in entries:
                if ".log." in stat["path"]:
                    stats[stat["path"]] = (ts, stat)
    return stats


# What each table's .sql implies for its log files: (relative log path pattern, block type, instant, details).
EXPECTED = {
    "mor_parquet_v6_nonpartitioned": [
        # 2nd INSERT updates id=1 (isActive false) -> parquet log block; id=4 goes to a new file group.
        (".d206069c-*.log.1_*", BlockType.PARQUET_DATA_BLOCK, "20250117083136333",
         {"keys": ["1"], "isActive": [False], "partition": [""]}),
    ],
    "mor_parquet_v6_nonpartitioned_rollback": [
        # 2nd INSERT (id=1 update) -> log.1; rolled back -> command block in log.2; 3rd INSERT (id=2) -> log.3.
        (".0712b9f9-*.log.1_*", BlockType.PARQUET_DATA_BLOCK, "20250126040826878",
         {"keys": ["1"], "isActive": [False], "rolled_back": True}),
        (".0712b9f9-*.log.2_1-0-1", BlockType.COMMAND_BLOCK, "20250126040936578",
         {"target": "20250126040826878"}),
        (".0712b9f9-*.log.3_*", BlockType.PARQUET_DATA_BLOCK, "20250126060846931",
         {"keys": ["2"], "isActive": [True]}),
    ],
    "mor_parquet_v6_simplekeygen_nonhivestyle": [
        (".26e33b7b-*.log.1_*", BlockType.PARQUET_DATA_BLOCK, "20250121000557095",
         {"keys": ["1"], "isActive": [False], "partition": ["10"]}),
    ],
    "mor_parquet_v6_simplekeygen_nonhivestyle_overwritetable": [
        (".92e64357-*.log.1_*", BlockType.PARQUET_DATA_BLOCK, "20250121000656060",
         {"keys": ["1"], "isActive": [False], "partition": ["10"]}),
    ],
    "qs_mor_avro_v6_trips_8i1u": [
        # UPDATE fare = 25.0 WHERE rider = 'rider-D' -> one avro record.
        (".d0304c53-*.log.1_*", BlockType.AVRO_DATA_BLOCK, "20250331030645735",
         {"keys": ["9909a8b1-2d15-4d3d-8ec9-efc48c536a00"], "rider": ["rider-D"], "fare": [25.0],
          "partition": ["city=san_francisco"]}),
    ],
    "qs_mor_avro_v6_trips_8i3d": [
        # DELETE rider in (A, C, D): all three live in san_francisco -> one delete block of 3 keys.
        (".6d3d1d6e-*.log.1_*", BlockType.DELETE_BLOCK, "20250618054714114",
         {"delete_keys": {"334e26e9-8355-45cc-97c6-c31daf0df330", "e96c4396-3fad-413a-a942-4cb36106d721",
                          "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"},
          "partition": "city=san_francisco"}),
    ],
}


@pytest.mark.parametrize("table", TABLES)
def test_fixture_log_files_match_sql_and_timeline(tables, table):
    root = tables[table]
    timeline = _timeline(root)
    stats = _write_stats(root)
    logs = _log_files(root)
    expected = EXPECTED[table]
    assert len(logs) == len(expected), [p.name for p in logs]

    rolled_back = set()
    for log in logs:
        for block in read_log_file(LOCAL, str(log)):
            if block.is_rollback:
                rolled_back.add(block.target_instant_time)

    for pattern, block_type, instant, details in expected:
        matches = [p for p in logs if p.match(pattern)]
        assert len(matches) == 1, (pattern, [p.name for p in logs])
        log = matches[0]
        file_id, base_instant, version, token = parse_log_file_path(log.name)
        assert log.name == log_file_name(file_id, base_instant, version, token)
        blocks = list(read_log_file(LOCAL, str(log)))
        assert [b.block_type for b in blocks] == [block_type]
        block = blocks[0]
        assert block.instant_time == instant
        assert block.offset == 0 and block.length == log.stat().st_size
        assert block.footer == {}

        rel = str(log.relative_to(root))
        if details.get("rolled_back"):
            # The deltacommit was rolled back: gone from the timeline, voided by a command block.
            assert instant not in timeline.get("deltacommit", set())
            assert instant in rolled_back
        elif block_type == BlockType.COMMAND_BLOCK:
            assert instant in timeline["rollback"]
            assert block.command == "ROLLBACK_BLOCK"
            assert block.header["COMMAND_BLOCK_TYPE"] == "0"
            assert block.target_instant_time == details["target"]
            assert block.records is None and block.delete_keys is None
            # the rollback metadata names the same instant
            import fastavro
            with open(root / ".hoodie" / f"{instant}.rollback", "rb") as fh:
                meta = next(iter(fastavro.reader(fh)))
            assert meta["commitsRollback"] == [details["target"]]
        else:
            # A completed deltacommit wrote this log file: its stats agree with the blocks.
            commit, stat = stats[rel]
            assert commit == instant and instant in timeline["deltacommit"]
            assert stat["fileSizeInBytes"] == log.stat().st_size
            assert stat["logVersion"] == version
            if block_type == BlockType.DELETE_BLOCK:
                assert stat["numDeletes"] == len(block.delete_keys)
            else:
                assert stat["numWrites"] == block.num_records

        if "keys" in details:
            records = block.records
            assert records.column_names[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                                "_hoodie_partition_path", "_hoodie_file_name"]
            assert records.column("_hoodie_record_key").to_pylist() == details["keys"]
            assert set(records.column("_hoodie_commit_time").to_pylist()) == {instant}
            assert set(records.column("_hoodie_file_name").to_pylist()) == {file_id}
            for column in ("isActive", "rider", "fare"):
                if column in details:
                    assert records.column(column).to_pylist() == details[column]
            if "partition" in details:
                assert records.column("_hoodie_partition_path").to_pylist() == details["partition"]
            # the SCHEMA header is the records' Avro schema, meta fields first
            schema = json.loads(block.schema)
            assert [f["name"] for f in schema["fields"]] == records.column_names
        if "delete_keys" in details:
            keys = block.delete_keys
            assert {k.record_key for k in keys} == details["delete_keys"]
            assert {k.partition_path for k in keys} == {details["partition"]}
            # Spark SQL DELETE writes the natural ordering value, Integer 0, in the IntWrapper branch
            assert {(k.ordering_val, k.ordering_type_name) for k in keys} == {(0, "int")}
            assert json.loads(block.schema)["name"] == "v6_trips_8i3d_record"


def _reencode(block: LogBlock) -> LogBlock:
    """A new block built by pyhudi's factories from the decoded payload of ``block`` (header order kept)."""
    if block.block_type == BlockType.AVRO_DATA_BLOCK:
        new = avro_data_block(block.records, block.instant_time, block.schema)
    elif block.block_type == BlockType.PARQUET_DATA_BLOCK:
        new = parquet_data_block(block.records, block.instant_time, block.schema)
    elif block.block_type == BlockType.DELETE_BLOCK:
        # keys as the writer passes a delete operation's keys: no ordering value, i.e. the natural Integer 0
        ts_type = next(f["type"] for f in json.loads(block.schema)["fields"] if f["name"] == "ts")
        new = delete_block([natural_delete(k.record_key, k.partition_path) for k in block.delete_keys],
                           block.instant_time, ts_type, block.schema)
    elif block.block_type == BlockType.COMMAND_BLOCK:
        new = rollback_command_block(block.instant_time, block.target_instant_time)
    else:
        raise AssertionError(block.block_type)
    # Java serializes the header HashMap in identity-hash order; keep the file's order to compare bytes.
    assert set(new.header) == set(block.header)
    new.header = dict(block.header)
    return new


@pytest.mark.parametrize("table", TABLES)
def test_fixture_blocks_reencode(tables, table):
    for log in _log_files(tables[table]):
        original = log.read_bytes()
        for block in read_log_file(LOCAL, str(log)):
            new = _reencode(block)
            data = encode_block(new)
            if block.block_type == BlockType.PARQUET_DATA_BLOCK:
                # parquet bytes depend on the parquet writer: compare what a reader gets back
                again = list(read_log_bytes(data))
                assert len(again) == 1 and again[0].header == block.header
                assert again[0].records.equals(block.records.replace_schema_metadata(None), check_metadata=False)
                assert again[0].records.to_pylist() == block.records.to_pylist()
            else:
                assert data == original[block.offset:block.offset + block.length], log.name


def test_fixture_single_block_files_rewrite_byte_exact(tables, tmp_path):
    checked = 0
    for table in TABLES:
        for log in _log_files(tables[table]):
            blocks = list(read_log_file(LOCAL, str(log)))
            if any(b.block_type == BlockType.PARQUET_DATA_BLOCK for b in blocks):
                continue
            out = tmp_path / table / log.name
            size = write_log_file(LOCAL, str(out), [_reencode(b) for b in blocks])
            assert out.read_bytes() == log.read_bytes() and size == log.stat().st_size
            checked += 1
    assert checked == 3    # avro data block, delete block, rollback command block


def test_fixture_reads_with_tiny_buffers(tables, monkeypatch):
    """Headers larger than the first read, and chunked magic scanning, take the same paths as large files."""
    monkeypatch.setattr(lf, "_PREFIX_READ", 16)
    monkeypatch.setattr(lf, "_SCAN_CHUNK", 7)
    for table in TABLES:
        for log in _log_files(tables[table]):
            def summary(blocks):
                return [(b.header, b.footer, b.delete_keys, b.command,
                         None if b.records is None else b.records.to_pylist()) for b in blocks]
            small = summary(read_log_file(LOCAL, str(log)))
            monkeypatch.setattr(lf, "_PREFIX_READ", 1 << 20)
            assert small == summary(read_log_bytes(log.read_bytes()))
            monkeypatch.setattr(lf, "_PREFIX_READ", 16)


def test_decode_false_reads_headers_only(tables):
    for table in TABLES:
        for log in _log_files(tables[table]):
            for block in read_log_file(LOCAL, str(log), decode=False):
                assert block.records is None and block.delete_keys is None
                assert block.instant_time
                if block.block_type == BlockType.COMMAND_BLOCK:
                    assert block.is_rollback


def test_hudi_rs_reads_log_files_written_by_pyhudi(tables, tmp_path):
    """Replace the Java-written log files with pyhudi-written ones (parquet or avro blocks, all blocks of the file
    group in one file built by write + append): hudi-rs returns the same snapshot."""
    hudi = pytest.importorskip("hudi")

    def snapshot(path):
        table = hudi.HudiTableBuilder.from_base_uri(str(path)).build()
        rows = pa.Table.from_batches(table.read()).to_pylist()
        return sorted(rows, key=lambda r: (r["_hoodie_record_key"], r["_hoodie_commit_time"]))

    for table in ("mor_parquet_v6_nonpartitioned_rollback", "qs_mor_avro_v6_trips_8i1u", "qs_mor_avro_v6_trips_8i3d"):
        for data_block in (parquet_data_block, avro_data_block):
            root = tmp_path / f"{table}-{data_block.__name__}"
            shutil.copytree(tables[table], root)
            expected = snapshot(root)
            logs = _log_files(root)
            blocks = [b for log in logs for b in read_log_file(LOCAL, str(log))]
            blocks.sort(key=lambda b: b.instant_time)    # data, rollback, data: the order Hudi appended them
            rewritten = []
            for b in blocks:
                if b.records is not None:
                    rewritten.append(data_block(b.records, b.instant_time, b.schema))
                else:
                    rewritten.append(_reencode(b))
            for log in logs:
                log.unlink()
            target = logs[0].parent / log_file_name(*parse_log_file_path(logs[0].name)[:2], 1, "0-1-2")
            write_log_file(LOCAL, str(target), rewritten[:1])
            if len(rewritten) > 1:
                append_log_blocks(LOCAL, str(target), rewritten[1:])
            assert [b.block_type for b in read_log_file(LOCAL, str(target))] == [b.block_type for b in rewritten]
            assert snapshot(root) == expected, (table, data_block.__name__)


# ---------------------------------------------------------------------------------------------------------------
# Round trips of blocks pyhudi writes
# ---------------------------------------------------------------------------------------------------------------

RICH_SCHEMA = json.dumps({
    "type": "record", "name": "t_record", "namespace": "hoodie.t",
    "fields": [
        {"name": "_hoodie_commit_time", "type": ["null", "string"], "doc": "", "default": None},
        {"name": "_hoodie_commit_seqno", "type": ["null", "string"], "doc": "", "default": None},
        {"name": "_hoodie_record_key", "type": ["null", "string"], "doc": "", "default": None},
        {"name": "_hoodie_partition_path", "type": ["null", "string"], "doc": "", "default": None},
        {"name": "_hoodie_file_name", "type": ["null", "string"], "doc": "", "default": None},
        {"name": "id", "type": "long"},
        {"name": "name", "type": ["null", "string"], "default": None},
        {"name": "flag", "type": ["null", "boolean"], "default": None},
        {"name": "f32", "type": ["null", "float"], "default": None},
        {"name": "amount", "type": ["null", {"type": "fixed", "name": "fixed", "namespace": "hoodie.t.amount",
                                             "size": 5, "logicalType": "decimal", "precision": 10, "scale": 2}],
         "default": None},
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
        {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
        {"name": "raw", "type": ["null", "bytes"], "default": None},
        {"name": "tags", "type": ["null", {"type": "array", "items": ["null", "string"]}], "default": None},
        {"name": "attrs", "type": ["null", {"type": "map", "values": ["null", {
            "type": "record", "name": "attr", "fields": [{"name": "v", "type": ["null", "double"],
                                                          "default": None}]}]}], "default": None},
        {"name": "nested", "type": ["null", {"type": "record", "name": "nested", "fields": [
            {"name": "a", "type": ["null", "int"], "default": None},
            {"name": "again", "type": ["null", "attr"], "default": None}]}], "default": None},
    ],
})


def _rich_records(instant: str = "20250101000000000", n: int = 3) -> pa.Table:
    rows = []
    for i in range(n):
        rows.append({
            "_hoodie_commit_time": instant, "_hoodie_commit_seqno": f"{instant}_0_{i}",
            "_hoodie_record_key": str(i), "_hoodie_partition_path": "p=1", "_hoodie_file_name": "fg-0",
            "id": i, "name": None if i == 1 else f"name-{i}", "flag": i % 2 == 0, "f32": 1.5 * i,
            "amount": decimal.Decimal(f"{i}1234.5{i}"), "day": dt.date(2024, 1, 1 + i),
            "ts": dt.datetime(2024, 1, 1, 12, 0, i, 123456, tzinfo=dt.timezone.utc), "raw": bytes([i, 0, 255]),
            "tags": [] if i == 0 else ["a", None, "c"][:i + 1],
            "attrs": None if i == 2 else [("k", {"v": 0.5}), ("n", None)],
            "nested": {"a": i, "again": {"v": -1.0} if i else None},
        })
    return pa.Table.from_pylist(rows, schema=avro_schema_to_arrow(RICH_SCHEMA))


def test_all_block_types_round_trip(tmp_path):
    records = _rich_records()
    blocks = [
        parquet_data_block(records, "20250101000000001", RICH_SCHEMA),
        avro_data_block(records, "20250101000000002", RICH_SCHEMA),
        delete_block([("0", "p=1", 7), ("1", "p=1", None)], "20250101000000003", ["null", "long"], RICH_SCHEMA),
        rollback_command_block("20250101000000004", "20250101000000002"),
    ]
    path = str(tmp_path / "p=1" / log_file_name("fg-0", "20250101000000000", 1, "0-1-0"))
    size = write_log_file(LOCAL, path, blocks)
    assert size == os.path.getsize(path)
    back = list(read_log_file(LOCAL, path))
    assert [b.block_type for b in back] == [BlockType.PARQUET_DATA_BLOCK, BlockType.AVRO_DATA_BLOCK,
                                            BlockType.DELETE_BLOCK, BlockType.COMMAND_BLOCK]
    assert [b.instant_time for b in back] == [b.instant_time for b in blocks]
    assert back[0].records.to_pylist() == records.to_pylist()
    assert back[1].records.equals(records)
    assert back[0].schema == back[1].schema == RICH_SCHEMA
    assert back[2].delete_keys == [DeleteRecord("0", "p=1", 7, ORDERING_VAL_BRANCHES.index("long")),
                                   DeleteRecord("1", "p=1", None, 0)]
    assert back[3].is_rollback and back[3].target_instant_time == "20250101000000002"
    assert back[3].header == {"INSTANT_TIME": "20250101000000004", "TARGET_INSTANT_TIME": "20250101000000002",
                              "COMMAND_BLOCK_TYPE": "0"}
    # every block re-encodes to the bytes it was read from
    raw = Path(path).read_bytes()
    for b in back:
        assert encode_block(_reencode_plain(b)) == raw[b.offset:b.offset + b.length] or \
            b.block_type == BlockType.PARQUET_DATA_BLOCK
    assert sum(b.length for b in back) == size


def _reencode_plain(b: LogBlock) -> LogBlock:
    if b.block_type == BlockType.AVRO_DATA_BLOCK:
        return avro_data_block(b.records, b.instant_time, b.schema)
    if b.block_type == BlockType.DELETE_BLOCK:
        return delete_block(b.delete_keys, b.instant_time, None, b.schema)
    if b.block_type == BlockType.COMMAND_BLOCK:
        return rollback_command_block(b.instant_time, b.target_instant_time)
    return parquet_data_block(b.records, b.instant_time, b.schema)


def test_parquet_block_content_is_a_parquet_file_with_the_avro_schema():
    import pyarrow.parquet as pq

    block = parquet_data_block(_rich_records(), "20250101000000001", RICH_SCHEMA)
    assert block.content[:4] == b"PAR1" and block.content[-4:] == b"PAR1"
    pf = pq.ParquetFile(pa.BufferReader(block.content))
    assert pf.metadata.metadata[b"parquet.avro.schema"].decode() == RICH_SCHEMA
    assert b"ARROW:schema" not in pf.metadata.metadata                  # as Java Hudi: the Avro schema types it
    assert pf.metadata.row_group(0).column(0).compression == "GZIP"     # Hudi's default codec
    assert pf.schema_arrow.names == [f["name"] for f in json.loads(RICH_SCHEMA)["fields"]]


def test_data_blocks_conform_records_to_the_avro_schema():
    records = _rich_records()
    # column order and integer widths follow the schema
    shuffled = records.select(list(reversed(records.column_names)))
    shuffled = shuffled.set_column(shuffled.schema.get_field_index("id"), "id",
                                   shuffled.column("id").cast(pa.int32()))
    for make in (parquet_data_block, avro_data_block):
        block = make(shuffled, "20250101000000001", RICH_SCHEMA)
        back = next(read_log_bytes(encode_block(block)))
        assert back.records.to_pylist() == records.to_pylist()
        with pytest.raises(SchemaError, match="extra columns \\['bogus'\\]"):
            make(records.append_column("bogus", pa.array([1, 2, 3])), "20250101000000001", RICH_SCHEMA)
    with pytest.raises(SchemaError, match="missing"):
        parquet_data_block(records.drop_columns(["name"]), "20250101000000001", RICH_SCHEMA)
    with pytest.raises(SchemaError, match="missing"):
        avro_data_block(records.drop_columns(["id"]), "20250101000000001", RICH_SCHEMA)
    # a nullable column may be absent from an avro block: it is written as null
    back = next(read_log_bytes(encode_block(
        avro_data_block(records.drop_columns(["name"]), "20250101000000001", RICH_SCHEMA))))
    assert back.records.column("name").null_count == 3
    with pytest.raises(SchemaError, match="'id' has nulls"):
        parquet_data_block(records.set_column(5, "id", pa.array([1, None, 3], pa.int64())), "20250101000000001",
                           RICH_SCHEMA)
    with pytest.raises(PyHudiError, match="instant time"):
        avro_data_block(records, "not-an-instant", RICH_SCHEMA)


ORDERING_CASES = [
    ("int", 5, "int"),
    (["null", "long"], 1695046462179, "long"),
    ("float", 1.5, "float"),
    ("double", -2.25, "double"),
    ("bytes", b"\x00\x01", "bytes"),
    ("string", "2024-01-01", "string"),
    ({"type": "fixed", "name": "d", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 2},
     decimal.Decimal("-12.34"), "decimal"),
    ({"type": "int", "logicalType": "date"}, dt.date(2024, 2, 29), "date"),
    ({"type": "long", "logicalType": "timestamp-micros"}, 1_700_000_000_000_000, "long"),
    (None, None, "null"),
]


@pytest.mark.parametrize("avro_type,value,branch", ORDERING_CASES)
def test_delete_block_ordering_value_branches(avro_type, value, branch):
    block = delete_block([("k1", "p", value), ("k2", "", value)], "20250101000000001", avro_type)
    back = next(read_log_bytes(encode_block(block)))
    assert [k.ordering_type_name for k in back.delete_keys] == [branch, branch]
    got = back.delete_keys[0].ordering_val
    if branch == "decimal":
        assert got == value and got.as_tuple().exponent == -15    # HoodieDeleteRecord decimal(30, 15)
    elif branch == "float":
        assert got == pytest.approx(value)
    else:
        assert got == value
    assert [(k.record_key, k.partition_path) for k in back.delete_keys] == [("k1", "p"), ("k2", "")]
    # the decoded keys (which remember their branch) re-encode to the same bytes
    assert encode_block(delete_block(back.delete_keys, "20250101000000001")) == encode_block(block)


def test_delete_block_logical_branches_round_trip():
    """Keys read from other writers may use any orderingVal branch; they decode to Python values and re-encode
    exactly."""
    values = {
        "boolean": True, "time-micros": dt.time(23, 59, 59, 999999),
        "timestamp-micros": dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc),
        "date": dt.date(1900, 1, 1), "decimal": decimal.Decimal("0.000000000000001"),
        "long": -(2 ** 63), "int": -(2 ** 31),
    }
    keys = [DeleteRecord(f"k-{name}", "p", value, ORDERING_VAL_BRANCHES.index(name)) for name, value in values.items()]
    content = encode_delete_content(keys)
    back = decode_delete_content(content)
    assert back == keys
    assert encode_delete_content(back) == content


def test_delete_block_rejects_bad_keys():
    with pytest.raises(PyHudiError, match="null or empty record key"):
        delete_block([("", "p", 1)], "20250101000000001", "long")
    with pytest.raises(SchemaError, match="cannot be stored"):
        delete_block([("k", "p", [1, 2])], "20250101000000001")
    empty = next(read_log_bytes(encode_block(delete_block([], "20250101000000001", "long"))))
    assert empty.delete_keys == []


def test_append_and_footer_and_unknown_header(tmp_path):
    path = str(tmp_path / log_file_name("fg-0", "20250101000000000", 1, "0-1-0"))
    first = rollback_command_block("20250101000000002", "20250101000000001")
    first.footer = {"INSTANT_TIME": "x"}
    size1 = write_log_file(LOCAL, path, [first])
    size2 = append_log_blocks(LOCAL, path, [delete_block([("k", "p", 1)], "20250101000000003", "long")])
    assert size2 > size1 == os.path.getsize(path) - (size2 - size1)
    back = list(read_log_file(LOCAL, path))
    assert [b.offset for b in back] == [0, size1] and back[0].footer == {"INSTANT_TIME": "x"}
    with pytest.raises(LogFileExistsError, match="already exists"):
        write_log_file(LOCAL, path, [first])
    bad = LogBlock(BlockType.COMMAND_BLOCK, {"NOT_A_KEY": "1"}, command="ROLLBACK_BLOCK", content=b"")
    with pytest.raises(PyHudiError, match="Unknown log block header key"):
        encode_block(bad)
    with pytest.raises(PyHudiError, match="cannot be written"):
        encode_block(LogBlock(BlockType.CORRUPT_BLOCK))


class _NoAppendHandler(pafs.FileSystemHandler):
    """A local file system that cannot append, like an object store."""

    def __init__(self):
        self.fs = pafs.LocalFileSystem()

    def __eq__(self, other):
        return isinstance(other, _NoAppendHandler)

    def __ne__(self, other):
        return not self == other

    def get_type_name(self):
        return "noappend"

    def normalize_path(self, path):
        return path

    def get_file_info(self, paths):
        return self.fs.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.fs.get_file_info(selector)

    def create_dir(self, path, recursive):
        self.fs.create_dir(path, recursive=recursive)

    def delete_dir(self, path):
        self.fs.delete_dir(path)

    def delete_dir_contents(self, path, missing_dir_ok=False):
        self.fs.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

    def delete_root_dir_contents(self):
        raise NotImplementedError

    def delete_file(self, path):
        self.fs.delete_file(path)

    def move(self, src, dest):
        self.fs.move(src, dest)

    def copy_file(self, src, dest):
        self.fs.copy_file(src, dest)

    def open_input_stream(self, path):
        return self.fs.open_input_stream(path)

    def open_input_file(self, path):
        return self.fs.open_input_file(path)

    def open_output_stream(self, path, metadata):
        return self.fs.open_output_stream(path)

    def open_append_stream(self, path, metadata):
        raise NotImplementedError("append is not supported")


def test_append_unsupported_asks_for_rollover(tmp_path):
    fs = pafs.PyFileSystem(_NoAppendHandler())
    name = log_file_name("fg-0", "20250101000000000", 1, "0-1-0")
    path = str(tmp_path / name)
    block = rollback_command_block("20250101000000002", "20250101000000001")
    write_log_file(fs, path, [block])
    with pytest.raises(LogAppendNotSupportedError, match=r"\.fg-0_20250101000000000\.log\.2_1-0-1"):
        append_log_blocks(fs, path, [block])
    rolled = rollover_log_file_name(path)
    write_log_file(fs, rolled, [block])
    assert [parse_log_file_path(p)[2] for p in sorted(glob.glob(str(tmp_path / ".fg-0_*")))] == [1, 2]


def test_log_file_names():
    name = log_file_name("d206069c-22c8-4532-b9ea-3cf4282342c4-0", "20250117083125837", 1, "0-33-43")
    assert name == ".d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.1_0-33-43"
    assert parse_log_file_path(name) == ("d206069c-22c8-4532-b9ea-3cf4282342c4-0", "20250117083125837", 1, "0-33-43")
    assert parse_log_file_path("city=x/" + name)[2] == 1
    assert rollover_log_file_name("city=x/" + name) == \
        "city=x/.d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.2_1-0-1"
    assert rollover_log_file_name(name, "3-4-5").endswith(".log.2_3-4-5")
    for bad in ("d206069c-0_0-13-23_20250117083125837.parquet", ".hoodie_partition_metadata", "x.log.1"):
        with pytest.raises(LogFileNameError, match="not a Hudi log file name"):
            parse_log_file_path(bad)
    with pytest.raises(LogFileNameError):
        log_file_name("fg", "20250101000000000", 0, "0-0-0")


# ---------------------------------------------------------------------------------------------------------------
# Corruption: skipped with a warning; earlier and later intact blocks still read
# ---------------------------------------------------------------------------------------------------------------

def _three_blocks() -> list[bytes]:
    records = _rich_records(n=2)
    return [
        encode_block(avro_data_block(records, "20250101000000001", RICH_SCHEMA)),
        encode_block(parquet_data_block(records, "20250101000000002", RICH_SCHEMA)),
        encode_block(delete_block([("0", "p=1", 3)], "20250101000000003", "long")),
    ]


def _read_with_warnings(tmp_path, data: bytes, **kw):
    path = tmp_path / ".fg-0_20250101000000000.log.1_0-0-0"
    path.write_bytes(data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        blocks = list(read_log_file(LOCAL, str(path), **kw))
    messages = [str(w.message) for w in caught if issubclass(w.category, CorruptLogBlockWarning)]
    return [b.instant_time for b in blocks], messages, str(path), blocks


def test_truncated_last_block_is_skipped(tmp_path):
    b1, b2, b3 = _three_blocks()
    for cut in (3, 10, len(b3) // 2, len(b3) - 1):
        instants, messages, path, _ = _read_with_warnings(tmp_path, b1 + b2 + b3[:cut])
        assert instants == ["20250101000000001", "20250101000000002"]
        assert len(messages) == 1 and path in messages[0] and f"offset {len(b1) + len(b2)}" in messages[0]


def test_torn_block_followed_by_later_append(tmp_path):
    """A writer crashed mid-block, a later writer appended: the torn block is skipped, the next one read."""
    b1, b2, b3 = _three_blocks()
    instants, messages, _, _ = _read_with_warnings(tmp_path, b1 + b2[:len(b2) // 2] + b3)
    assert instants == ["20250101000000001", "20250101000000003"]
    assert len(messages) == 1 and f"offset {len(b1)}" in messages[0] and "resuming" in messages[0]


@pytest.mark.parametrize("which", [0, 1])
def test_flipped_magic(tmp_path, which):
    blocks = _three_blocks()
    damaged = bytearray(blocks[which])
    damaged[0:6] = b"#HUDX#"
    blocks[which] = bytes(damaged)
    instants, messages, _, _ = _read_with_warnings(tmp_path, b"".join(blocks))
    expected = ["20250101000000001", "20250101000000002", "20250101000000003"]
    del expected[which]
    assert instants == expected
    offset = sum(len(b) for b in blocks[:which])
    assert len(messages) == 1 and f"offset {offset}" in messages[0] and "magic" in messages[0]


def test_bad_lengths_and_garbage_between_blocks(tmp_path):
    b1, b2, b3 = _three_blocks()
    # trailing total length of block 2 disagrees with its size
    bad_tail = b2[:-8] + struct.pack(">q", 12345)
    instants, messages, _, _ = _read_with_warnings(tmp_path, b1 + bad_tail + b3)
    assert instants == ["20250101000000001", "20250101000000003"] and "trailing block length" in messages[0]
    # block size pointing past the end of the file
    huge = b2[:6] + struct.pack(">q", 10 ** 9) + b2[14:]
    instants, messages, _, _ = _read_with_warnings(tmp_path, b1 + huge + b3)
    assert instants == ["20250101000000001", "20250101000000003"] and "past the end" in messages[0]
    # garbage between blocks, and include_corrupt reports the skipped range
    instants, messages, _, blocks = _read_with_warnings(tmp_path, b1 + b"garbage" + b2, include_corrupt=True)
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA_BLOCK, BlockType.CORRUPT_BLOCK,
                                              BlockType.PARQUET_DATA_BLOCK]
    assert (blocks[1].offset, blocks[1].length) == (len(b1), len(b"garbage"))
    assert len(messages) == 1
    # only the beginning of a magic at the end of the file
    instants, messages, _, _ = _read_with_warnings(tmp_path, b1 + b"#HU")
    assert instants == ["20250101000000001"] and len(messages) == 1
    # an empty file has no blocks and no warning
    assert _read_with_warnings(tmp_path, b"")[:2] == ([], [])


def test_intact_framing_with_undecodable_content_raises(tmp_path):
    b1, b2, _ = _three_blocks()
    content_start = b2.rindex(b"PAR1")   # the footer magic: parquet readers check it
    broken = b2[:content_start] + b"XXXX" + b2[content_start + 4:]
    with pytest.raises(CorruptFileError, match=r"PARQUET_DATA_BLOCK at offset \d+ .*20250101000000002"):
        _read_with_warnings(tmp_path, b1 + broken)
    # headers can still be scanned without decoding
    instants, messages, _, _ = _read_with_warnings(tmp_path, b1 + broken, decode=False)
    assert instants == ["20250101000000001", "20250101000000002"] and not messages


def test_log_blocks_use_the_one_avro_to_arrow_mapping(tables):
    """A block's Arrow schema is pyhudi.schema.avro_to_arrow's (one owner of the rule); the record codec still
    refuses unions with several non-null branches."""
    from pyhudi.file_group.log_block.avro_codec import AvroRecordCodec
    from pyhudi.schema import avro_to_arrow

    schemas = {RICH_SCHEMA}
    for table in TABLES:
        for log in _log_files(tables[table]):
            schemas.update(b.schema for b in read_log_file(LOCAL, str(log), decode=False) if b.schema)
    for schema in schemas:
        assert avro_schema_to_arrow(schema).equals(avro_to_arrow(json.loads(schema)))
    with pytest.raises(SchemaError, match="non-null branches"):
        AvroRecordCodec(json.dumps(
            {"type": "record", "name": "r", "fields": [{"name": "u", "type": ["null", "int", "string"]}]}))


def test_delete_content_round_trips_property():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    ordering = st.one_of(
        st.none(),
        st.integers(-(2 ** 63), 2 ** 63 - 1).map(lambda v: (v, "long")),
        st.integers(-(2 ** 31), 2 ** 31 - 1).map(lambda v: (v, "int")),
        st.floats(allow_nan=False).map(lambda v: (v, "double")),
        st.text(max_size=20).map(lambda v: (v, "string")),
        st.binary(max_size=20).map(lambda v: (v, "bytes")),
    )
    key = st.tuples(st.text(min_size=1, max_size=30), st.text(max_size=30), ordering)

    @hypothesis.settings(max_examples=150, deadline=None)
    @hypothesis.given(st.lists(key, max_size=20))
    def check(keys):
        records = [DeleteRecord(k, p, o[0] if o else None, ORDERING_VAL_BRANCHES.index(o[1]) if o else 0)
                   for k, p, o in keys]
        content = encode_delete_content(records)
        assert decode_delete_content(content) == records
        block = next(read_log_bytes(encode_block(delete_block(records, "20250101000000001"))))
        assert block.delete_keys == records

    check()
