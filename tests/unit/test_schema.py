"""pyhudi.schema: Arrow <-> Hudi Avro schemas, checked against tables written by Java Hudi.

Fixture tables (../shared/fixtures/hudi-tables/*.zip) are unzipped into a temporary folder. For every table
and every commit that carries ``extraMetadata.schema``, the schema pyhudi derives from a base file's columns
must equal the commit's schema exactly (same JSON text), and the reverse conversion must give the base file's
columns back.

One documented difference: Java Hudi's base files are written by parquet-avro with the legacy 2-level list
layout (a repeated group named ``array``), which cannot hold null elements, so such files read back with
``not null`` list elements although the Avro schema says ``["null", T]`` (Spark's ``containsNull=true``).
:func:`_as_spark_typed` undoes that before comparing. Files written by Spark's own parquet writer (the
``mor_parquet_*`` and v8 ``qs_*`` tables) compare without adjustment.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import math
import os
import zipfile
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhudi.errors import PyHudiError, SchemaError
from pyhudi.schema import (
    META_COLUMNS,
    arrow_to_avro,
    avro_json,
    avro_to_arrow,
    check_compatible,
    create_table_avro,
    decimal_fixed_size,
    record_name_and_namespace,
    sanitize_avro_name,
    spark_ddl,
    storage_schema,
    to_storage,
    with_meta_columns,
    with_meta_fields_avro,
)

FIXTURES = Path(os.environ.get("PYHUDI_FIXTURES",
                               Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "hudi-tables"))
ZIPS = sorted(p.name for p in FIXTURES.glob("*.zip")) if FIXTURES.is_dir() else []
COMMIT_ACTIONS = (".commit", ".deltacommit", ".replacecommit")


# ----------------------------------------------------------------------------------------------------------
# fixture tables


def _read_properties(path: Path) -> dict[str, str]:
    """java.util.Properties text (enough of it for hoodie.properties)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, _, value = line.partition("=")
        chars, i = [], 0
        while i < len(value):
            if value[i] == "\\" and i + 1 < len(value):
                chars.append(value[i + 1])
                i += 2
            else:
                chars.append(value[i])
                i += 1
        out[key.strip()] = "".join(chars)
    return out


def _read_commit(path: Path) -> dict:
    raw = path.read_bytes()
    if raw[:4] == b"Obj\x01":  # timeline layout 2 (table version 8+): Avro-encoded commit metadata
        return next(iter(fastavro.reader(io.BytesIO(raw))))
    return json.loads(raw)


class FixtureTable:
    def __init__(self, root: Path):
        self.root = root
        self.props = _read_properties(root / ".hoodie" / "hoodie.properties")
        self.name = self.props["hoodie.table.name"]
        self.create_schema = self.props.get("hoodie.table.create.schema")
        candidates = list((root / ".hoodie").glob("*")) + list((root / ".hoodie" / "timeline").glob("*"))
        self.commit_schemas: list[tuple[str, str]] = []
        for path in sorted(candidates):
            if path.is_file() and path.name.endswith(COMMIT_ACTIONS):
                schema = (_read_commit(path).get("extraMetadata") or {}).get("schema")
                if schema:
                    self.commit_schemas.append((path.name, schema))
        self.base_files = sorted(p for p in root.rglob("*.parquet") if ".hoodie" not in p.parts)


_EXTRACTED: dict[str, FixtureTable] = {}


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("hudi_fixture_tables")


def load_fixture(zip_name: str, base: Path) -> FixtureTable:
    if zip_name not in _EXTRACTED:
        dest = base / zip_name[:-4]
        with zipfile.ZipFile(FIXTURES / zip_name) as zf:
            members = [m for m in zf.namelist() if not m.startswith("__MACOSX/")]
            zf.extractall(dest, members=members)
        roots = [p.parent.parent for p in dest.rglob("hoodie.properties")
                 if p.parent.name == ".hoodie" and ".hoodie" not in p.parent.parent.parts]  # not the metadata table
        assert len(roots) == 1, roots
        _EXTRACTED[zip_name] = FixtureTable(roots[0])
    return _EXTRACTED[zip_name]


def _as_spark_typed(t: pa.DataType) -> pa.DataType:
    """Undo parquet-avro's legacy list layout: its elements read back NOT NULL (see module docstring)."""
    if pa.types.is_list(t):
        vf = t.value_field
        nullable = True if vf.name == "array" else vf.nullable
        return pa.list_(pa.field("element", _as_spark_typed(vf.type), nullable=nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _as_spark_typed(f.type), f.nullable) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_field, pa.field("value", _as_spark_typed(t.item_type), t.item_field.nullable))
    return t


def base_file_schema(path: Path, *, data_only: bool = True) -> pa.Schema:
    schema = pq.read_schema(path)
    legacy = (schema.metadata or {}).get(b"writer.model.name") == b"avro"
    fields = [f for f in schema if not (data_only and f.name in META_COLUMNS)]
    if legacy:
        fields = [pa.field(f.name, _as_spark_typed(f.type), f.nullable) for f in fields]
    return pa.schema(fields)


