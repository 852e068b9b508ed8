"""Helpers shared by the tests: the Java-written fixture tables, hudi-rs as the independent reader, and
order-insensitive row comparison."""

from __future__ import annotations

import datetime
import os
import zipfile
from pathlib import Path

import pyarrow as pa

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "hudi-tables"
if not FIXTURES.exists():  # a clone next to shared/ (CI) or the repo's own checkout
    FIXTURES = Path(os.environ.get("PYHUDI_FIXTURES", "/work/shared/fixtures/hudi-tables"))


# Hudi 1.x tables from apache/hudi-rs's test data that the shared fixtures do not hold (its README says which).
HUDI_RS_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hudi-rs"


def fixture_names(pattern: str) -> list[str]:
    """Names of the Java-written fixture tables (shared and hudi-rs's) matching a glob pattern, sorted."""
    return sorted({p.stem for folder in (FIXTURES, HUDI_RS_FIXTURES) for p in folder.glob(f"{pattern}.zip")})


def fixture_table(name: str, tmp_path_factory) -> Path:
    """Unzip fixture NAME.zip into its own temporary folder; returns the table's base path."""
    target = tmp_path_factory.mktemp(name)
    source = FIXTURES / f"{name}.zip"
    if not source.exists():
        source = HUDI_RS_FIXTURES / f"{name}.zip"
    with zipfile.ZipFile(source) as archive:
        members = [m for m in archive.namelist() if not m.startswith("__MACOSX")]
        archive.extractall(target, members)
    tops = {Path(m).parts[0] for m in members}
    (top,) = tops
    return target / top


def times(values) -> list[str]:
    """The instant times of typed results (Instants, WriteResults) or time strings, in order."""
    from pyhudi.table_api import instant_time
    return [instant_time(v) for v in values]


def hudi_rs_read(path, *, as_of: str | None = None, start: str | None = None, end: str | None = None,
                 read_optimized: bool = False) -> pa.Table:
    """Rows hudi-rs (the native Hudi reader) returns for the table."""
    from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder

    table = HudiTableBuilder.from_base_uri(str(path)).build()
    options = HudiReadOptions()
    if start is not None:
        options = options.with_query_type(HudiQueryType.Incremental).with_start_timestamp(start)
        if end is not None:
            options = options.with_end_timestamp(end)
    elif as_of is not None:
        options = options.with_as_of_timestamp(as_of)
    if read_optimized:
        options = options.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    batches = table.read(options)
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)


def rows(table_or_df, columns=None, key="_hoodie_record_key") -> list[tuple]:
    """Sorted comparable rows from a pyarrow Table or Spark DataFrame."""
    if hasattr(table_or_df, "toArrow"):
        table_or_df = table_or_df.toArrow()
    columns = columns or table_or_df.column_names
    data = table_or_df.select(columns).to_pylist()
    out = [tuple(_comparable(row[c]) for c in columns) for row in data]
    return sorted(out, key=repr)


def _comparable(value):
    if isinstance(value, list):
        return tuple(_comparable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _comparable(v)) for k, v in value.items()))
    if hasattr(value, "tzinfo") and getattr(value, "tzinfo", None) is not None:
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


def assert_same_rows_as_hudi_rs(spark, path, min_columns: int) -> list[str]:
    """pyhudi and hudi-rs return the same rows for the table, now and at every completed instant (on the
    columns both return); returns those columns."""
    import pyhudi
    from pyhudi.table import HudiTable

    theirs = hudi_rs_read(path)
    ours = pyhudi.read(spark, path)
    columns = [c for c in theirs.column_names if c in ours.columns]
    assert len(columns) >= min_columns, columns
    assert rows(ours, columns) == rows(theirs, columns)
    for instant in HudiTable.load(str(path)).timeline().completed_writes():
        assert rows(pyhudi.read(spark, path, {"as.of.instant": instant.time}), columns) == \
            rows(hudi_rs_read(path, as_of=instant.time), columns), instant.time
    return columns


