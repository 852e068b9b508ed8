"""HFile v3 reader and writer (pyhudi.file_group.hfile) against files written by Java Hudi / HBase.

Fixtures are in tests/fixtures/hfile (see its README): hudi-rs's HBase-written test files, the metadata table base
files of qs_mor_avro_v8_trips_8i3u1d (Hudi 1.0) and one of cow_v9_txns_complex_meta (Hudi 1.1's own writer).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from pyhudi.errors import CorruptFileError, PyHudiError
from pyhudi.file_group.hfile import HFileReader, write_hfile
from pyhudi.file_group.hfile import reader as reader_module
from pyhudi.file_group.hfile.block import HEADER_SIZE
from pyhudi.file_group.hfile.file_info import RESERVED_KEYS, RESERVED_PREFIX
from pyhudi.file_group.hfile.trailer import HOODIE_KV_COMPARATOR, decode_trailer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hfile"
LARGE_PREFIX = "hudi-key-" + "a" * 100 + "-"

# file -> (record count, key of record i); values are hudi-value-{i:09}
HUDI_RS_FILES = {
    "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile": (5000, "hudi-key-{:09}"),
    "hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile": (5000, "hudi-key-{:09}"),
    "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile": (20000, "hudi-key-{:09}"),
    "hudi_1_0_hbase_2_4_9_512KB_GZ_20000.hfile": (20000, "hudi-key-{:09}"),
    "hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile": (20000, "hudi-key-{:09}-abcdefghij"),
    "hudi_1_0_hbase_2_4_13_1KB_GZ_20000_large_keys.hfile": (20000, LARGE_PREFIX + "{:09}"),
    "hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile": (10000, LARGE_PREFIX + "{:09}"),
}
MDT_V8 = ["mdt_v8_files_0-955-2690_00000000000000000.hfile", "mdt_v8_files_23-1133-3302_20251220210130942.hfile"]
MDT_V9 = "mdt_v9_files_13-170-402_20260307162518840.hfile"


def _read(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _open(name: str) -> HFileReader:
    return HFileReader(_read(name), name)


# ---------------------------------------------------------------------------------------------------------------
# 1. hudi-rs's test files
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HUDI_RS_FILES))
def test_reads_every_record_of_hudi_rs_files(name):
    count, key_format = HUDI_RS_FILES[name]
    reader = _open(name)
    records = list(reader.records())
    assert len(reader) == count
    assert [key for key, _ in records] == [key_format.format(i).encode() for i in range(count)]
    assert [value for _, value in records] == [f"hudi-value-{i:09}".encode() for i in range(count)]


@pytest.mark.parametrize("name", sorted(HUDI_RS_FILES))
def test_get_present_and_absent_keys_in_hudi_rs_files(name):
    count, key_format = HUDI_RS_FILES[name]
    reader = _open(name)
    for i in [*range(0, count, 97), count - 1]:
        assert reader.get(key_format.format(i).encode()) == f"hudi-value-{i:09}".encode()
    for absent in [b"", b"aaa", b"hudi-key-nonexistent", b"hudi-key-999999999", key_format.format(count - 1) + "a"]:
        assert reader.get(absent if isinstance(absent, bytes) else absent.encode()) is None


def test_hudi_rs_expectations_for_single_lookups():
    """The seeks hudi-rs's reader.rs tests make, including between-block keys of the fake-first-key file."""
    assert _open("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile").get(b"hudi-key-000000100") == b"hudi-value-000000100"
    assert _open("hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile").get(b"hudi-key-000001688") == b"hudi-value-000001688"
    assert _open("hudi_1_0_hbase_2_4_9_512KB_GZ_20000.hfile").get(b"hudi-key-000008888") == b"hudi-value-000008888"
    fake = _open("hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile")
    assert fake.get(b"hudi-key-000000469-abcdefghij") == b"hudi-value-000000469"
    assert fake.get(b"hudi-key-000000470") is None  # before the first key of its block
    deep = _open("hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile")
    assert deep.get((LARGE_PREFIX + "000009999").encode()) == b"hudi-value-000009999"
    assert deep.get((LARGE_PREFIX + "000005340").encode()) == b"hudi-value-000005340"


def test_non_unique_keys_file():
    reader = _open("hudi_1_0_hbase_2_4_9_16KB_GZ_200_20_non_unique.hfile")
    records = list(reader.records())
    assert len(reader) == len(records) == 4200
    assert records[0] == (b"hudi-key-000000000", b"hudi-value-000000000")
    assert records[1:21] == [(b"hudi-key-000000000", f"hudi-value-000000000_{j}".encode()) for j in range(20)]
    assert records[21][0] == b"hudi-key-000000001"
    assert records[-1][0] == b"hudi-key-000000199"
    assert reader.get(b"hudi-key-000000005") == b"hudi-value-000000005"  # the first of the key's records