needs_fixtures = pytest.mark.skipif(not ZIPS, reason=f"no fixture tables in {FIXTURES}")


# ----------------------------------------------------------------------------------------------------------
# the fixture tables


@needs_fixtures
def test_fixture_tables_found():
    assert len(ZIPS) >= 10


@needs_fixtures
@pytest.mark.parametrize("zip_name", ZIPS)
def test_arrow_to_avro_reproduces_every_commit_schema(zip_name, fixture_dir):
    table = load_fixture(zip_name, fixture_dir)
    assert table.commit_schemas, "every fixture table has commits with a schema"
    assert table.base_files
    for base_file in table.base_files:
        derived = arrow_to_avro(base_file_schema(base_file), table.name)
        for commit, schema_text in table.commit_schemas:
            assert derived == json.loads(schema_text), (base_file.name, commit)
            # the exact text Java's Schema.toString() wrote, key order included
            assert avro_json(derived) == schema_text, (base_file.name, commit)


@needs_fixtures
@pytest.mark.parametrize("zip_name", ZIPS)
def test_create_table_avro_reproduces_hoodie_properties(zip_name, fixture_dir):
    table = load_fixture(zip_name, fixture_dir)
    assert table.create_schema
    for base_file in table.base_files:
        assert avro_json(create_table_avro(base_file_schema(base_file), table.name)) == table.create_schema
    # [T, "null"] unions without defaults read the same as the commits' ["null", T]
    for _, schema_text in table.commit_schemas:
        assert avro_to_arrow(table.create_schema) == avro_to_arrow(schema_text)


@needs_fixtures
@pytest.mark.parametrize("zip_name", ZIPS)
def test_avro_to_arrow_gives_base_file_columns(zip_name, fixture_dir):
    table = load_fixture(zip_name, fixture_dir)
    for _, schema_text in table.commit_schemas:
        arrow = avro_to_arrow(schema_text)
        assert storage_schema(arrow) == arrow
        assert avro_to_arrow(json.loads(schema_text)) == arrow
        for base_file in table.base_files:
            file_schema = base_file_schema(base_file)
            assert arrow == file_schema, base_file.name
            assert storage_schema(file_schema) == file_schema
            # field order and names exactly as in the file
            assert arrow.names == file_schema.names


@needs_fixtures
@pytest.mark.parametrize("zip_name", ZIPS)
def test_parquet_avro_footer(zip_name, fixture_dir):
    """Base files written by parquet-avro carry meta fields + writer schema in ``parquet.avro.schema``."""
    table = load_fixture(zip_name, fixture_dir)
    commit_schema = json.loads(table.commit_schemas[-1][1])
    footers = 0
    for base_file in table.base_files:
        metadata = pq.read_schema(base_file).metadata or {}
        footer = metadata.get(b"parquet.avro.schema")
        if footer is None:
            continue
        footers += 1
        assert with_meta_fields_avro(commit_schema) == json.loads(footer)
        assert avro_json(with_meta_fields_avro(commit_schema)) == footer.decode()
        full = avro_to_arrow(footer.decode())
        assert full == base_file_schema(base_file, data_only=False)
        assert full.names[:5] == META_COLUMNS
        assert full == with_meta_columns(avro_to_arrow(commit_schema))
    if zip_name.startswith("cow_v6"):
        assert footers, "Java Hudi's COW base files carry the parquet-avro footer"


# ----------------------------------------------------------------------------------------------------------
# names, sizes


def test_record_name_and_namespace():
    assert record_name_and_namespace("trips") == ("trips_record", "hoodie.trips")
    assert record_name_and_namespace("my-table.v2") == ("my__table__v2_record", "hoodie.my__table__v2")
    assert sanitize_avro_name("1abc") == "__abc"
    assert sanitize_avro_name("_ok_9") == "_ok_9"
    assert sanitize_avro_name("a b") == "a__b"


def test_decimal_fixed_size_matches_spark():
    def spark(precision):  # Decimal.minBytesForPrecision, in doubles as Spark computes it
        n = 1
        while math.pow(2.0, 8 * n - 1) < math.pow(10.0, precision):
            n += 1
        return n

    assert [decimal_fixed_size(p) for p in range(1, 39)] == [spark(p) for p in range(1, 39)]
    assert decimal_fixed_size(10) == 5 and decimal_fixed_size(15) == 7 and decimal_fixed_size(38) == 16


# ----------------------------------------------------------------------------------------------------------
# arrow_to_avro details


