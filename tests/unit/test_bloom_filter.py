"""Hudi bloom filters: bit-exact against Java-written footers, and against a per-key reference model.

The reference model below (``_ref_*``) is a deliberately naive, one-key-at-a-time transcription of the Java
semantics (Hadoop MurmurHash with signed bytes, HashFunction chaining, InternalDynamicBloomFilter's row state
machine, DataOutput serialization). The vectorised implementation must agree with it bit for bit, and both must
agree with the filters Apache Hudi wrote into the fixture tables.
"""

from __future__ import annotations

import base64
import glob
import math
import os
import struct
import time
import uuid
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhudi.errors import ConfigError, CorruptFileError, PyHudiError, RecordKeyError
from pyhudi.file_group import bloom_filter as bfm
from pyhudi.file_group.bloom_filter import (
    FOOTER_BLOOM_KEY,
    FOOTER_MAX_KEY,
    FOOTER_MIN_KEY,
    FOOTER_TYPE_KEY,
    BloomFilter,
    bit_size,
    footer_metadata,
    from_footer,
    num_hashes,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "fixtures", "hudi-tables")
if not os.path.isdir(FIXTURES):
    FIXTURES = "/work/shared/fixtures/hudi-tables"

_MASK = 0xFFFFFFFF
_MUL = 0x5BD1E995


# ----------------------------------------------------------------------------------------------------------------
# per-key reference model of the Java code
# ----------------------------------------------------------------------------------------------------------------


def _java_byte(b: int) -> int:
    return b - 256 if b > 127 else b