def test_no_entry_file_reads_as_empty():
    reader = _open("hudi_1_0_hbase_2_4_9_no_entry.hfile")
    assert len(reader) == 0
    assert list(reader.records()) == []
    assert reader.get(b"anything") is None
    assert b"hfile.LASTKEY" not in reader.file_info
    assert reader.file_info[b"hfile.AVG_KEY_LEN"] == b"\x00\x00\x00\x00"
    assert json.loads(reader.file_info[b"schema"])["name"] == "trip"


def test_file_info_of_an_hbase_written_file():
    info = _open("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile").file_info
    assert info[b"hfile.LASTKEY"] == b"\x00\x12hudi-key-000004999\x00" + b"\x7f" + b"\xff" * 7 + b"\x04"
    assert info[b"hfile.AVG_KEY_LEN"] == struct.pack(">i", 30)
    assert info[b"hfile.AVG_VALUE_LEN"] == struct.pack(">i", 20)
    assert info[b"KEY_VALUE_VERSION"] == struct.pack(">i", 1)
    assert info[b"MAX_MEMSTORE_TS_KEY"] == bytes(8)
    assert info[b"hudi_hfile_testing.custom_key"] == b"hudi_custom_value"


def test_get_reads_only_the_blocks_on_the_index_path(monkeypatch):
    """A 3-level index: root (already loaded), intermediate, leaf, data block -> three block reads."""
    reader = _open("hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile")
    calls = []
    original = reader_module.decode_block
    monkeypatch.setattr(reader_module, "decode_block", lambda *args: calls.append(args[1]) or original(*args))
    assert reader.get((LARGE_PREFIX + "000004321").encode()) == b"hudi-value-000004321"
    assert len(calls) == 3
    assert decode_trailer(_read("hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile")) \
        .num_data_index_levels == 3


# ---------------------------------------------------------------------------------------------------------------
# 2. Java-written metadata table base files
# ---------------------------------------------------------------------------------------------------------------


def test_reads_java_written_mdt_files_partition():
    reader = _open(MDT_V8[1])
    records = dict(reader.records())
    assert list(records) == [b"__all_partitions__", b"city=chennai", b"city=san_francisco", b"city=sao_paulo"]
    assert len(reader) == 4
    assert all(len(value) > 50 for value in records.values())
    assert reader.get(b"city=chennai") == records[b"city=chennai"]
    assert b"6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc" in records[b"city=chennai"]  # chennai's file group id
    assert reader.get(b"city=berlin") is None and reader.get(b"AAA") is None and reader.get(b"zzz") is None
    assert list(dict(_open(MDT_V8[0]).records())) == [b"__all_partitions__"]


def test_java_mdt_file_info_and_bloom_filter_meta_block():
    reader = _open(MDT_V8[1])
    info = reader.file_info
    schema = json.loads(info[b"schema"])
    assert (schema["name"], schema["namespace"]) == ("HoodieMetadataRecord", "org.apache.hudi.avro.model")
    assert info[b"bloomFilterTypeCode"] == b"DYNAMIC_V0"
    assert (info[b"minRecordKey"], info[b"maxRecordKey"]) == (b"__all_partitions__", b"city=sao_paulo")
    assert set(info) == {b"schema", b"bloomFilterTypeCode", b"minRecordKey", b"maxRecordKey", b"hfile.LASTKEY",
                         b"hfile.AVG_KEY_LEN", b"hfile.AVG_VALUE_LEN", b"hfile.CREATE_TIME_TS",
                         b"MAX_MEMSTORE_TS_KEY", b"KEY_VALUE_VERSION"}
    assert info[b"hfile.LASTKEY"] == b"\x00\x0ecity=sao_paulo\x00" + b"\x7f" + b"\xff" * 7 + b"\x04"
    assert reader.meta_block(b"bloomFilter").startswith(b"/////wAAAB4B")  # base64 of a DYNAMIC_V0 filter
    assert reader.meta_block(b"nope") is None
    trailer = decode_trailer(_read(MDT_V8[1]))
    assert (trailer.codec_id, trailer.comparator) == (1, HOODIE_KV_COMPARATOR)  # GZ


def test_reads_hudi_1_1_native_writer_file():
    """Hudi 1.1's own hudi-io writer: NULL checksum type, index keys and LASTKEY without the cell key tail."""
    reader = _open(MDT_V9)
    assert [key for key, _ in reader.records()] == [b"__all_partitions__", b"region=apac", b"region=eu",
                                                    b"region=us"]
    assert reader.get(b"region=eu") is not None and reader.get(b"region=zz") is None
    assert json.loads(reader.file_info[b"schema"])["name"] == "HoodieMetadataRecord"