def test_arrow_to_avro_spark_conventions():
    schema = pa.schema([
        pa.field("_hoodie_commit_time", pa.string()),          # meta columns are left out
        pa.field("id", pa.int64(), nullable=False),
        pa.field("b", pa.int8()),
        pa.field("ntz", pa.timestamp("ns")),
        pa.field("ts", pa.timestamp("ms", tz="Europe/Paris")),
        pa.field("c", pa.large_string(), metadata={b"comment": b"a comment"}),
        pa.field("arr", pa.list_(pa.decimal128(5, 2))),
        pa.field("m", pa.map_(pa.string(), pa.struct([("d", pa.decimal128(20, 3))]))),
        pa.field("s", pa.struct([pa.field("x", pa.list_(pa.struct([("y", pa.int32())])), nullable=False)])),
    ])
    avro = arrow_to_avro(schema, "t")
    assert avro["name"] == "t_record" and avro["namespace"] == "hoodie.t"
    fields = {f["name"]: f for f in avro["fields"]}
    assert list(fields) == ["id", "b", "ntz", "ts", "c", "arr", "m", "s"]
    assert fields["id"] == {"name": "id", "type": "long"}                 # NOT NULL: no union, no default
    assert fields["b"] == {"name": "b", "type": ["null", "int"], "default": None}
    assert fields["ntz"]["type"][1] == {"type": "long", "logicalType": "local-timestamp-micros"}
    assert fields["ts"]["type"][1] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["c"] == {"name": "c", "type": ["null", "string"], "doc": "a comment", "default": None}
    assert fields["arr"]["type"][1] == {"type": "array", "items": ["null", {
        "type": "fixed", "name": "fixed", "namespace": "hoodie.t.t_record.arr", "size": 3,
        "logicalType": "decimal", "precision": 5, "scale": 2}]}
    value_record = fields["m"]["type"][1]["values"][1]
    assert value_record["name"] == "m" and value_record["namespace"] == "hoodie.t.t_record"
    assert value_record["fields"][0]["type"][1]["namespace"] == "hoodie.t.t_record.m.d"
    s_record = fields["s"]["type"][1]
    x = s_record["fields"][0]
    assert "default" not in x
    assert x["type"]["items"][1] == {"type": "record", "name": "x", "namespace": "hoodie.t.t_record.s",
                                     "fields": [{"name": "y", "type": ["null", "int"], "default": None}]}
    fastavro.parse_schema(avro)
    # the create-table flavour: Spark's own unions, no defaults
    create = create_table_avro(schema, "t")
    assert create["fields"][1] == {"name": "b", "type": ["int", "null"]}
    assert avro_to_arrow(create) == avro_to_arrow(avro)


@pytest.mark.parametrize("field, fragment", [
    (pa.field("my col", pa.int32()), "`my col`"),
    (pa.field("1x", pa.int32()), "`1x`"),
    (pa.field("s", pa.struct([("a-b", pa.int32())])), "`s.a-b`"),
    (pa.field("u", pa.uint64()), "`u`"),
    (pa.field("t", pa.time64("us")), "`t`"),
    (pa.field("v", pa.null()), "`v`"),
    (pa.field("d", pa.duration("s")), "`d`"),
    (pa.field("m", pa.map_(pa.int32(), pa.string())), "`m`"),
    (pa.field("big", pa.decimal256(40, 2)), "`big`"),
])
def test_arrow_to_avro_rejects_what_hudi_cannot_store(field, fragment):
    with pytest.raises(SchemaError) as err:
        arrow_to_avro(pa.schema([field]), "orders")
    message = str(err.value)
    assert "table `orders`" in message and fragment in message and "Fix:" in message
    assert isinstance(err.value, PyHudiError)


def test_arrow_to_avro_rejects_case_duplicates():
    with pytest.raises(SchemaError, match="differ only in case"):
        arrow_to_avro(pa.schema([("a", pa.int32()), ("A", pa.int32())]), "t")


# ----------------------------------------------------------------------------------------------------------
# avro_to_arrow details


def test_avro_to_arrow_types_unions_and_references():
    avro = {
        "type": "record", "name": "r", "namespace": "ns", "fields": [
            {"name": "p", "type": {"type": "record", "name": "point", "fields": [
                {"name": "x", "type": "double"}]}},
            {"name": "q", "type": ["null", "point"], "default": None},          # reference by short name
            {"name": "q2", "type": "ns.point"},                                 # reference by full name
            {"name": "il", "type": ["int", "long"]},
            {"name": "fd", "type": ["null", "float", "double"]},
            {"name": "u", "type": ["int", "string"]},
            {"name": "e", "type": {"type": "enum", "name": "color", "symbols": ["RED"]}},
            {"name": "f", "type": {"type": "fixed", "name": "f4", "size": 4}},
            {"name": "bd", "type": {"type": "bytes", "logicalType": "decimal", "precision": 7, "scale": 3}},
            {"name": "tm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "ltm", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
            {"name": "uuid", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "tmi", "type": {"type": "int", "logicalType": "time-millis"}},
            {"name": "arr", "type": {"type": "array", "items": "string"}},
            {"name": "m", "type": {"type": "map", "values": ["null", "long"]}},
            {"name": "doc", "type": "string", "doc": "documented"},
        ]}
    schema = avro_to_arrow(json.dumps(avro))
    point = pa.struct([pa.field("x", pa.float64(), nullable=False)])
    expected = pa.schema([
        pa.field("p", point, nullable=False),
        pa.field("q", point),
        pa.field("q2", point, nullable=False),
        pa.field("il", pa.int64(), nullable=False),
        pa.field("fd", pa.float64()),
        pa.field("u", pa.struct([("member0", pa.int32()), ("member1", pa.string())]), nullable=False),
        pa.field("e", pa.string(), nullable=False),
        pa.field("f", pa.binary(4), nullable=False),
        pa.field("bd", pa.decimal128(7, 3), nullable=False),
        pa.field("tm", pa.timestamp("ms", tz="UTC"), nullable=False),
        pa.field("ltm", pa.timestamp("ms"), nullable=False),
        pa.field("uuid", pa.string(), nullable=False),
        pa.field("tmi", pa.time32("ms"), nullable=False),
        pa.field("arr", pa.list_(pa.field("element", pa.string(), nullable=False)), nullable=False),
        pa.field("m", pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int64())),
                 nullable=False),
        pa.field("doc", pa.string(), nullable=False),
    ])
    assert schema == expected
    assert schema.field("doc").metadata == {b"comment": b"documented"}


