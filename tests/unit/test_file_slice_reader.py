"""Merge-on-read reading of one file slice: Java-written fixtures against hudi-rs (snapshot, every time-travel
instant, read-optimized), and synthetic slices written with pyhudi's log writer for the merge rules."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support import FIXTURES, fixture_table

from pyhudi.errors import ConfigError
from pyhudi.file_group.base_file import META_COLUMNS
from pyhudi.file_group.log_file import (
    DeleteRecord,
    avro_data_block,
    delete_block,
    parquet_data_block,
    rollback_command_block,
    write_log_file,
)
from pyhudi.file_group.model import BaseFile, FileSlice, LogFile
from pyhudi.merge import DEFAULT_PAYLOAD, OVERWRITE_WITH_LATEST
from pyhudi.reader.file_slice_reader import read_file_slice
from pyhudi.reader.plan import table_schema
from pyhudi.schema import arrow_to_avro, avro_json, with_meta_fields_avro
from pyhudi.storage import Storage
from pyhudi.table import HudiTable

TABLES = sorted(p.stem for p in FIXTURES.glob("mor_parquet_v6_*.zip")) + \
    sorted(p.stem for p in FIXTURES.glob("qs_mor_avro_v6_*.zip"))
WRITE_SUFFIXES = (".commit", ".deltacommit", ".replacecommit")


# ---------------------------------------------------------------------------------------------------------------
# Java-written fixtures vs hudi-rs
# ---------------------------------------------------------------------------------------------------------------

def _completed_writes_in_zip(name: str) -> list[str]:
    """Completed write instants of a fixture, from the zip listing (test ids are known before unzipping)."""
    with zipfile.ZipFile(FIXTURES / f"{name}.zip") as zf:
        members = [m for m in zf.namelist() if "__MACOSX" not in m and "/.hoodie/" in m]
    out = set()
    for member in members:
        rest = member.split("/.hoodie/", 1)[1]
        parts = rest.split(".")
        if "/" not in rest and len(parts) == 2 and parts[0].isdigit() and "." + parts[1] in WRITE_SUFFIXES:
            out.add(parts[0])
    return sorted(out)


CASES = [(name, None) for name in TABLES] + \
    [(name, instant) for name in TABLES for instant in _completed_writes_in_zip(name)]


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    """Each fixture zip unzipped into its own temporary folder; name -> table root."""
    if not TABLES:
        pytest.skip(f"no fixture tables under {FIXTURES}")
    return {name: fixture_table(name, tmp_path_factory) for name in TABLES}


def _pyhudi_read(root: Path, as_of: str | None = None, base_only: bool = False) -> pa.Table:
    table = HudiTable.load(str(root))
    timeline = table.timeline()
    schema = table_schema(table, timeline)
    view = table.view(as_of=as_of, timeline=timeline)
    visible = {i.time for i in timeline.completed_writes() if as_of is None or i.time <= as_of}
    assert visible == view.visible_instants
    payload = table.properties.get("hoodie.compaction.payload.class") or OVERWRITE_WITH_LATEST
    parts = [read_file_slice(table.storage, s, schema, visible_instants=visible,
                             ordering_field=table.properties.precombine_field, payload_class=payload,
                             base_only=base_only)
             for s in view.latest_slices()]
    for part in parts:
        assert part.schema.equals(schema), "every slice comes back in exactly the requested schema"
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _hudi_rs_read(root: Path, as_of: str | None = None, read_optimized: bool = False) -> pa.Table:
    from hudi import HudiReadOptions, HudiTableBuilder

    options = HudiReadOptions()
    if as_of is not None:
        options = options.with_as_of_timestamp(as_of)
    if read_optimized:
        options = options.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    return pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(root)).build().read(options))


def _rows(table: pa.Table, columns: list[str]) -> list[dict]:
    return sorted(table.select(columns).to_pylist(), key=lambda r: r["_hoodie_record_key"])


@pytest.mark.parametrize("name,as_of", CASES, ids=[f"{n}@{t or 'latest'}" for n, t in CASES])
def test_fixture_matches_hudi_rs(tables, name, as_of):
    pytest.importorskip("hudi")
    root = tables[name]
    mine = _pyhudi_read(root, as_of)
    theirs = _hudi_rs_read(root, as_of)
    # every column, meta columns included (commit time/seqno/file name come from the surviving record)
    columns = [c for c in mine.column_names if c in theirs.column_names]
    assert "_hoodie_record_key" in columns and len(columns) == mine.num_columns
    assert mine.num_rows == theirs.num_rows
    assert _rows(mine, columns) == _rows(theirs, columns)


@pytest.mark.parametrize("name", TABLES)
def test_fixture_read_optimized_matches_hudi_rs(tables, name):
    pytest.importorskip("hudi")
    root = tables[name]
    mine = _pyhudi_read(root, base_only=True)
    theirs = _hudi_rs_read(root, read_optimized=True)
    columns = mine.column_names
    assert _rows(mine, columns) == _rows(theirs, columns)


def test_fixture_expected_rows(tables):
    """The rows the fixtures' SQL implies (independently of hudi-rs)."""
    deleted = _pyhudi_read(tables["qs_mor_avro_v6_trips_8i3d"])
    assert sorted(deleted["rider"].to_pylist()) == ["rider-E", "rider-F", "rider-G", "rider-I", "rider-J"]
    updated = _pyhudi_read(tables["qs_mor_avro_v6_trips_8i1u"])
    assert updated.num_rows == 8
    rolled_back = {r["id"]: r for r in _pyhudi_read(tables["mor_parquet_v6_nonpartitioned_rollback"]).to_pylist()}
    assert sorted(rolled_back) == [1, 2, 3]
    assert rolled_back[1]["isActive"] is True        # the rolled-back update (isActive=false) is void
    assert rolled_back[2]["isActive"] is True        # the update after the rollback counts
    snapshot = {r["id"]: r for r in _pyhudi_read(tables["mor_parquet_v6_nonpartitioned"]).to_pylist()}
    assert sorted(snapshot) == [1, 2, 3, 4] and snapshot[1]["isActive"] is False


