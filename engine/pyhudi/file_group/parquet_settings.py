"""How pyhudi's parquet files are encoded: base files and the parquet data blocks of log files alike (the codec is
the table's hoodie.parquet.compression.codec for both, as Hudi's HoodieAppendHandle passes it to its blocks)."""

from __future__ import annotations

import zlib

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
# A plain column in a big gzip table is stored uncompressed when gzip saves less than this share on a sample of it.
INCOMPRESSIBLE_SAVING = 0.1
INCOMPRESSIBLE_SAMPLE = 64 * 1024


def encoding(table: pa.Table, codec: str, plain=()) -> dict:
    """pyarrow's writer arguments for `table` in the Hudi codec `codec`: the compression (gzip at GZIP_LEVEL),
    and the dictionary columns (dictionary_columns). In a big table written with gzip, a plain column that gzip
    barely shrinks (incompressible) is stored uncompressed: parquet names the codec per column chunk, so every
    reader reads it, and gzip spent 45% of a 100k-row base file's encoding time on two such columns (random
    coordinates: 27 ms each, for 4% of their size)."""
    codec = codec.lower()
    dictionary = dictionary_columns(table, plain, DICTIONARY_MIN_ROWS.get(codec, DICTIONARY_MIN_ROWS_OTHER))
    compression = None if codec == "uncompressed" else codec
    level = GZIP_LEVEL if codec == "gzip" else None
    if codec == "gzip" and isinstance(dictionary, list):   # a big flat table
        stored = {name for name in table.column_names if name not in dictionary and incompressible(table[name])}
        if stored:
            compression = {name: "none" if name in stored else codec for name in table.column_names}
            level = {name: GZIP_LEVEL for name in table.column_names if name not in stored}
    return {"compression": compression, "compression_level": level, "use_dictionary": dictionary}


def incompressible(column, sample_bytes: int = INCOMPRESSIBLE_SAMPLE) -> bool:
    """Whether gzip would shrink a plain column by less than INCOMPRESSIBLE_SAVING, judged by compressing its first
    `sample_bytes` of values (~0.3 ms): fixed-width numbers and strings only."""
    column = column.chunk(0) if isinstance(column, pa.ChunkedArray) and column.num_chunks else column
    if not len(column) or not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
                               or pa.types.is_string(column.type) or pa.types.is_binary(column.type)):
        return False
    if pa.types.is_string(column.type) or pa.types.is_binary(column.type):
        offsets = np.frombuffer(column.buffers()[1], np.int32)[column.offset:column.offset + len(column) + 1]
        data = column.buffers()[2]
        start, end = int(offsets[0]), int(offsets[-1])
    else:
        width = column.type.bit_width // 8
        data = column.buffers()[1]
        start, end = column.offset * width, (column.offset + len(column)) * width
    sample = memoryview(data)[start:min(end, start + sample_bytes)]
    return len(zlib.compress(sample, GZIP_LEVEL)) > len(sample) * (1 - INCOMPRESSIBLE_SAVING)


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