def test_avro_to_arrow_rejects_bad_input():
    with pytest.raises(SchemaError, match="refers to itself"):
        avro_to_arrow({"type": "record", "name": "node", "fields": [
            {"name": "next", "type": ["null", "node"]}]})
    with pytest.raises(SchemaError, match="must be an Avro record"):
        avro_to_arrow('"string"')
    with pytest.raises(SchemaError, match="not valid JSON"):
        avro_to_arrow("{oops")
    with pytest.raises(SchemaError, match="undefined type"):
        avro_to_arrow({"type": "record", "name": "r", "fields": [{"name": "a", "type": "missing"}]})


# ----------------------------------------------------------------------------------------------------------
# round trips (hypothesis)

_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True).filter(lambda n: n not in META_COLUMNS)


@st.composite
def _decimal(draw):
    precision = draw(st.integers(1, 38))
    return pa.decimal128(precision, draw(st.integers(0, precision)))


_LEAF = st.one_of(
    st.sampled_from([pa.bool_(), pa.int32(), pa.int64(), pa.float32(), pa.float64(), pa.string(), pa.binary(),
                     pa.date32(), pa.timestamp("us", tz="UTC"), pa.timestamp("us")]),
    _decimal(),
)


@st.composite
def _fields(draw, children, min_size=1, max_size=4):
    names = draw(st.lists(_NAME, min_size=min_size, max_size=max_size, unique_by=str.lower))
    return [pa.field(n, draw(children), nullable=draw(st.booleans())) for n in names]


def _nested(children):
    return st.one_of(
        st.builds(lambda t, n: pa.list_(pa.field("element", t, nullable=n)), children, st.booleans()),
        st.builds(lambda t, n: pa.map_(pa.field("key", pa.string(), nullable=False),
                                       pa.field("value", t, nullable=n)), children, st.booleans()),
        _fields(children).map(pa.struct),
    )


STORAGE_TYPES = st.recursive(_LEAF, _nested, max_leaves=12)
STORAGE_SCHEMAS = _fields(STORAGE_TYPES, max_size=6).map(pa.schema)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=STORAGE_SCHEMAS, table=st.sampled_from(["t", "trips", "my-table", "9lives"]))
def test_round_trip_arrow_avro_arrow(schema, table):
    avro = arrow_to_avro(schema, table)
    fastavro.parse_schema(avro)  # valid Avro: legal names, no clashing named types
    assert avro_to_arrow(avro) == schema
    assert avro_to_arrow(avro_json(avro)) == schema
    assert arrow_to_avro(avro_to_arrow(avro), table) == avro
    assert avro_to_arrow(create_table_avro(schema, table)) == schema
    assert storage_schema(schema) == schema


_NON_STORAGE_LEAF = st.sampled_from([
    pa.int8(), pa.int16(), pa.uint8(), pa.uint16(), pa.uint32(), pa.float16(), pa.large_string(),
    pa.large_binary(), pa.binary(3), pa.date64(), pa.timestamp("s"), pa.timestamp("ns", tz="Asia/Tokyo"),
    pa.dictionary(pa.int8(), pa.string()), pa.decimal256(12, 4),
])


@settings(max_examples=100, deadline=None)
@given(schema=_fields(st.recursive(st.one_of(_LEAF, _NON_STORAGE_LEAF), _nested, max_leaves=8),
                      max_size=5).map(pa.schema))
def test_storage_schema_is_idempotent_and_avro_stable(schema):
    stored = storage_schema(schema)
    assert storage_schema(stored) == stored
    assert arrow_to_avro(schema, "t") == arrow_to_avro(stored, "t")
    assert avro_to_arrow(arrow_to_avro(schema, "t")) == stored


# ----------------------------------------------------------------------------------------------------------
# storage_schema / with_meta_columns