# ---------------------------------------------------------------------------------------------------------------
# Synthetic slices
# ---------------------------------------------------------------------------------------------------------------

DATA = pa.schema([
    pa.field("id", pa.string()),
    pa.field("ts", pa.int64()),
    pa.field("val", pa.string()),
    pa.field("_hoodie_is_deleted", pa.bool_()),
])
SCHEMA = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + list(DATA))
AVRO = avro_json(with_meta_fields_avro(arrow_to_avro(DATA, "t")))
PART = "p"
FILE_ID = "fg-0"
BASE_INSTANT = "20250101000000001"


def T(n: int) -> str:
    return f"2025010100000{n:04d}"


def _records(instant: str, rows: list[tuple], data: pa.Schema = DATA) -> pa.Table:
    """rows: (id, ts, val) or (id, ts, val, is_deleted)."""
    cols = {c: [] for c in META_COLUMNS}
    values = {f.name: [] for f in data}
    for i, row in enumerate(rows):
        cols["_hoodie_commit_time"].append(instant)
        cols["_hoodie_commit_seqno"].append(f"{instant}_0_{i}")
        cols["_hoodie_record_key"].append(row[0])
        cols["_hoodie_partition_path"].append(PART)
        cols["_hoodie_file_name"].append(FILE_ID)
        full = tuple(row) + (False,) * (len(data) - len(row))
        for f, v in zip(data, full):
            values[f.name].append(v)
    arrays = [pa.array(v, pa.string()) for v in cols.values()] + \
        [pa.array(values[f.name], f.type) for f in data]
    return pa.Table.from_arrays(arrays, schema=pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + list(data)))


class SliceBuilder:
    """A file slice under ``tmp_path``: an optional base file and log files written with pyhudi's log writer."""

    def __init__(self, tmp_path: Path):
        self.storage = Storage(str(tmp_path))
        self.base: BaseFile | None = None
        self.logs: list[LogFile] = []

    def base_file(self, rows: list[tuple], data: pa.Schema = DATA, instant: str = BASE_INSTANT) -> "SliceBuilder":
        relative = f"{PART}/{FILE_ID}_0-1-1_{instant}.parquet"
        self.storage.makedirs(PART)
        pq.write_table(_records(instant, rows, data), self.storage.full(relative))
        self.base = BaseFile(relative, FILE_ID, "0-1-1", instant, self.storage.file_size(relative))
        return self

    def log_file(self, *blocks) -> "SliceBuilder":
        version = len(self.logs) + 1
        relative = f"{PART}/.{FILE_ID}_{BASE_INSTANT}.log.{version}_0-1-1"
        self.storage.makedirs(PART)
        size = write_log_file(self.storage.fs, self.storage.full(relative), list(blocks))
        self.logs.append(LogFile(relative, FILE_ID, BASE_INSTANT, version, "0-1-1", size))
        return self

    @property
    def slice(self) -> FileSlice:
        return FileSlice(PART, FILE_ID, BASE_INSTANT, self.base, list(self.logs))

    def read(self, visible, ordering_field="ts", payload_class=OVERWRITE_WITH_LATEST, schema=SCHEMA, **kw):
        out = read_file_slice(self.storage, self.slice, schema, visible_instants=set(visible),
                              ordering_field=ordering_field, payload_class=payload_class, **kw)
        assert out.schema.equals(schema)
        return out