def _ref_murmur(data: bytes, seed: int) -> int:
    """Hadoop MurmurHash.hash(data, length, seed) with Java int semantics; returns a signed int."""
    length = len(data)
    h = (seed ^ length) & _MASK
    for i in range(length // 4):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * _MUL) & _MASK
        k ^= k >> 24
        k = (k * _MUL) & _MASK
        h = (h * _MUL) & _MASK
        h ^= k
    left = length & 3
    if left:
        if left >= 3:
            h ^= (_java_byte(data[length - 3]) << 16) & _MASK
        if left >= 2:
            h ^= (_java_byte(data[length - 2]) << 8) & _MASK
        h ^= _java_byte(data[length - 1]) & _MASK
        h = (h * _MUL) & _MASK
    h ^= h >> 13
    h = (h * _MUL) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h >= (1 << 31) else h


def _ref_positions(key: str, nb_hash: int, vector_size: int) -> list[int]:
    data = key.encode("utf-8")
    out, initval = [], 0
    for _ in range(nb_hash):
        initval = _ref_murmur(data, initval)
        rem = abs(initval) % vector_size  # |Java a % b| == |a| mod b
        out.append(rem)
    return out


class _RefBits:
    def __init__(self, vector_size, nb_hash):
        self.vs, self.nb, self.bits = vector_size, nb_hash, set()

    def add(self, key):
        self.bits.update(_ref_positions(key, self.nb, self.vs))

    def test(self, key):
        return all(p in self.bits for p in _ref_positions(key, self.nb, self.vs))

    def raw(self):
        out = bytearray((self.vs + 7) // 8)
        for p in self.bits:
            out[p // 8] |= 1 << (p % 8)
        return struct.pack(">iibi", -1, self.nb, 1, self.vs) + bytes(out)


class _RefDynamic:
    """InternalDynamicBloomFilter, one key at a time."""

    def __init__(self, vs, nb, nr, max_nr):
        self.vs, self.nb, self.nr, self.max_nr = vs, nb, nr, max_nr
        self.current = 0
        self.reached_max = False
        self.cur_index = 0
        self.matrix = [_RefBits(vs, nb)]

    def _active(self):
        if self.reached_max:
            bf = self.matrix[self.cur_index % len(self.matrix)]
            self.cur_index += 1
            return bf
        if self.current >= self.nr and len(self.matrix) * self.nr < self.max_nr:
            return None
        if self.current >= self.nr and len(self.matrix) * self.nr >= self.max_nr:
            self.reached_max = True
            return self.matrix[0]
        return self.matrix[-1]

    def add(self, key):
        bf = self._active()
        if bf is None:
            self.matrix.append(_RefBits(self.vs, self.nb))
            bf = self.matrix[-1]
            self.current = 0
        bf.add(key)
        self.current += 1

    def test(self, key):
        return any(r.test(key) for r in self.matrix)

    def serialize(self):
        raw = struct.pack(">iibi", -1, self.nb, 1, self.vs) + struct.pack(">iii", self.nr, self.current,
                                                                          len(self.matrix))
        raw += b"".join(r.raw() for r in self.matrix)
        return base64.b64encode(raw).decode()


# ----------------------------------------------------------------------------------------------------------------
# Java-written fixtures
# ----------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fixture_base_files(tmp_path_factory):
    zips = sorted(glob.glob(os.path.join(FIXTURES, "*.zip")))
    if not zips:
        pytest.skip(f"no fixture tables under {FIXTURES}")
    root = tmp_path_factory.mktemp("hudi_tables")
    for z in zips:
        dest = root / os.path.basename(z)[:-4]
        with zipfile.ZipFile(z) as zf:
            for member in zf.namelist():
                if member.startswith("__MACOSX") or "/__MACOSX/" in member:
                    continue
                zf.extract(member, dest)
    files = []
    for p in sorted(glob.glob(str(root / "**" / "*.parquet"), recursive=True)):
        if f"{os.sep}.hoodie{os.sep}" in p:
            continue
        files.append(p)
    return files


def _footer_and_keys(path):
    pf = pq.ParquetFile(path)
    md = pf.metadata.metadata or {}
    names = pf.schema_arrow.names
    keys = pf.read(columns=["_hoodie_record_key"]).column(0) if "_hoodie_record_key" in names else None
    return md, keys


def test_java_written_footers_bit_exact(fixture_base_files):
    checked_files = checked_keys = 0
    rebuilt_equal = 0
    probe = [f"definitely-not-a-key-{i}" for i in range(2000)]
    for path in fixture_base_files:
        md, keys = _footer_and_keys(path)
        if md.get(FOOTER_BLOOM_KEY.encode()) is None:
            # only the table written without meta fields has no bloom filter
            assert "no_metafields" in path, path
            assert from_footer(md) is None
            continue
        serialized = md[FOOTER_BLOOM_KEY.encode()].decode()
        type_code = md[FOOTER_TYPE_KEY.encode()].decode()
        bf = BloomFilter.deserialize(serialized, type_code)
        assert bf.type_code == type_code
        # bit-exact round trip of the Java string
        assert bf.serialize() == serialized, path
        # every key in the file tests positive (vectorised and scalar)
        assert keys is not None and len(keys) > 0
        assert bf.might_contain_many(keys).all(), path
        for k in keys.to_pylist()[:5]:
            assert bf.might_contain(k)
        # keys not in the file are (almost always) negative
        assert bf.might_contain_many(probe).sum() <= 2, path
        # footer min/max are the key range
        pykeys = keys.to_pylist()
        assert md[FOOTER_MIN_KEY.encode()].decode() == min(pykeys)
        assert md[FOOTER_MAX_KEY.encode()].decode() == max(pykeys)
        # the same keys through our writer with Hudi's defaults give the very same string as Java's
        ours = BloomFilter.create(type_code)
        ours.add_keys(keys)
        if ours.serialize() == serialized:
            rebuilt_equal += 1
        checked_files += 1
        checked_keys += len(keys)
    assert checked_files >= 70, checked_files
    # all Java footers reproduce exactly from the file's keys (each file's filter holds exactly its keys)
    assert rebuilt_equal == checked_files
    print(f"verified {checked_files} Java-written footers, {checked_keys} keys")


def test_java_footer_header_matches_hudi_default_sizing(fixture_base_files):
    for path in fixture_base_files:
        md, _ = _footer_and_keys(path)
        s = md.get(FOOTER_BLOOM_KEY.encode())
        if s is None:
            continue
        raw = base64.b64decode(s)
        version, nb_hash, hash_type, vector_size = struct.unpack_from(">iibi", raw)
        nr, _, _ = struct.unpack_from(">iii", raw, 13)
        assert (version, hash_type) == (-1, 1)
        assert vector_size == bit_size(60000, 1e-9) == 2587966
        assert nb_hash == num_hashes(vector_size, 60000) == 30
        assert nr == 60000
        break
    else:
        pytest.fail("no fixture footer with a bloom filter")


def test_simple_layout_equals_java_rows(fixture_base_files):
    """SIMPLE is a bare Hadoop BloomFilter, which is exactly one row of Java's DYNAMIC_V0 filter."""
    done = 0
    for path in fixture_base_files:
        md, keys = _footer_and_keys(path)
        s = md.get(FOOTER_BLOOM_KEY.encode())
        if s is None:
            continue
        raw = base64.b64decode(s)
        (n_rows,) = struct.unpack_from(">i", raw, 21)
        assert n_rows == 1
        java_row = raw[25:]
        simple = BloomFilter.create("SIMPLE")
        simple.add_keys(keys)
        assert base64.b64decode(simple.serialize()) == java_row, path
        # and a Java row, wrapped as a SIMPLE footer, reads back as the same filter
        as_simple = BloomFilter.deserialize(base64.b64encode(java_row).decode(), "SIMPLE")
        assert as_simple.might_contain_many(keys).all()
        done += 1
    assert done >= 70


# ----------------------------------------------------------------------------------------------------------------
# hashing against the reference model
# ----------------------------------------------------------------------------------------------------------------

_key_text = st.text(min_size=1, max_size=40)  # any unicode: multi-byte UTF-8 exercises the signed tail bytes


@settings(max_examples=60, deadline=None)
@given(st.lists(_key_text, min_size=1, max_size=40), st.integers(1, 12), st.integers(1, 5000))
def test_vectorised_positions_match_reference(keys, nb_hash, vector_size):
    arr = pa.array(keys, type=pa.large_string())
    offsets, data = bfm.string_offsets_and_data(arr)
    got = bfm.hashing._hash_indices(offsets, data, nb_hash, vector_size)
    want = np.array([_ref_positions(k, nb_hash, vector_size) for k in keys], dtype=np.int64)
    np.testing.assert_array_equal(got, want)


def test_murmur_signed_tail_bytes():
    # keys whose tail bytes are >= 0x80 (é = c3 a9) must hash with Java's sign extension
    for key in ["é", "aé", "abé", "abcdé", "日本語", "x" * 37 + "ü"]:
        arr = pa.array([key])
        offsets, data = bfm.string_offsets_and_data(arr)
        got = bfm.hashing._hash_indices(offsets, data, 5, 1 << 30)[0].tolist()
        assert got == _ref_positions(key, 5, 1 << 30), key


def test_sizing_formulas():
    assert bit_size(60000, 1e-9) == 2587966
    assert num_hashes(2587966, 60000) == 30
    for n, p in [(1, 0.5), (1000, 0.01), (100000, 1e-6), (60000, 0.000000001)]:
        bits = math.ceil(n * (-math.log(p) / (math.log(2) * math.log(2))))
        assert bit_size(n, p) == bits
        assert num_hashes(bits, n) == math.ceil(math.log(2) * bits / n)


# ----------------------------------------------------------------------------------------------------------------
# our own filters
# ----------------------------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_key_text, min_size=1, max_size=120), st.sampled_from(["SIMPLE", "DYNAMIC_V0"]),
       st.integers(1, 50), st.integers(0, 200))
def test_no_false_negatives_and_roundtrip(keys, type_code, num_entries, max_entries):
    bf = BloomFilter.create(type_code, num_entries=num_entries, fpp=0.01, max_entries=max_entries)
    bf.add_keys(keys)
    assert bf.might_contain_many(keys).all()
    s = bf.serialize()
    back = BloomFilter.deserialize(s, type_code)
    assert back.serialize() == s
    assert back.might_contain_many(keys).all()
    assert all(back.might_contain(k) for k in keys[:10])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_key_text, min_size=0, max_size=30), min_size=1, max_size=6),
       st.integers(1, 20), st.integers(0, 90))