@pytest.mark.parametrize("given_type, stored", [
    (pa.int8(), pa.int32()), (pa.int16(), pa.int32()), (pa.uint8(), pa.int32()), (pa.uint16(), pa.int32()),
    (pa.uint32(), pa.int64()), (pa.float16(), pa.float32()), (pa.large_string(), pa.string()),
    (pa.large_binary(), pa.binary()), (pa.binary(16), pa.binary()), (pa.decimal256(20, 2), pa.decimal128(20, 2)),
    (pa.date64(), pa.date32()), (pa.timestamp("ns", tz="Asia/Tokyo"), pa.timestamp("us", tz="UTC")),
    (pa.timestamp("s"), pa.timestamp("us")), (pa.dictionary(pa.int32(), pa.large_string()), pa.string()),
    (pa.large_list(pa.int8()), pa.list_(pa.field("element", pa.int32()))),
    (pa.list_(pa.int64(), 3), pa.list_(pa.field("element", pa.int64()))),
    (pa.map_(pa.large_string(), pa.int16()),
     pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int32()))),
    (pa.struct([("a", pa.int8()), ("b", pa.struct([("c", pa.date64())]))]),
     pa.struct([("a", pa.int32()), ("b", pa.struct([("c", pa.date32())]))])),
])
def test_storage_schema_types(given_type, stored):
    schema = pa.schema([pa.field("c", given_type, nullable=False)], metadata={b"k": b"v"})
    result = storage_schema(schema)
    assert result == pa.schema([pa.field("c", stored, nullable=False)])
    assert result.metadata is None


def test_storage_schema_rejects_unsigned_64():
    with pytest.raises(SchemaError, match=r"column `n`.*Fix: cast `n` to BIGINT"):
        storage_schema(pa.schema([("n", pa.uint64())]))


def test_with_meta_columns():
    schema = pa.schema([("_hoodie_record_key", pa.string()), ("id", pa.int32())], metadata={b"a": b"b"})
    result = with_meta_columns(schema)
    assert result.names == META_COLUMNS + ["id"]
    assert all(result.field(n).type == pa.string() and result.field(n).nullable for n in META_COLUMNS)
    assert result.metadata == {b"a": b"b"}


# ----------------------------------------------------------------------------------------------------------
# to_storage


NESTED_TARGET = pa.schema([
    pa.field("id", pa.int32(), nullable=False),
    pa.field("s", pa.struct([pa.field("b", pa.string()), pa.field("a", pa.int32(), nullable=False),
                             pa.field("new", pa.float64())])),
    pa.field("l", pa.list_(pa.field("element", pa.int64()))),
    pa.field("m", pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int32()))),
    pa.field("ts", pa.timestamp("us", tz="UTC")),
    pa.field("filled", pa.string()),
])


def _nested_source() -> pa.Table:
    s = pa.array([{"a": 1, "b": "x"}, None, {"a": 3, "b": None}, {"a": 4, "b": "w"}],
                 type=pa.struct([("a", pa.int8()), ("b", pa.large_string())]))
    return pa.table({
        "extra": pa.array([1, 2, 3, 4]),
        "S": s,                                                    # matched case-insensitively
        "id": pa.array([1, 2, 3, 4], pa.int16()),
        "l": pa.array([[1, 2], None, [], [4, None]], pa.large_list(pa.int8())),
        "m": pa.array([[("k", 1)], None, [("z", 2), ("y", None)], []], pa.map_(pa.large_string(), pa.int8())),
        "ts": pa.array([1_500, 2_999, None, 0], pa.timestamp("ns", tz="America/Chicago")),
    })


def test_to_storage_casts_reorders_and_fills():
    result = to_storage(_nested_source(), NESTED_TARGET)
    assert isinstance(result, pa.Table)
    assert result.schema == NESTED_TARGET
    utc = dt.timezone.utc
    assert result.to_pylist()[0] == {
        "id": 1, "s": {"b": "x", "a": 1, "new": None}, "l": [1, 2], "m": [("k", 1)],
        "ts": dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=utc), "filled": None}
    rows = result.to_pylist()
    assert rows[1]["s"] is None and rows[1]["l"] is None and rows[1]["m"] is None
    assert rows[2]["s"] == {"b": None, "a": 3, "new": None} and rows[2]["ts"] is None
    assert rows[3]["l"] == [4, None] and rows[3]["m"] == []
    assert rows[1]["ts"] == dt.datetime(1970, 1, 1, 0, 0, 0, 2, tzinfo=utc)   # ns truncated to us


def test_to_storage_sliced_chunked_and_batches():
    source = _nested_source()
    sliced = pa.concat_tables([source.slice(1, 2), source.slice(0, 1), source.slice(3)])
    assert sliced.column("S").num_chunks == 3
    result = to_storage(sliced, NESTED_TARGET)
    expected = to_storage(source, NESTED_TARGET).to_pylist()
    assert result.to_pylist() == expected[1:3] + expected[0:1] + expected[3:]
    batch = to_storage(source.to_batches()[0].slice(2), NESTED_TARGET)
    assert isinstance(batch, pa.RecordBatch) and batch.to_pylist() == expected[2:]
    empty = to_storage(source.slice(0, 0), NESTED_TARGET)
    assert empty.num_rows == 0 and empty.schema == NESTED_TARGET


def test_to_storage_writes_parquet_that_reads_back_as_storage_schema(tmp_path):
    result = to_storage(_nested_source(), NESTED_TARGET)
    path = tmp_path / "f.parquet"
    pq.write_table(result, path)
    back = pq.read_table(path)
    assert back.schema == NESTED_TARGET
    assert back.to_pylist() == result.to_pylist()