def upsert(instant: str, rows: list[tuple], avro: bool = False):
    records = _records(instant, rows)
    return (avro_data_block if avro else parquet_data_block)(records, instant, AVRO)


def delete(instant: str, keys: list[tuple]):
    """keys: (id, ordering value) — DeleteRecords for explicit union branches."""
    entries = [k if isinstance(k, DeleteRecord) else (k[0], PART, k[1]) for k in keys]
    return delete_block(entries, instant, ordering_avro_type="long")


def _by_id(table: pa.Table) -> dict[str, tuple]:
    assert len(set(table["id"].to_pylist())) == table.num_rows, "one row per key"
    return {r["id"]: (r["ts"], r["val"], r["_hoodie_commit_time"]) for r in table.to_pylist()}


BASE_ROWS = [("k1", 1, "base1"), ("k2", 1, "base2"), ("k3", 1, "base3")]


def test_multiple_blocks_and_files_latest_wins(tmp_path):
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS)
    b.log_file(upsert(T(2), [("k1", 2, "v2")]), upsert(T(3), [("k1", 3, "v3"), ("k4", 3, "new4")], avro=True))
    b.log_file(upsert(T(4), [("k2", 4, "v4")]))
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3), T(4)}))
    assert rows == {"k1": (3, "v3", T(3)), "k2": (4, "v4", T(4)), "k3": (1, "base3", BASE_INSTANT),
                    "k4": (3, "new4", T(3))}
    # read-optimized: the base file only
    assert _by_id(b.read({BASE_INSTANT, T(2), T(3), T(4)}, base_only=True)) == \
        {k: (1, v, BASE_INSTANT) for k, _, v in BASE_ROWS}


def test_time_travel_and_uncommitted_blocks(tmp_path):
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS)
    b.log_file(upsert(T(2), [("k1", 2, "v2")]), upsert(T(3), [("k1", 3, "failed")]),
               upsert(T(4), [("k2", 4, "v4"), ("k5", 4, "new5")]))
    # T(3) never completed: its block is skipped wherever it sits
    assert _by_id(b.read({BASE_INSTANT, T(2), T(4)}))["k1"] == (2, "v2", T(2))
    # as of T(2): the later block does not count yet
    rows = _by_id(b.read({BASE_INSTANT, T(2)}))
    assert rows["k1"] == (2, "v2", T(2)) and rows["k2"] == (1, "base2", BASE_INSTANT) and "k5" not in rows
    # as of the base instant: nothing from the logs
    assert _by_id(b.read({BASE_INSTANT})) == {k: (1, v, BASE_INSTANT) for k, _, v in BASE_ROWS}


def test_rollback_command_block_voids_earlier_blocks_of_its_target(tmp_path):
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS)
    b.log_file(upsert(T(2), [("k1", 2, "v2")]), upsert(T(3), [("k1", 3, "rolled"), ("k9", 3, "rolled")]),
               upsert(T(3), [("k2", 3, "retry-rolled")]))
    b.log_file(rollback_command_block(T(5), T(3)))
    b.log_file(upsert(T(6), [("k3", 6, "v6")]))
    # even with T(3) listed as visible, the rollback block removes both earlier blocks of T(3)
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3), T(6)}))
    assert rows == {"k1": (2, "v2", T(2)), "k2": (1, "base2", BASE_INSTANT), "k3": (6, "v6", T(6))}
    # a rollback later than the query instant does not apply yet (Hudi's scanner stops before it)
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3)}))
    assert rows["k1"] == (3, "rolled", T(3)) and rows["k9"] == (3, "rolled", T(3))


def test_rollback_only_affects_blocks_before_it(tmp_path):
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS)
    b.log_file(rollback_command_block(T(3), T(4)), upsert(T(4), [("k1", 4, "after")]))
    assert _by_id(b.read({BASE_INSTANT, T(4)}))["k1"] == (4, "after", T(4))


