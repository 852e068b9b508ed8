"""Random table shapes and rows for the conformance harness (seeded, deterministic for a seed).

A shape is the column list in its declared order, with roles: record key column(s), 0-2 partition columns
anywhere in the list, an optional ordering (preCombine) column, and data columns of every type the harness covers.
Rows are generated as Python values by *identity index*: the key columns are a function of the index, so two
statements can address the same record without the generator knowing the table's current state.
"""

from __future__ import annotations

import datetime
import decimal
import random
from dataclasses import dataclass, field

DATA_TYPES = ["int", "bigint", "decimal(10,2)", "date", "timestamp", "string", "boolean",
              "struct<a:int,b:string>", "array<int>", "map<string,int>"]
SCALAR_TYPES = {"int", "bigint", "decimal(10,2)", "date", "timestamp", "string", "boolean"}
KEY_TYPES = ["int", "bigint", "string"]
PARTITION_TYPES = ["int", "string", "date", "boolean"]
ORDERING_TYPES = ["int", "bigint", "timestamp"]

INDEX_TYPES = ["SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "BUCKET"]
GLOBAL_INDEXES = ("GLOBAL_SIMPLE", "GLOBAL_BLOOM")

BASE_DATE = datetime.date(2024, 1, 1)
BASE_TIME = datetime.datetime(2024, 1, 1, 0, 0, 0)


@dataclass
class Column:
    name: str
    type: str
    role: str          # key | partition | ordering | data

    @property
    def scalar(self) -> bool:
        return self.type in SCALAR_TYPES


@dataclass
class IndexSettings:
    """The index and file-sizing settings a CREATE TABLE / CTAS sets (None: not set, Hudi's default)."""
    type: str | None = None                    # hoodie.index.type (default SIMPLE)
    buckets: int | None = None                 # hoodie.bucket.index.num.buckets (BUCKET)
    bucket_engine: bool = False                # also says hoodie.index.bucket.engine = 'SIMPLE' (BUCKET)
    update_partition_path: bool | None = None  # hoodie.{simple,bloom}.index.update.partition.path (GLOBAL_*)
    small_file_limit_zero: bool = False        # hoodie.parquet.small.file.limit = 0
    max_file_size: int | None = None           # hoodie.parquet.max.file.size

    @property
    def is_global(self) -> bool:
        return self.type in GLOBAL_INDEXES

    @property
    def moves(self) -> bool:
        """A global index whose records move to the partition they arrive with (update.partition.path, default
        true); False for a global index that updates a record in place, keeping its stored partition path."""
        return self.is_global and self.update_partition_path is not False

    @property
    def in_place(self) -> bool:
        return self.is_global and self.update_partition_path is False

    def properties(self) -> list[tuple[str, str]]:
        out = []
        if self.type:
            out.append(("hoodie.index.type", self.type))
        if self.buckets is not None:
            out.append(("hoodie.bucket.index.num.buckets", str(self.buckets)))
        if self.bucket_engine:
            out.append(("hoodie.index.bucket.engine", "SIMPLE"))
        if self.update_partition_path is not None:
            which = "bloom" if self.type == "GLOBAL_BLOOM" else "simple"
            out.append((f"hoodie.{which}.index.update.partition.path", str(self.update_partition_path).lower()))
        if self.small_file_limit_zero:
            out.append(("hoodie.parquet.small.file.limit", "0"))
        if self.max_file_size is not None:
            out.append(("hoodie.parquet.max.file.size", str(self.max_file_size)))
        return out

    def describe(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.properties()) or "index=default"


def random_index(rng: random.Random) -> IndexSettings:
    """Index type (SIMPLE / BLOOM / GLOBAL_SIMPLE / GLOBAL_BLOOM / BUCKET with 1-4 buckets, or none set),
    update.partition.path for a global index (true / false / not set), small-file limit 0 or default, a small
    max file size or the default."""
    kind = rng.choice([None, "SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "GLOBAL_BLOOM",
                       "BUCKET", "BUCKET"])
    out = IndexSettings(kind)
    if kind == "BUCKET":
        out.buckets = rng.randint(1, 4)
        out.bucket_engine = rng.random() < 0.3
    if kind in GLOBAL_INDEXES:
        out.update_partition_path = rng.choice([True, False, False, None])
    out.small_file_limit_zero = rng.random() < 0.3
    out.max_file_size = rng.choice([None, None, 4096, 65536])
    return out


@dataclass
class Shape:
    columns: list[Column]
    keys: list[str]
    partitions: list[str]          # PARTITIONED BY order
    ordering: str | None
    table_type: str                # cow | mor
    partition_domain: int = 3
    notes: list[str] = field(default_factory=list)
    index: IndexSettings = field(default_factory=IndexSettings)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def identity(self) -> list[str]:
        """What identifies a record: record key + partition path with a partition-scoped index (SIMPLE, BLOOM,
        BUCKET), the record key alone with a global one (GLOBAL_SIMPLE, GLOBAL_BLOOM)."""
        return list(self.keys) if self.index.is_global else self.keys + self.partitions

    @property
    def locations(self) -> list[str]:
        """The reference's hidden columns: the partition a record is stored in (its partition path), one per
        partition column. They equal the partition columns except after a global index with
        update.partition.path=false updated a record in place: its data holds the incoming partition value, its
        file stays in the stored partition (Hudi's HoodieIndexUtils.tagGlobalLocationBackToRecords)."""
        return [f"_loc_{p}" for p in self.partitions]

    @property
    def stored_names(self) -> list[str]:
        return self.names + self.locations

    @property
    def data_columns(self) -> list[Column]:
        return [c for c in self.columns if c.role == "data"]

    @property
    def partition_not_last(self) -> bool:
        """True when the partition columns are not the trailing columns in PARTITIONED BY order."""
        return bool(self.partitions) and self.names[-len(self.partitions):] != self.partitions

    def ddl(self) -> str:
        return ", ".join(f"`{c.name}` {c.type}" for c in self.columns)

    def describe(self) -> str:
        return (f"columns=({self.ddl()}) primaryKey={','.join(self.keys)} "
                f"partitions={self.partitions or '-'} preCombineField={self.ordering or '-'} "
                f"type={self.table_type} {self.index.describe()}")

    def spark_schema(self):
        """The reference's schema: the columns, then the hidden location columns (see `locations`)."""
        from pyspark.sql import types as T
        fields = [f"`{c.name}`:{c.type}" for c in self.columns] + \
            [f"`{loc}`:{self.column(p).type}" for p, loc in zip(self.partitions, self.locations)]
        return T._parse_datatype_string("struct<" + ",".join(fields) + ">")


def random_shape(rng: random.Random, *, max_partitions: int = 2) -> Shape:
    """A random table: 1-2 key columns, 0-2 partition columns, optional ordering column, 2-5 data columns,
    all shuffled into a random declared order."""
    n_keys = rng.choice([1, 1, 2])
    columns = [Column(f"k{i}", rng.choice(KEY_TYPES), "key") for i in range(n_keys)]
    n_parts = rng.choice([0, 1, 2][:max_partitions + 1])
    parts = [Column(f"p{i}", rng.choice(PARTITION_TYPES), "partition") for i in range(n_parts)]
    columns += parts
    ordering = None
    if rng.random() < 0.6:
        ordering = "ts"
        columns.append(Column("ts", rng.choice(ORDERING_TYPES), "ordering"))
    for i, typ in enumerate(rng.sample(DATA_TYPES, rng.randint(2, 5))):
        columns.append(Column(f"c{i}", typ, "data"))
    rng.shuffle(columns)
    partitions = [c.name for c in parts]
    rng.shuffle(partitions)
    return Shape(columns, [f"k{i}" for i in range(n_keys)], partitions, ordering, rng.choice(["cow", "mor"]))


def key_value(col: Column, index: int, position: int, n_keys: int):
    """Key column value of identity `index`: composite keys split the index so the pair is unique."""
    part = index if n_keys == 1 else (index // 4 if position == 0 else index % 4)
    if col.type == "string":
        return f"key-{part:04d}"
    return part + (10_000_000_000 if col.type == "bigint" else 0)


def partition_value(col: Column, slot: int):
    if col.type == "int":
        return slot
    if col.type == "string":
        return ["north", "south", "east-west"][slot % 3]
    if col.type == "date":
        return BASE_DATE + datetime.timedelta(days=slot)
    return slot % 2 == 0   # boolean


def ordering_value(col: Column, tick: int):
    if col.type == "timestamp":
        return BASE_TIME + datetime.timedelta(seconds=tick)
    return tick + (5_000_000_000 if col.type == "bigint" else 0)


def data_value(col: Column, rng: random.Random, null_rate: float = 0.15):
    if rng.random() < null_rate:
        return None
    t = col.type
    if t == "int":
        return rng.randint(-1000, 1000)
    if t == "bigint":
        return rng.randint(-2**40, 2**40)
    if t.startswith("decimal"):
        return decimal.Decimal(rng.randint(-10**6, 10**6)).scaleb(-2)
    if t == "date":
        return BASE_DATE + datetime.timedelta(days=rng.randint(-400, 400))
    if t == "timestamp":
        return BASE_TIME + datetime.timedelta(seconds=rng.randint(-10**7, 10**7), microseconds=rng.randint(0, 999) * 1000)
    if t == "string":
        return rng.choice(["", "a", "b", "hello", "z z", "ünï", "x" * rng.randint(1, 12)])
    if t == "boolean":
        return rng.random() < 0.5
    if t.startswith("struct"):
        return {"a": rng.choice([None, rng.randint(0, 9)]), "b": rng.choice(["s", "t", None])}
    if t.startswith("array"):
        return [rng.choice([None, rng.randint(0, 99)]) for _ in range(rng.randint(0, 3))]
    if t.startswith("map"):
        return {f"m{i}": rng.choice([None, rng.randint(0, 99)]) for i in range(rng.randint(0, 3))}
    raise AssertionError(t)


def sql_literal(col: Column, value) -> str:
    """A Spark SQL literal of a scalar column's type."""
    if value is None:
        return f"CAST(NULL AS {col.type})"
    t = col.type
    if t == "string":
        return "'" + value.replace("'", "''") + "'"
    if t == "boolean":
        return "true" if value else "false"
    if t == "date":
        return f"DATE'{value.isoformat()}'"
    if t == "timestamp":
        return f"TIMESTAMP'{value.isoformat(sep=' ')}'"
    return f"CAST({value} AS {t.upper()})"


class RowMaker:
    """Rows of a shape by identity index and partition slot; ordering values grow with every batch."""

    def __init__(self, shape: Shape, rng: random.Random):
        self.shape, self.rng, self.tick = shape, rng, 0

    def row(self, index: int, slots: tuple[int, ...]) -> dict:
        self.tick += 1
        out = {}
        for col in self.shape.columns:
            if col.role == "key":
                out[col.name] = key_value(col, index, self.shape.keys.index(col.name), len(self.shape.keys))
            elif col.role == "partition":
                out[col.name] = partition_value(col, slots[self.shape.partitions.index(col.name)])
            elif col.role == "ordering":
                out[col.name] = ordering_value(col, self.tick)
            else:
                out[col.name] = data_value(col, self.rng)
        return out

    def row_key(self, index: int) -> tuple:
        return tuple(key_value(self.shape.column(k), index, n, len(self.shape.keys))
                     for n, k in enumerate(self.shape.keys))

    def slots(self) -> tuple[int, ...]:
        return tuple(self.rng.randrange(self.shape.partition_domain) for _ in self.shape.partitions)