def test_dynamic_matches_reference_state_machine(batches, num_entries, max_entries):
    """Row growth, the max bound, round-robin after it, and currentNbRecord: bit-exact with the Java model,
    whatever the batch boundaries."""
    bf = BloomFilter.create("DYNAMIC_V0", num_entries=num_entries, fpp=0.05, max_entries=max_entries)
    ref = _RefDynamic(bf.vector_size, bf.nb_hash, num_entries, max_entries)
    for batch in batches:
        bf.add_keys(batch)
        for k in batch:
            ref.add(k)
    assert bf.serialize() == ref.serialize()
    probe = [f"p{i}" for i in range(50)]
    assert bf.might_contain_many(probe).tolist() == [ref.test(k) for k in probe]


def test_simple_matches_reference():
    keys = [f"key-{i}-é" for i in range(300)]
    bf = BloomFilter.create("SIMPLE", num_entries=200, fpp=0.01)
    ref = _RefBits(bf.vector_size, bf.nb_hash)
    for k in keys:
        ref.add(k)
    bf.add_keys(keys)
    assert base64.b64decode(bf.serialize()) == ref.raw()


def test_chunk_boundaries_do_not_matter(monkeypatch):
    keys = [str(uuid.UUID(int=i)) + "x" * (i % 9) for i in range(500)]
    whole = BloomFilter.create("DYNAMIC_V0", num_entries=70, fpp=0.01, max_entries=260)
    whole.add_keys(keys)
    monkeypatch.setattr(bfm.hashing, "_CHUNK", 7)
    chunked = BloomFilter.create("DYNAMIC_V0", num_entries=70, fpp=0.01, max_entries=260)
    chunked.add_keys(keys)
    assert chunked.serialize() == whole.serialize()
    assert chunked.might_contain_many(keys).all()