def test_delete_then_reinsert(tmp_path):
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS)
    b.log_file(delete(T(2), [("k1", 0), ("k2", 0), ("k4", 0)]), upsert(T(3), [("k4", 3, "only-log")]))
    # the re-insert has a lower ordering value than the base record: after a delete it wins anyway
    b.log_file(upsert(T(4), [("k1", 0, "reinserted")]), delete(T(5), [("k4", 0)]))
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3), T(4), T(5)}))
    assert rows == {"k1": (0, "reinserted", T(4)), "k3": (1, "base3", BASE_INSTANT)}
    # as of T(3): k1 deleted, k4 (deleted before it existed) inserted
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3)}))
    assert rows == {"k3": (1, "base3", BASE_INSTANT), "k4": (3, "only-log", T(3))}


def test_delete_ordering_value(tmp_path):
    """A delete older (by ordering value) than a record already read from the logs is ignored; the natural
    order marker 0 and values of another Java class always delete."""
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS + [("k4", 1, "base4"), ("k5", 1, "base5")])
    b.log_file(upsert(T(2), [("k1", 10, "v"), ("k2", 10, "v"), ("k3", 10, "v"), ("k4", 10, "v"), ("k5", 10, "v")]))
    b.log_file(delete(T(3), [("k1", 5), ("k2", 15), ("k3", 0), ("k4", 10)]),
               delete_block([DeleteRecord("k5", PART, 5, 1)], T(3)))   # int branch: Integer vs Long ordering
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3)}))
    assert rows == {"k1": (10, "v", T(2))}
    # delete entries against base records only: a delete block always removes the base record
    b2 = SliceBuilder(tmp_path / "b2").base_file([("k1", 100, "base")])
    b2.log_file(delete(T(2), [("k1", 5)]))
    assert b2.read({BASE_INSTANT, T(2)}).num_rows == 0
    assert b2.read({BASE_INSTANT, T(2)}, payload_class=DEFAULT_PAYLOAD).num_rows == 0


def test_ordering_field_precedence_between_log_records(tmp_path):
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS)
    b.log_file(upsert(T(2), [("k1", 10, "high"), ("k2", 5, "tie-first"), ("k3", 5, "x")]),
               upsert(T(3), [("k1", 7, "low"), ("k2", 5, "tie-second"), ("k3", None, "null-ts")]))
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3)}))
    assert rows["k1"] == (10, "high", T(2))          # preCombine keeps the greater ordering value
    assert rows["k2"] == (5, "tie-second", T(3))     # ties: the later record
    assert rows["k3"] == (5, "x", T(2))              # null ordering values lose
    # no ordering field: arrival order
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3)}, ordering_field=None))
    assert rows["k1"] == (7, "low", T(3)) and rows["k3"] == (None, "null-ts", T(3))


def test_payload_class_decides_log_vs_base(tmp_path):
    b = SliceBuilder(tmp_path).base_file([("k1", 20, "base-newer"), ("k2", 1, "base-older"), ("k3", 20, "b3"),
                                          ("k4", 1, "b4")])
    b.log_file(upsert(T(2), [("k1", 10, "log-older"), ("k2", 10, "log-newer"), ("k5", 1, "insert")]),
               upsert(T(3), [("k3", 10, None, True), ("k4", 10, None, True), ("k6", 1, None, True)]))
    visible = {BASE_INSTANT, T(2), T(3)}
    latest = _by_id(b.read(visible, payload_class=OVERWRITE_WITH_LATEST))
    assert latest == {"k1": (10, "log-older", T(2)), "k2": (10, "log-newer", T(2)), "k5": (1, "insert", T(2))}
    default = _by_id(b.read(visible, payload_class=DEFAULT_PAYLOAD))
    assert default == {"k1": (20, "base-newer", BASE_INSTANT), "k2": (10, "log-newer", T(2)),
                       "k3": (20, "b3", BASE_INSTANT), "k5": (1, "insert", T(2))}


def test_is_deleted_flag_combines_by_ordering_in_logs(tmp_path):
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS)
    b.log_file(upsert(T(2), [("k1", 5, None, True), ("k2", 5, "v")]),
               upsert(T(3), [("k1", 6, "back"), ("k2", 4, None, True)]))
    rows = _by_id(b.read({BASE_INSTANT, T(2), T(3)}))
    assert rows == {"k1": (6, "back", T(3)), "k2": (5, "v", T(2)), "k3": (1, "base3", BASE_INSTANT)}


