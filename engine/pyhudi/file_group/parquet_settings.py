"""How pyhudi's parquet files are encoded: base files and the parquet data blocks of log files alike (the codec is
the table's hoodie.parquet.compression.codec for both, as Hudi's HoodieAppendHandle passes it to its blocks)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# zlib level for gzip (Hudi's default codec). pyarrow defaults to 9, which made writing a 100k-row base file ~6x
# slower than level 1 for a file only ~1% smaller (a 1,100-row log block 2.3x); Java Hudi uses zlib's default
# (6, Hadoop's zlib.compress.level).
GZIP_LEVEL = 1
DISTINCT_SAMPLE = 4096   # values sampled to tell a column whose values all differ (see all_distinct)
# A table with fewer rows gets no dictionary at all. Measured on the benchmark's log blocks (16 columns, 50 to 10k
# rows): with gzip, plain encoding is as small as the chosen dictionaries up to ~3,000 rows and 10-35% faster to
# write; with snappy the dictionaries start to pay (4-6% smaller) from ~600 rows. Choosing them (all_distinct) costs
# about as much again as writing a small table (0.4 ms for a 1 ms, 275-row block).
DICTIONARY_MIN_ROWS = {"gzip": 4096}
DICTIONARY_MIN_ROWS_OTHER = 1000


def encoding(table: pa.Table, codec: str, plain=()) -> dict:
    """pyarrow's writer arguments for `table` in the Hudi codec `codec`: the compression (gzip at GZIP_LEVEL)
    and the dictionary columns (dictionary_columns)."""
    codec = codec.lower()
    return {"compression": None if codec == "uncompressed" else codec,
            "compression_level": GZIP_LEVEL if codec == "gzip" else None,
            "use_dictionary": dictionary_columns(table, plain, DICTIONARY_MIN_ROWS.get(codec,
                                                                                       DICTIONARY_MIN_ROWS_OTHER))}


def dictionary_columns(table: pa.Table, plain=(), min_rows: int = 0) -> list[str] | bool:
    """The columns worth a dictionary: not those in `plain` (unique by construction) nor any whose values all
    differ (all_distinct); none (False) in a table of fewer than `min_rows` rows; True (pyarrow's default, every
    column) for a table with nested columns, whose dictionary list would have to name leaf columns."""
    if table.num_rows < min_rows:
        return False
    if any(pa.types.is_nested(f.type) for f in table.schema):
        return True
    return [f.name for f in table.schema if f.name not in plain and not all_distinct(table[f.name])]


def all_distinct(column) -> bool:
    """Whether every value of a column seems to differ (e.g. a timestamp, a coordinate), judged from an even
    sample of a big column: a dictionary of such a column holds every value again plus an index per row, so it
    is bigger and slower to write than plain encoding (measured on 100k rows: 30-45% bigger, 1.5-2x the time;
    on a 1,100-row log block 20% bigger). A column with some repeats keeps its dictionary (a sample of 4096 from
    12k distinct values shows ~84% distinct)."""
    n = len(column)
    if n < 2 or pa.types.is_boolean(column.type):
        return False
    sample = column if n <= DISTINCT_SAMPLE else column.take(np.arange(0, n, n // DISTINCT_SAMPLE)[:DISTINCT_SAMPLE])
    return pc.count_distinct(sample).as_py() >= len(sample) - 1