def test_false_positive_rate_near_fpp():
    for type_code in ("SIMPLE", "DYNAMIC_V0"):
        bf = BloomFilter.create(type_code, num_entries=2000, fpp=0.01, max_entries=2000)
        bf.add_keys([f"in-{i}" for i in range(2000)])
        rate = bf.might_contain_many([f"out-{i}" for i in range(50000)]).mean()
        assert 0.002 < rate < 0.02, (type_code, rate)


def test_dynamic_growth_past_num_entries():
    bf = BloomFilter.create("DYNAMIC_V0", num_entries=100, fpp=0.001, max_entries=350)
    bf.add_keys([f"a{i}" for i in range(100)])
    assert len(bf.rows) == 1 and bf.current_nb_record == 100
    bf.add_keys(["a100"])
    assert len(bf.rows) == 2 and bf.current_nb_record == 1
    bf.add_keys([f"a{i}" for i in range(101, 400)])
    assert len(bf.rows) == 4  # 3 * 100 < 350 lets a 4th row in; 4 * 100 >= 350 stops growth
    bf.add_keys([f"a{i}" for i in range(400, 1000)])
    assert len(bf.rows) == 4 and bf.current_nb_record == 700
    keys = [f"a{i}" for i in range(1000)]
    assert bf.might_contain_many(keys).all()
    # each row stays a proper filter: past the bound keys are spread over all rows
    back = BloomFilter.deserialize(bf.serialize(), "DYNAMIC_V0")
    assert len(back.rows) == 4 and back.might_contain_many(keys).all()
    # like Hudi, a deserialized filter has no max bound (transient) and does not grow further
    back.add_keys([f"b{i}" for i in range(500)])
    assert len(back.rows) == 4
    assert back.might_contain_many([f"b{i}" for i in range(500)]).all()