# ---------------------------------------------------------------------------------------------------------------
# 3. round trips
# ---------------------------------------------------------------------------------------------------------------


def test_round_trip_zero_records():
    reader = HFileReader(write_hfile([], file_info={b"schema": b"{}"}))
    assert len(reader) == 0 and list(reader.records()) == [] and reader.get(b"a") is None
    assert reader.file_info[b"schema"] == b"{}" and b"hfile.LASTKEY" not in reader.file_info


@pytest.mark.parametrize("compression", ["none", "gz"])
def test_round_trip_a_few_records(compression):
    records = [(b"a", b"1"), (b"b", b""), (b"c\xff", b"x" * 300), (b"d", bytes(range(256)))]
    reader = HFileReader(write_hfile(records, compression=compression, meta_blocks={b"bloomFilter": b"bf"}))
    assert list(reader.records()) == records and len(reader) == 4
    assert all(reader.get(key) == value for key, value in records)
    assert reader.get(b"") is None and reader.get(b"bb") is None and reader.get(b"e") is None
    assert reader.meta_block(b"bloomFilter") == b"bf"
    assert reader.file_info[b"hfile.AVG_VALUE_LEN"] == struct.pack(">i", (1 + 0 + 300 + 256) // 4)


@pytest.mark.parametrize("compression", ["none", "gz"])
def test_round_trip_many_blocks(compression):
    records = [(f"key-{i:08}".encode(), f"value-{i * 7919 % 100000}".encode() * (1 + i % 3)) for i in range(20000)]
    data = write_hfile(records, block_size=1024, compression=compression)
    reader = HFileReader(data, "many.hfile")
    trailer = decode_trailer(data)
    assert trailer.data_index_count > 500 and trailer.num_data_index_levels == 1
    assert list(reader.records()) == records and len(reader) == 20000
    assert all(reader.get(key) == value for key, value in records)
    absent = [b"", b"a", b"key-", b"key-00000000\x00", b"key-00009999x", b"key-00019999\x00", b"zzz"]
    assert all(reader.get(key) is None for key in absent)


def test_writer_rejects_unsorted_duplicate_and_reserved_input():
    with pytest.raises(ValueError, match="duplicates"):
        write_hfile([(b"a", b"1"), (b"a", b"2")])
    with pytest.raises(ValueError, match="sorts before"):
        write_hfile([(b"b", b"1"), (b"a", b"2")])
    with pytest.raises(ValueError, match="reserved"):
        write_hfile([], file_info={b"hfile.LASTKEY": b"x"})
    with pytest.raises(ValueError, match="compression"):
        write_hfile([], compression="snappy")


# ---------------------------------------------------------------------------------------------------------------
# 4. byte compatibility
# ---------------------------------------------------------------------------------------------------------------

REPRODUCIBLE = {
    "hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile": 16 * 1024,
    "hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile": 64 * 1024,
    "hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile": 16 * 1024,
    "hudi_1_0_hbase_2_4_9_512KB_GZ_20000.hfile": 512 * 1024,
    "hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile": 16 * 1024,
    "hudi_1_0_hbase_2_4_9_no_entry.hfile": 1024 * 1024,
    MDT_V8[0]: 1024 * 1024,
    MDT_V8[1]: 1024 * 1024,
}


def _rewrite(data: bytes, block_size: int) -> bytes:
    reader = HFileReader(data)
    trailer = decode_trailer(data)
    user_info = {k: v for k, v in reader.file_info.items() if not k.startswith(RESERVED_PREFIX)
                 and k not in RESERVED_KEYS}
    meta_blocks = {name: reader.meta_block(name) for name in [b"bloomFilter"] if reader.meta_block(name) is not None}
    return write_hfile(reader.records(), file_info=user_info, block_size=block_size, meta_blocks=meta_blocks,
                       compression={1: "gz", 2: "none"}[trailer.codec_id], comparator=trailer.comparator)


@pytest.mark.parametrize("name", sorted(REPRODUCIBLE))
def test_rewrite_is_byte_identical_to_java(name):
    """Every block (header, payload, CRC32C checksums, GZ bytes), the index's fake keys, the FileInfo and the
    trailer come out byte-identical to what HBase 2.4 wrote for Java Hudi 1.0 — both uncompressed and GZ.

    Only inputs the writer cannot know are carried over from the original: the records, the user FileInfo entries,
    the b"bloomFilter" meta block, the block size, the codec and the trailer's comparator class name (HBase's test
    files record ``org.apache.hadoop.hbase.KeyValue$KVComparator``; Hudi's own files, and our default,
    ``org.apache.hudi.io.storage.HoodieHBaseKVComparator``). HBase's ``hfile.*``/MVCC FileInfo entries are
    regenerated (``hfile.CREATE_TIME_TS`` is 0 in all Hudi 1.0 files: Hudi never sets it).

    Not reproducible, by design: the multi-level-index files (pyhudi writes a single-level root index), the
    non-unique file (duplicate keys are rejected), and files of Hudi 1.1's own writer (test below)."""
    data = _read(name)
    assert _rewrite(data, REPRODUCIBLE[name]) == data


def test_hudi_1_1_native_writer_differences_are_the_documented_ones():
    """Hudi 1.1's hudi-io writer lays files out differently from HBase; we match HBase, which every reader reads.

    Its differences, all visible in this v9 fixture: checksum type NULL with zero-filled checksum bytes (we write
    CRC32C); index keys and hfile.LASTKEY are ``int16 length + row`` without the cell key tail, and block keys are
    real first keys (we write HBase's full keys and fake midpoint keys); hfile.AVG_KEY_LEN counts the row only;
    FileInfo entries are in HashMap order and hfile.CREATE_TIME_TS is the wall clock; the meta index's previous
    block offset is -1; the trailer's uncompressed data index size is the data bytes, total uncompressed bytes is
    absent and the minor version is 0. The data block cells themselves are identical."""
    data = _read(MDT_V9)
    reader = HFileReader(data)
    (checksum_type,) = struct.unpack_from(">B", data, 24)
    assert checksum_type == 0 and data[-4:] == b"\x00\x00\x00\x03"
    assert reader.file_info[b"hfile.LASTKEY"] == b"\x00\x09region=us"
    ours = write_hfile(reader.records(), compression="gz")
    (data_block_size,) = struct.unpack_from(">i", data, 12)
    ours_reader = HFileReader(ours)
    assert list(ours_reader.records()) == list(reader.records())
    assert struct.unpack_from(">i", ours, 12)[0] == data_block_size  # same uncompressed data block payload
    assert ours[HEADER_SIZE:HEADER_SIZE + 10] == data[HEADER_SIZE:HEADER_SIZE + 10]  # same gzip header


# ---------------------------------------------------------------------------------------------------------------
# 5. corrupt input
# ---------------------------------------------------------------------------------------------------------------


def _corrupt(data: bytes, position: int) -> bytes:
    return data[:position] + bytes([data[position] ^ 0x01]) + data[position + 1:]


def _assert_corrupt(data: bytes, fragment: str, *, read_all: bool = False) -> None:
    with pytest.raises(CorruptFileError) as raised:
        reader = HFileReader(data, "tables/t/.hoodie/metadata/files/broken.hfile")
        if read_all:
            list(reader.records())
    assert isinstance(raised.value, PyHudiError)
    assert "broken.hfile" in str(raised.value) and fragment in str(raised.value)


def test_truncated_file():
    data = _read("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile")
    _assert_corrupt(data[:-1], "trailer magic")
    _assert_corrupt(data[:100], "shorter than the 4096-byte trailer")
    _assert_corrupt(b"", "shorter than the 4096-byte trailer")


def test_bad_trailer_magic_and_version():
    data = _read(MDT_V8[1])
    _assert_corrupt(_corrupt(data, len(data) - 4096), "trailer magic")
    _assert_corrupt(data[:-1] + b"\x02", "major version 2")


def test_flipped_checksum_byte():
    data = _read("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile")
    (on_disk_size,) = struct.unpack_from(">i", data, 8)
    _assert_corrupt(_corrupt(data, HEADER_SIZE + on_disk_size - 1), "checksum mismatch", read_all=True)
    _assert_corrupt(_corrupt(data, HEADER_SIZE + 100), "checksum mismatch", read_all=True)  # a payload byte
    trailer = decode_trailer(data)
    _assert_corrupt(_corrupt(data, trailer.file_info_offset + HEADER_SIZE + 3), "checksum mismatch")


def test_corrupt_gz_payload_and_index():
    data = write_hfile([(b"k%03d" % i, b"v") for i in range(100)], compression="gz", block_size=64)
    trailer = decode_trailer(data)
    _assert_corrupt(_corrupt(data, trailer.load_on_open_offset), "unknown block magic")
    reader = HFileReader(_corrupt(data, HEADER_SIZE + 12), "broken.hfile")
    with pytest.raises(CorruptFileError, match="broken.hfile"):
        reader.get(b"k000")