def test_log_only_slice(tmp_path):
    b = SliceBuilder(tmp_path)
    b.log_file(upsert(T(2), [("k1", 1, "a"), ("k2", 1, "b"), ("k3", 1, "c")]),
               upsert(T(3), [("k1", 2, "a2")], avro=True), delete(T(4), [("k2", 0)]),
               upsert(T(9), [("k3", 9, "uncommitted")]))
    rows = _by_id(b.read({T(2), T(3), T(4)}))
    assert rows == {"k1": (2, "a2", T(3)), "k3": (1, "c", T(2))}
    assert b.read({T(2), T(3), T(4)}, base_only=True).num_rows == 0
    assert b.read(set()).num_rows == 0


def test_schema_evolution_and_projection(tmp_path):
    old = pa.schema([pa.field("id", pa.string()), pa.field("ts", pa.int32())])   # no val, narrower ts
    b = SliceBuilder(tmp_path).base_file([("k1", 1), ("k2", 2)], data=old)
    b.log_file(upsert(T(2), [("k2", 3, "v2")]))
    out = b.read({BASE_INSTANT, T(2)})
    rows = {r["id"]: r for r in out.to_pylist()}
    assert rows["k1"]["ts"] == 1 and rows["k1"]["val"] is None and rows["k1"]["_hoodie_is_deleted"] is None
    assert rows["k2"]["val"] == "v2"
    # a projection without the key or ordering columns still merges by them
    narrow = pa.schema([pa.field("val", pa.string())])
    out = b.read({BASE_INSTANT, T(2)}, schema=narrow)
    assert sorted(out["val"].to_pylist(), key=str) == [None, "v2"]


def test_timestamp_ordering_field_and_delete(tmp_path):
    data = pa.schema([pa.field("id", pa.string()), pa.field("ts", pa.timestamp("us", tz="UTC")),
                      pa.field("val", pa.string())])
    schema = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + list(data))
    avro = avro_json(with_meta_fields_avro(arrow_to_avro(data, "t")))
    t0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    b = SliceBuilder(tmp_path)
    block = parquet_data_block(_records(T(2), [("k1", t0, "a"), ("k2", t0, "b")], data), T(2), avro)
    older = delete_block([("k1", PART, t0 - dt.timedelta(days=1)), ("k2", PART, t0 + dt.timedelta(days=1))], T(3),
                         ordering_avro_type={"type": "long", "logicalType": "timestamp-micros"})
    b.log_file(block, older)
    out = b.read({T(2), T(3)}, schema=schema)
    assert out["id"].to_pylist() == ["k1"]


def test_unsupported_payload_class(tmp_path):
    b = SliceBuilder(tmp_path).base_file(BASE_ROWS)
    b.log_file(upsert(T(2), [("k1", 2, "v")]))
    with pytest.raises(ConfigError, match="AWSDmsAvroPayload"):
        b.read({BASE_INSTANT, T(2)}, payload_class="org.apache.hudi.common.model.AWSDmsAvroPayload")
    # read-optimized reads need no payload
    assert b.read({BASE_INSTANT, T(2)}, base_only=True,
                  payload_class="org.apache.hudi.common.model.PartialUpdateAvroPayload").num_rows == 3


def test_many_keys_vectorized(tmp_path):
    n = 20_000
    b = SliceBuilder(tmp_path).base_file([(f"k{i:05d}", 1, "base") for i in range(n)])
    b.log_file(upsert(T(2), [(f"k{i:05d}", 2, "upd") for i in range(0, n, 2)]),
               delete(T(3), [(f"k{i:05d}", 0) for i in range(0, n, 3)]),
               upsert(T(4), [(f"k{i:05d}", 0, "re") for i in range(0, n, 6)] + [("new", 1, "ins")]))
    out = b.read({BASE_INSTANT, T(2), T(3), T(4)})
    rows = _by_id(out)
    expected = {}
    for i in range(n):
        key = f"k{i:05d}"
        if i % 6 == 0:
            expected[key] = "re"
        elif i % 3 == 0:
            continue
        else:
            expected[key] = "upd" if i % 2 == 0 else "base"
    expected["new"] = "ins"
    assert {k: v[1] for k, v in rows.items()} == expected