def test_dynamic_default_rows_for_many_keys():
    bf = BloomFilter.create()  # DYNAMIC_V0, 60000 / 1e-9 / 100000
    bf.add_keys([str(uuid.UUID(int=i)) for i in range(130000)])
    assert len(bf.rows) == 2  # 2 * 60000 >= 100000: no third row
    assert bf.current_nb_record == 70000


def test_empty_filters_roundtrip():
    for type_code in ("SIMPLE", "DYNAMIC_V0"):
        bf = BloomFilter.create(type_code, num_entries=10, fpp=0.1)
        s = bf.serialize()
        assert BloomFilter.deserialize(s, type_code).serialize() == s
        assert not bf.might_contain("x")
        assert bf.might_contain_many([]).shape == (0,)
        bf.add_keys([])
        assert bf.serialize() == s


def test_key_containers():
    keys = ["k1", "k2", "ключ", "k4"]
    reference = BloomFilter.create("SIMPLE", num_entries=50, fpp=0.01)
    reference.add_keys(keys)
    expected = reference.serialize()
    variants = [
        tuple(keys),
        (k for k in keys),
        np.array(keys),
        np.array(keys, dtype=object),
        pa.array(keys),
        pa.array(keys, type=pa.large_string()),
        pa.chunked_array([keys[:2], keys[2:]]),
        pa.array(["x"] + keys).slice(1),
        pa.array(keys).dictionary_encode(),
    ]
    for v in variants:
        bf = BloomFilter.create("SIMPLE", num_entries=50, fpp=0.01)
        bf.add_keys(v)
        assert bf.serialize() == expected, type(v)
        assert bf.might_contain_many(v if not hasattr(v, "__next__") else keys).all()
    bf = BloomFilter.create("SIMPLE", num_entries=50, fpp=0.01)
    bf.add_keys("k1")  # a single str is one key, not its characters
    assert bf.might_contain("k1") and not bf.might_contain("k")


def test_bad_keys_raise_record_key_error():
    bf = BloomFilter.create("SIMPLE", num_entries=50, fpp=0.01)
    with pytest.raises(RecordKeyError, match="null"):
        bf.add_keys(["a", None])
    with pytest.raises(RecordKeyError, match="null"):
        bf.add_keys(pa.array(["a", None]))
    with pytest.raises(RecordKeyError, match="empty"):
        bf.add_keys(["a", ""])
    with pytest.raises(RecordKeyError):
        bf.might_contain(None)


def test_bad_options_raise_config_error():
    with pytest.raises(ConfigError, match="type"):
        BloomFilter.create("BOGUS")
    with pytest.raises(ConfigError, match="num_entries"):
        BloomFilter.create("SIMPLE", num_entries=0)
    with pytest.raises(ConfigError, match="fpp"):
        BloomFilter.create("SIMPLE", fpp=1.5)
    with pytest.raises(ConfigError, match="fpp"):
        BloomFilter.create("SIMPLE", fpp=0)
    with pytest.raises(ConfigError, match="2\\^31"):
        BloomFilter.create("SIMPLE", num_entries=2**30, fpp=1e-9)
    assert BloomFilter.create("simple").type_code == "SIMPLE"  # case-insensitive like Hudi


# ----------------------------------------------------------------------------------------------------------------
# corrupt input
# ----------------------------------------------------------------------------------------------------------------


def _valid(type_code):
    bf = BloomFilter.create(type_code, num_entries=40, fpp=0.01)
    bf.add_keys([f"k{i}" for i in range(60)])
    return bf.serialize()