def test_to_storage_dictionary_and_list_variants():
    data = pa.table({
        "d": pa.array(["a", None, "a"]).dictionary_encode(),
        "f": pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int16(), 2)),
        "s": pa.array([{"l": [1]}, {"l": None}, None], pa.struct([("l", pa.large_list(pa.int8()))])),
    })
    target = storage_schema(data.schema)
    out = to_storage(data, target)
    assert out.schema == target
    assert out.to_pylist() == [{"d": "a", "f": [1, 2], "s": {"l": [1]}},
                               {"d": None, "f": None, "s": {"l": None}},
                               {"d": "a", "f": [3, 4], "s": None}]


def test_to_storage_reads_old_files_into_an_evolved_schema():
    """After an int -> long / int -> string evolution, old base files project into the new schema."""
    old = pa.table({"id": pa.array([1, 2], pa.int32()), "code": pa.array([7, None], pa.int32())})
    evolved = check_compatible(old.schema, pa.schema([("id", pa.int64()), ("code", pa.string()),
                                                      ("extra", pa.float64())]), "t")
    assert to_storage(old, evolved).to_pylist() == [{"id": 1, "code": "7", "extra": None},
                                                    {"id": 2, "code": None, "extra": None}]


def test_to_storage_null_rules():
    target = pa.schema([pa.field("id", pa.int32(), nullable=False)])
    with pytest.raises(SchemaError, match=r"table `t`: column `id` is NOT NULL .* 1 null"):
        to_storage(pa.table({"id": pa.array([1, None])}), target, table_name="t")
    with pytest.raises(SchemaError, match="no column `id`"):
        to_storage(pa.table({"x": pa.array([1])}), target)
    # a NOT NULL field inside a null struct is fine; inside a present struct it is not
    inner = pa.schema([pa.field("s", pa.struct([pa.field("a", pa.int32(), nullable=False)]))])
    ok = pa.table({"s": pa.array([None, {"a": 1}], pa.struct([("a", pa.int32())]))})
    assert to_storage(ok, inner).to_pylist() == [{"s": None}, {"s": {"a": 1}}]
    bad = pa.table({"s": pa.array([{"a": None}], pa.struct([("a", pa.int64())]))})
    with pytest.raises(SchemaError, match="`s.a` is NOT NULL"):
        to_storage(bad, inner)


def test_to_storage_cast_failure_names_column():
    target = pa.schema([("when", pa.date32())])
    with pytest.raises(SchemaError) as err:
        to_storage(pa.table({"when": ["2024-01-01", "not a date"]}), target, table_name="events")
    assert "table `events`" in str(err.value) and "`when`" in str(err.value) and "DATE" in str(err.value)


def test_to_storage_promotions():
    target = pa.schema([("a", pa.int64()), ("b", pa.string()), ("c", pa.float64()), ("d", pa.decimal128(10, 2)),
                        ("e", pa.binary())])
    data = pa.table({"a": pa.array([1], pa.int32()), "b": pa.array([7], pa.int64()),
                     "c": pa.array([1.5], pa.float32()), "d": pa.array([1.005], pa.float64()),
                     "e": pa.array(["x"])})
    assert to_storage(data, target).to_pylist() == [
        {"a": 1, "b": "7", "c": 1.5, "d": decimal.Decimal("1.00"), "e": b"x"}]


def test_to_storage_decimal_overflow_is_a_schema_error():
    target = check_compatible(pa.schema([("p", pa.decimal128(4, 2))]), pa.schema([("p", pa.int64())]), "t")
    assert to_storage(pa.table({"p": [12]}), target).column("p").to_pylist() == [decimal.Decimal("12.00")]
    with pytest.raises(SchemaError, match="`p`"):
        to_storage(pa.table({"p": [123]}), target, table_name="t")


def test_avro_schema_accepts_the_data():
    """Records cast into the storage schema are valid for the Avro schema (as in Avro log blocks)."""
    table = to_storage(_nested_source(), NESTED_TARGET)
    avro = fastavro.parse_schema(arrow_to_avro(NESTED_TARGET, "t"))
    rows = []
    for row in table.to_pylist():
        row["m"] = dict(row["m"]) if row["m"] is not None else None
        rows.append(row)
    out = io.BytesIO()
    fastavro.writer(out, avro, rows)
    out.seek(0)
    assert [r["id"] for r in fastavro.reader(out)] == [1, 2, 3, 4]


# ----------------------------------------------------------------------------------------------------------
# check_compatible


TABLE = pa.schema([
    pa.field("id", pa.int32(), nullable=False),
    pa.field("amount", pa.int64()),
    pa.field("name", pa.string()),
    pa.field("tags", pa.list_(pa.field("element", pa.int32()))),
    pa.field("props", pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.float32()))),
    pa.field("addr", pa.struct([pa.field("zip", pa.int32()), pa.field("city", pa.string())])),
])


def test_check_compatible_identity_and_meta_columns():
    assert check_compatible(TABLE, TABLE, "t") == TABLE
    assert check_compatible(with_meta_columns(TABLE), with_meta_columns(TABLE), "t") == TABLE


