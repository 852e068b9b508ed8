"""How pyhudi encodes parquet (base files and log blocks): codec arguments and the dictionary columns."""

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.file_group.parquet_settings import (DICTIONARY_MIN_ROWS, DICTIONARY_MIN_ROWS_OTHER, GZIP_LEVEL, encoding,
                                               incompressible)


def _table(rows: int) -> pa.Table:
    rng = np.random.default_rng(7)
    return pa.table({"id": pa.array(np.arange(rows)).cast(pa.string()),          # every value differs
                     "status": pa.array(rng.choice(["open", "closed", "late"], rows)),   # three values
                     "flag": pa.array(rng.random(rows) < 0.5)})


def _dictionary_columns(table: pa.Table, codec: str) -> set[str]:
    """The columns the written file actually dictionary-encodes."""
    sink = io.BytesIO()
    pq.write_table(table, sink, **encoding(table, codec))
    meta = pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata.row_group(0)
    return {meta.column(i).path_in_schema for i in range(meta.num_columns)
            if "RLE_DICTIONARY" in meta.column(i).encodings or "PLAIN_DICTIONARY" in meta.column(i).encodings}


def test_codec_arguments():
    assert encoding(_table(3), "GZIP")["compression_level"] == GZIP_LEVEL
    assert encoding(_table(3), "snappy") | {"use_dictionary": None} == {
        "compression": "snappy", "compression_level": None, "use_dictionary": None}
    assert encoding(_table(3), "uncompressed")["compression"] is None


def test_a_big_table_gets_dictionaries_only_for_columns_with_repeats():
    table = _table(DICTIONARY_MIN_ROWS["gzip"] * 2)
    for codec in ("gzip", "snappy"):
        assert _dictionary_columns(table, codec) == {"status"}
    sink = io.BytesIO()
    pq.write_table(table, sink, **encoding(table, "snappy", plain={"status"}))   # unique by construction
    assert "RLE_DICTIONARY" not in pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata.row_group(0).column(1).encodings


def test_a_small_table_gets_no_dictionary():
    """Below the row threshold (per codec) plain encoding is as small and faster; the threshold is the codec's."""
    assert _dictionary_columns(_table(DICTIONARY_MIN_ROWS["gzip"] - 1), "gzip") == set()
    assert _dictionary_columns(_table(DICTIONARY_MIN_ROWS_OTHER - 1), "snappy") == set()
    assert _dictionary_columns(_table(DICTIONARY_MIN_ROWS_OTHER), "snappy") == {"status"}
    rows = pq.read_table(io.BytesIO(_written(_table(10), "gzip"))).to_pylist()
    assert rows == _table(10).to_pylist()


def _written(table: pa.Table, codec: str) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **encoding(table, codec))
    return sink.getvalue()


def test_a_big_gzip_table_stores_incompressible_columns_uncompressed():
    """Random doubles barely shrink under gzip: their chunk is UNCOMPRESSED (parquet names the codec per chunk),
    the rest stays gzip; other codecs and small tables keep one codec; the rows read back the same."""
    rows = DICTIONARY_MIN_ROWS["gzip"] * 2
    table = _table(rows).append_column("lat", pa.array(np.random.default_rng(3).random(rows) * 180 - 90))
    data = _written(table, "gzip")
    meta = pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0)
    codecs = {meta.column(i).path_in_schema: meta.column(i).compression for i in range(meta.num_columns)}
    assert codecs == {"id": "GZIP", "status": "GZIP", "flag": "GZIP", "lat": "UNCOMPRESSED"}
    assert pq.read_table(io.BytesIO(data)).equals(table)
    for codec, n in (("snappy", rows), ("gzip", 10)):
        small = table.slice(0, n)
        meta = pq.ParquetFile(io.BytesIO(_written(small, codec))).metadata.row_group(0)
        assert {meta.column(i).compression for i in range(meta.num_columns)} == {codec.upper()}


def test_incompressible_judges_numbers_and_strings_from_a_sample():
    rng = np.random.default_rng(5)
    assert incompressible(pa.chunked_array([pa.array(rng.random(50_000))]))
    assert not incompressible(pa.array(np.arange(50_000, dtype=np.int64)))
    assert not incompressible(pa.array([], pa.float64()))
    assert not incompressible(pa.array([f"key-{i:08d}" for i in range(20_000)]).slice(100))        # sorted keys
    assert not incompressible(pa.array([True, False] * 100))                                       # not judged