def add_stand_in_metadata_table(path) -> None:
    """What a Java writer leaves beside its data: .hoodie/metadata (here a stand-in: a hoodie.properties and a
    files-partition log file) and hoodie.table.metadata.partitions=files in the table's hoodie.properties. pyhudi
    never reads it, only drops it (pyhudi.table.metadata_table)."""
    from pyhudi.table import HudiTable, update_table_properties
    from pyhudi.table.metadata_table import METADATA_FOLDER

    folder = Path(path) / METADATA_FOLDER
    (folder / ".hoodie").mkdir(parents=True, exist_ok=True)
    (folder / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=metadata\n")
    (folder / "files").mkdir(exist_ok=True)
    (folder / "files" / ".files-0000-0_00000000000000010.log.1_0-1-0").write_bytes(b"#HUDI#")
    update_table_properties(HudiTable.load(str(path)).storage, {"hoodie.table.metadata.partitions": "files",
                                                                "hoodie.table.metadata.partitions.inflight": ""})


def has_metadata_table(path) -> bool:
    """hoodie.properties names a metadata table partition, or its folder exists."""
    from pyhudi.table import HudiTable
    from pyhudi.table.metadata_table import METADATA_FOLDER, metadata_partitions
    from pyhudi.table.properties import read_table_properties

    storage = HudiTable.load(str(path)).storage
    return bool(metadata_partitions(read_table_properties(storage).values)) or storage.exists(METADATA_FOLDER)


def assert_metadata_table_agrees(path, kept: bool) -> None:
    """`kept`: hoodie.properties names only the metadata table's `files` partition, no other metadata partition
    is left, and the files partition lists exactly the data files in storage, partition by partition (and those
    partitions under __all_partitions__). Else the table has no metadata table at all."""
    from pyhudi.commit.metadata_table import metadata_storage
    from pyhudi.commit.metadata_table.files_slice import latest_slice, read_files_records
    from pyhudi.commit.metadata_table.records import ALL_PARTITIONS_KEY, data_partition
    from pyhudi.table import HudiTable
    from pyhudi.timeline import Timeline

    if not kept:
        assert not has_metadata_table(path)
        return
    table = HudiTable.load(str(path))
    assert table.properties.get("hoodie.table.metadata.partitions") == "files"
    assert not table.properties.get("hoodie.table.metadata.partitions.inflight")
    mdt = metadata_storage(table.storage)
    assert sorted(mdt.list_dirs("")) == [".hoodie", "files"]
    records = read_files_records(mdt, latest_slice(mdt, Timeline.load(mdt), table.timeline()))
    listed = {(data_partition(key), name) for key, record in records.items() if key != ALL_PARTITIONS_KEY
              for name in record.live()}
    base = Path(path)
    on_disk = {("" if f.parent == base else f.parent.relative_to(base).as_posix(), f.name)
               for f in base.rglob("*") if f.is_file() and ".hoodie" not in f.relative_to(base).parts
               and not f.name.startswith(".hoodie_partition_metadata") and f.name != ".DS_Store"}
    assert listed == on_disk
    assert {data_partition(p) for p in records[ALL_PARTITIONS_KEY].live()} >= {p for p, _ in on_disk}


def check_example_tables(location) -> None:
    """The tables the example dbt project (integration/example) leaves, as hudi-rs reads them; `location(table)`
    gives a table's base path (test_example_project.py, and over Spark Connect in test_spark_connect.py)."""
    import os
    from pathlib import Path

    fct = location("fct_orders")
    props = (Path(fct) / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.type=MERGE_ON_READ" in props and "hoodie.table.precombine.field=updated_at" in props
    # batch 2 upserted 102 and 104 and inserted 105 and 106
    assert rows(hudi_rs_read(fct), ["order_id", "status"]) == [
        (101, "placed"), (102, "shipped"), (103, "shipped"), (104, "cancelled"), (105, "placed"), (106, "placed")]
    # run-operation compact committed a compaction on the fact table's timeline
    assert any(f.endswith(".commit") for f in os.listdir(Path(fct) / ".hoodie"))

    revenue = {str(day): (orders, float(amount)) for day, orders, amount in
               rows(hudi_rs_read(location("daily_revenue")), ["order_date", "orders", "revenue"])}
    assert revenue == {"2024-01-01": (3, 42.75), "2024-01-02": (2, 42.0), "2024-01-03": (1, 5.0)}

    dim = location("dim_customers")
    assert rows(hudi_rs_read(dim), ["customer_id", "country", "orders"]) == [
        (1, "BE", 2), (2, "DE", 2), (3, "IN", 1), (4, "PL", 1)]
    assert any(f.endswith(".replacecommit") for f in os.listdir(Path(dim) / ".hoodie"))

    history = rows(hudi_rs_read(location("customers_snapshot")), ["customer_id", "country"])
    assert history == [(1, "BE"), (1, "NL"), (2, "DE"), (3, "IN"), (4, "PL")]