@pytest.mark.parametrize("table_type, batch_type, result", [
    # the batch is cast to the table's type
    (pa.int64(), pa.int32(), pa.int64()),
    (pa.float64(), pa.int64(), pa.float64()),
    (pa.float64(), pa.float32(), pa.float64()),
    (pa.string(), pa.int32(), pa.string()),
    (pa.string(), pa.float64(), pa.string()),
    (pa.binary(), pa.string(), pa.binary()),
    (pa.string(), pa.binary(), pa.string()),
    (pa.decimal128(12, 2), pa.int32(), pa.decimal128(12, 2)),
    (pa.decimal128(4, 2), pa.int64(), pa.decimal128(4, 2)),  # as Hudi: values that do not fit fail on write
    (pa.decimal128(12, 3), pa.decimal128(10, 2), pa.decimal128(12, 3)),
    (pa.string(), pa.date32(), pa.string()),
    (pa.date32(), pa.string(), pa.date32()),
    (pa.int32(), pa.int16(), pa.int32()),          # storage-normalised first: SHORT is int in Avro
    # the table's column widens
    (pa.int32(), pa.int64(), pa.int64()),
    (pa.int32(), pa.float64(), pa.float64()),
    (pa.int64(), pa.float32(), pa.float32()),
    (pa.float32(), pa.float64(), pa.float64()),
    (pa.int32(), pa.string(), pa.string()),
    (pa.float64(), pa.string(), pa.string()),
    (pa.timestamp("us", tz="UTC"), pa.timestamp("ns", tz="America/New_York"), pa.timestamp("us", tz="UTC")),
])
def test_check_compatible_promotions(table_type, batch_type, result):
    table = pa.schema([pa.field("c", table_type)])
    batch = pa.schema([pa.field("c", batch_type)])
    assert check_compatible(table, batch, "t") == pa.schema([pa.field("c", result)])


@pytest.mark.parametrize("table_type, batch_type", [
    (pa.int32(), pa.binary()),
    (pa.binary(), pa.int64()),
    (pa.int64(), pa.bool_()),
    (pa.date32(), pa.timestamp("us", tz="UTC")),
    (pa.timestamp("us", tz="UTC"), pa.timestamp("us")),
    (pa.decimal128(10, 2), pa.decimal128(12, 2)),
    (pa.int64(), pa.decimal128(10, 2)),
    (pa.int32(), pa.list_(pa.int32())),
    (pa.struct([("a", pa.int32())]), pa.string()),
])
def test_check_compatible_clashes(table_type, batch_type):
    with pytest.raises(SchemaError) as err:
        check_compatible(pa.schema([("price", table_type)]), pa.schema([("price", batch_type)]), "orders")
    message = str(err.value)
    assert "table `orders`" in message and "column `price`" in message and "Fix:" in message
    assert "in the table" in message and "in the batch" in message


def test_check_compatible_clash_message_names_types():
    with pytest.raises(SchemaError) as err:
        check_compatible(pa.schema([("price", pa.int64())]), pa.schema([("price", pa.bool_())]), "orders")
    message = str(err.value)
    assert "BIGINT (Arrow int64)" in message and "BOOLEAN (Arrow bool)" in message
    assert "CAST(`price` AS BIGINT)" in message


def test_check_compatible_new_columns():
    batch = pa.schema(list(TABLE) + [pa.field("added", pa.date32())])
    assert check_compatible(TABLE, batch, "t") == batch
    # the result keeps the table's column order, new columns last
    shuffled = pa.schema([pa.field("added", pa.date32())] + list(reversed(list(TABLE))))
    assert check_compatible(TABLE, shuffled, "t") == batch
    with pytest.raises(SchemaError, match=r"adds column `flag`.*NOT NULL.*Fix"):
        check_compatible(TABLE, pa.schema(list(TABLE) + [pa.field("flag", pa.bool_(), nullable=False)]), "t")


def test_check_compatible_missing_columns():
    batch = pa.schema([f for f in TABLE if f.name not in ("name", "tags")])
    with pytest.raises(SchemaError) as err:
        check_compatible(TABLE, batch, "t")
    message = str(err.value)
    assert "`name` (STRING)" in message and "`tags` (ARRAY<INT>)" in message
    assert "hoodie.write.set.null.for.missing.columns" in message
    assert check_compatible(TABLE, batch, "t", set_null_for_missing_columns=True) == TABLE
    assert check_compatible(TABLE, batch, "t", reconcile_schema=True) == TABLE
    assert check_compatible(TABLE, batch, "t", allow_column_drop=True) == batch
    no_id = pa.schema([f for f in TABLE if f.name != "id"])
    with pytest.raises(SchemaError, match="`id`.*NOT NULL"):
        check_compatible(TABLE, no_id, "t", set_null_for_missing_columns=True)


def test_check_compatible_case_and_nullability():
    batch = pa.schema([pa.field(f.name.upper(), f.type, nullable=True) for f in TABLE])
    result = check_compatible(TABLE, batch, "t")
    assert result.names == TABLE.names
    assert result.field("id").nullable            # nullability widens
    with pytest.raises(SchemaError, match="lacks column"):
        check_compatible(TABLE, batch, "t", case_sensitive=True)
    dupes = pa.schema(list(TABLE) + [pa.field("ID", pa.int32())])
    with pytest.raises(SchemaError, match="same column"):
        check_compatible(TABLE, dupes, "t")