@pytest.mark.parametrize("type_code", ["SIMPLE", "DYNAMIC_V0"])
def test_garbage_raises_corrupt_file_error(type_code):
    cases = {
        "": "empty",
        "   ": "empty",
        "not base64 at all!!": "Base64",
        base64.b64encode(b"\x00\x01").decode(): "truncated",
        base64.b64encode(b"\xde\xad\xbe\xef" * 50).decode(): "version",
        base64.b64encode(struct.pack(">iibi", -1, 3, 0, 64) + b"\x00" * 8).decode(): "hash type",
        base64.b64encode(struct.pack(">iibi", -1, 0, 1, 64) + b"\x00" * 8).decode(): "hash functions",
        base64.b64encode(struct.pack(">iibi", -1, 3, 1, -5)).decode(): "bit-vector size",
        base64.b64encode(struct.pack(">i", 7) + b"\x00" * 20).decode(): "Jenkins",
    }
    for text, needle in cases.items():
        with pytest.raises(CorruptFileError, match=needle):
            BloomFilter.deserialize(text, type_code)
    with pytest.raises(CorruptFileError):
        BloomFilter.deserialize(12345, type_code)


@pytest.mark.parametrize("type_code", ["SIMPLE", "DYNAMIC_V0"])
def test_truncated_strings_raise_corrupt_file_error(type_code):
    s = _valid(type_code)
    raw = base64.b64decode(s)
    for cut in sorted({1, 4, 12, 13, 20, 24, 25, 30, len(raw) // 2, len(raw) - 1}):
        if cut >= len(raw):
            continue
        with pytest.raises(CorruptFileError, match="truncated|Base64|rows|malformed"):
            BloomFilter.deserialize(base64.b64encode(raw[:cut]).decode(), type_code)
    for cut in (5, len(s) // 3, len(s) - 3):  # cutting the Base64 text itself
        with pytest.raises(CorruptFileError):
            BloomFilter.deserialize(s[:cut], type_code)
    with pytest.raises(CorruptFileError, match="trailing|malformed"):
        BloomFilter.deserialize(base64.b64encode(raw + b"\x00\x00").decode(), type_code)


def test_dynamic_specific_corruption():
    raw = base64.b64decode(_valid("DYNAMIC_V0"))
    bad_rows = raw[:21] + struct.pack(">i", 0) + raw[25:]
    with pytest.raises(CorruptFileError, match="rows"):
        BloomFilter.deserialize(base64.b64encode(bad_rows).decode(), "DYNAMIC_V0")
    huge_rows = raw[:21] + struct.pack(">i", 2**31 - 1) + raw[25:]
    with pytest.raises(CorruptFileError, match="malformed"):
        BloomFilter.deserialize(base64.b64encode(huge_rows).decode(), "DYNAMIC_V0")
    # a row whose header disagrees with the filter's
    mixed = raw[:25] + struct.pack(">iibi", -1, 2, 1, struct.unpack_from(">i", raw, 9)[0]) + raw[38:]
    with pytest.raises(CorruptFileError, match="row 0"):
        BloomFilter.deserialize(base64.b64encode(mixed).decode(), "DYNAMIC_V0")


def test_unknown_type_code_and_missing_type_code():
    with pytest.raises(CorruptFileError, match="DYNAMIC_V0"):
        BloomFilter.deserialize(_valid("SIMPLE"), "DYNAMIC_V9")
    # no type code: Hudi reads the filter as SIMPLE
    assert BloomFilter.deserialize(_valid("SIMPLE"), None).type_code == "SIMPLE"
    assert BloomFilter.deserialize(_valid("SIMPLE"), b"SIMPLE").type_code == "SIMPLE"
    assert issubclass(CorruptFileError, PyHudiError)


# ----------------------------------------------------------------------------------------------------------------
# footer helpers
# ----------------------------------------------------------------------------------------------------------------


def test_footer_roundtrip_through_parquet(tmp_path):
    keys = sorted(str(uuid.UUID(int=i * 7919)) for i in range(1000))
    bf = BloomFilter.create()
    bf.add_keys(keys)
    table = pa.table({"_hoodie_record_key": keys})
    md = footer_metadata(bf, keys[0], keys[-1])
    table = table.replace_schema_metadata(md)
    path = tmp_path / "f.parquet"
    pq.write_table(table, path)
    footer = pq.ParquetFile(path).metadata.metadata
    assert footer[FOOTER_TYPE_KEY.encode()] == b"DYNAMIC_V0"
    assert footer[FOOTER_MIN_KEY.encode()].decode() == keys[0]
    assert footer[FOOTER_MAX_KEY.encode()].decode() == keys[-1]
    back = from_footer(footer)
    assert back.serialize() == bf.serialize()
    assert back.might_contain_many(keys).all()
    # old com.uber key, no type code -> SIMPLE
    simple = BloomFilter.create("SIMPLE", num_entries=10, fpp=0.1)
    simple.add_keys(["a"])
    old = from_footer({"com.uber.hoodie.bloomfilter": simple.serialize()})
    assert old.type_code == "SIMPLE" and old.might_contain("a")
    assert from_footer({}) is None and from_footer(None) is None


# ----------------------------------------------------------------------------------------------------------------
# performance
# ----------------------------------------------------------------------------------------------------------------


def test_200k_uuid_keys_are_fast():
    keys = pa.array([str(uuid.uuid4()) for _ in range(200_000)])
    others = pa.array([str(uuid.uuid4()) for _ in range(200_000)])
    BloomFilter.create().add_keys(["warm-up"])
    bf = BloomFilter.create(max_entries=1_000_000)
    t0 = time.perf_counter()
    bf.add_keys(keys)
    t1 = time.perf_counter()
    hits = bf.might_contain_many(keys)
    t2 = time.perf_counter()
    false_pos = bf.might_contain_many(others).sum()
    print(f"add 200k: {t1 - t0:.3f}s, test 200k: {t2 - t1:.3f}s, rows={len(bf.rows)}, fp={false_pos}")
    assert hits.all()
    assert false_pos <= 5
    assert t1 - t0 < 3.0 and t2 - t1 < 3.0


@pytest.mark.parametrize("filter_type", ["SIMPLE", "DYNAMIC_V0"])
def test_a_filter_read_from_a_footer_probes_its_stored_bytes_then_grows(filter_type):
    """A filter read back keeps its bytes packed for probes; adding keys (a rewrite carrying it over) unpacks it,
    and both forms answer and serialize alike."""
    written = BloomFilter.create(filter_type, 300, 0.001, 1000)
    written.add_keys([f"key-{i}" for i in range(0, 1000, 2)])
    footer = {FOOTER_BLOOM_KEY: written.serialize(), FOOTER_TYPE_KEY: written.type_code}
    read = from_footer(footer)
    probe = [f"key-{i}" for i in range(1000)]
    assert list(read.might_contain_many(probe)) == list(written.might_contain_many(probe))
    assert read.serialize() == written.serialize()
    read.add_keys(["key-1"])
    written.add_keys(["key-1"])
    assert read.might_contain_many(["key-1"]).all()
    assert read.serialize() == written.serialize()


@pytest.mark.parametrize("filter_type", ["SIMPLE", "DYNAMIC_V0"])
def test_filter_read_from_text_decodes_only_what_it_tests_and_agrees_with_a_full_decode(filter_type):
    """A deserialized filter keeps the footer's Base64 text and decodes the bytes a lookup's bits are in: every
    answer, the re-serialized text and a later add_keys must be those of the fully decoded filter."""
    from pyhudi.file_group.bloom_filter.filters import DynamicBloomFilter, SimpleBloomFilter
    rng = np.random.default_rng(5)
    stored = [f"k{i:09d}" for i in rng.choice(10**8, 3000, replace=False)]
    bf = BloomFilter.create(filter_type, num_entries=1000, fpp=0.01, max_entries=5000)
    bf.add_keys(stored)
    text = bf.serialize()
    lazy = BloomFilter.deserialize(text, filter_type)
    eager = (SimpleBloomFilter if filter_type == "SIMPLE" else DynamicBloomFilter)._from_raw(base64.b64decode(text))
    probe = stored[:500] + [f"x{i}" for i in range(5000)]
    assert lazy.might_contain_many(probe).tolist() == eager.might_contain_many(probe).tolist()
    assert lazy.might_contain_many(stored).all()
    assert lazy.serialize() == text
    lazy.add_keys(["new-key"])
    eager.add_keys(["new-key"])
    assert lazy.serialize() == eager.serialize() and lazy.might_contain("new-key")


@pytest.mark.parametrize("filter_type", ["SIMPLE", "DYNAMIC_V0"])
def test_a_stray_character_in_the_bit_vector_fails_the_lookups_that_read_it(filter_type):
    """The text is checked where it is decoded: a lookup whose bits fall in a corrupt character's group raises
    CorruptFileError, every other lookup answers as the intact filter does, and a full decode raises."""
    bf = BloomFilter.create(filter_type, num_entries=200, fpp=0.01, max_entries=1000)
    bf.add_keys([f"k{i}" for i in range(300)])
    text = bf.serialize()
    middle = len(text) // 2
    corrupt = BloomFilter.deserialize(text[:middle] + "!" + text[middle + 1:], filter_type)
    intact = BloomFilter.deserialize(text, filter_type)
    answered = failed = 0
    for key in [f"k{i}" for i in range(300)] + [f"x{i}" for i in range(300)]:
        try:
            answer = corrupt.might_contain(key)
        except CorruptFileError as exc:
            assert "Base64" in str(exc) and "'!'" in str(exc)
            failed += 1
            continue
        assert answer == intact.might_contain(key), key
        answered += 1
    assert answered and failed
    with pytest.raises(CorruptFileError, match="Base64"):
        corrupt.serialize()


def test_hashed_keys_slices_give_the_positions_of_their_keys_hashed_once():
    """A task hashes its candidate keys once per filter shape; each file's slice gets exactly the positions its
    own keys hash to, and a filter answers the same from either."""
    from pyhudi.file_group.bloom_filter import hashing
    keys = pa.array([f"key-{i:07d}" + "x" * (i % 9) for i in range(3000)])
    hashed = hashing.HashedKeys(keys)
    bf = BloomFilter.create("DYNAMIC_V0", num_entries=500, fpp=0.001, max_entries=4000)
    bf.add_keys(keys.slice(0, 1500))
    expected = {(s, n): np.concatenate(list(hashing.hash_keys(keys.slice(s, n), 9, 4096)) or
                                       [np.empty((0, 9), np.int64)])
                for s, n in ((0, 10), (1495, 10), (2990, 10), (700, 0))}
    direct = {k: bf.might_contain_many(keys.slice(*k)).tolist() for k in expected}
    calls = []
    original = hashing._hash_indices
    try:
        hashing._hash_indices = lambda *a: calls.append(a[2:]) or original(*a)
        for (start, length), positions in expected.items():
            part = hashed.slice(start, length)
            assert np.array_equal(part.positions(9, 4096), positions)
            assert bf.might_contain_many(part).tolist() == direct[(start, length)]
    finally:
        hashing._hash_indices = original
    assert len(calls) == len(set(calls)) == 2   # (9, 4096) and the filter's shape: each once, for every slice
    for shape in range(10, 16):   # past a few shapes, only the slice's own keys are hashed
        assert np.array_equal(hashed.slice(5, 3).positions(shape, 999),
                              np.concatenate(list(hashing.hash_keys(keys.slice(5, 3), shape, 999))))
    assert len(hashed._memo) == hashing._SHAPES