def test_check_compatible_nested():
    batch = pa.schema([
        pa.field("id", pa.int32(), nullable=False),
        pa.field("amount", pa.int32()),                                         # narrower: table keeps long
        pa.field("name", pa.string()),
        pa.field("tags", pa.list_(pa.field("element", pa.int64()))),           # element widens
        pa.field("props", pa.map_(pa.string(), pa.float64())),                  # value widens
        pa.field("addr", pa.struct([pa.field("CITY", pa.string()), pa.field("zip", pa.int64()),
                                    pa.field("country", pa.string())])),        # nested add + widen
    ])
    result = check_compatible(TABLE, batch, "t")
    assert result == pa.schema([
        pa.field("id", pa.int32(), nullable=False),
        pa.field("amount", pa.int64()),
        pa.field("name", pa.string()),
        pa.field("tags", pa.list_(pa.field("element", pa.int64()))),
        pa.field("props", pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.float64()))),
        pa.field("addr", pa.struct([pa.field("zip", pa.int64()), pa.field("city", pa.string()),
                                    pa.field("country", pa.string())])),
    ])
    missing_nested = pa.schema([f if f.name != "addr" else pa.field("addr", pa.struct([("zip", pa.int32())]))
                                for f in TABLE])
    with pytest.raises(SchemaError, match=r"`addr\.city`"):
        check_compatible(TABLE, missing_nested, "t")
    with pytest.raises(SchemaError, match=r"column `tags\.element`"):
        check_compatible(TABLE, pa.schema([f if f.name != "tags" else pa.field("tags", pa.list_(pa.binary()))
                                           for f in TABLE]), "t")
    # the evolved schema casts the batch
    data = pa.table({"id": pa.array([1], pa.int32()), "amount": pa.array([5], pa.int32()), "name": ["n"],
                     "tags": pa.array([[1]], pa.list_(pa.int64())), "props": pa.array([[("a", 1.0)]],
                                                                                       pa.map_(pa.string(), pa.float64())),
                     "addr": pa.array([{"CITY": "c", "zip": 7, "country": "x"}],
                                      pa.struct([("CITY", pa.string()), ("zip", pa.int64()), ("country", pa.string())]))})
    out = to_storage(data, result)
    assert out.to_pylist() == [{"id": 1, "amount": 5, "name": "n", "tags": [1], "props": [("a", 1.0)],
                                "addr": {"zip": 7, "city": "c", "country": "x"}}]


# ----------------------------------------------------------------------------------------------------------
# spark_ddl


def test_spark_ddl():
    schema = pa.schema([
        pa.field("id", pa.int32(), nullable=False, metadata={b"comment": b"the key's"}),
        pa.field("we`ird name", pa.large_string()),
        pa.field("b", pa.int8()), pa.field("s", pa.int16()), pa.field("l", pa.int64()),
        pa.field("f", pa.float32()), pa.field("d", pa.float64()), pa.field("dec", pa.decimal128(10, 5)),
        pa.field("dt", pa.date32()), pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("ntz", pa.timestamp("us")),
        pa.field("bin", pa.binary()),
        pa.field("arr", pa.list_(pa.struct([pa.field("x", pa.string(), nullable=False)]))),
        pa.field("m", pa.map_(pa.string(), pa.struct([("v", pa.float64())]))),
    ])
    assert spark_ddl(schema) == (
        "`id` INT NOT NULL COMMENT 'the key\\'s', `we``ird name` STRING, `b` TINYINT, `s` SMALLINT, "
        "`l` BIGINT, `f` FLOAT, `d` DOUBLE, `dec` DECIMAL(10,5), `dt` DATE, `ts` TIMESTAMP, "
        "`ntz` TIMESTAMP_NTZ, `bin` BINARY, `arr` ARRAY<STRUCT<`x`: STRING NOT NULL>>, "
        "`m` MAP<STRING, STRUCT<`v`: DOUBLE>>")
    assert spark_ddl(pa.schema([])) == ""


@needs_fixtures
def test_spark_ddl_of_a_fixture_table(fixture_dir):
    table = load_fixture("cow_v6_nonpartitioned.zip", fixture_dir)
    ddl = spark_ddl(with_meta_columns(avro_to_arrow(table.commit_schemas[0][1])))
    assert ddl.startswith("`_hoodie_commit_time` STRING, ")
    assert ("`decimalField` DECIMAL(10,5), `dateField` DATE, `timestampField` TIMESTAMP, `binaryField` BINARY, "
            "`arrayField` ARRAY<STRUCT<`arr_struct_f1`: STRING, `arr_struct_f2`: INT>>, "
            "`mapField` MAP<STRING, STRUCT<`map_field_value_struct_f1`: DOUBLE, `map_field_value_struct_f2`: "
            "BOOLEAN>>, `structField` STRUCT<`field1`: STRING, `field2`: INT, `child_struct`: "
            "STRUCT<`child_field1`: DOUBLE, `child_field2`: BOOLEAN>>") in ddl
