"""Index building blocks without Spark: key-range interval tree, Hudi's bucket hashing, footer cache, WriteResult."""

from __future__ import annotations

import pickle
import random

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi import config as C
from pyhudi.errors import ConfigError
from pyhudi.index import index_spec
from pyhudi.index.bucket import bucket_id, bucket_ids, bucket_of_file_id, hash_keys, java_string_hash
from pyhudi.index.footers import FileKeys, FooterCache
from pyhudi.index.ranges import KeyRangeIndex
from pyhudi.client import WriteResult


def test_range_index_matches_brute_force():
    rng = random.Random(7)
    for _ in range(200):
        ranges = []
        for _ in range(rng.randint(0, 15)):
            lo, hi = sorted(f"k{rng.randint(0, 99):03d}" for _ in range(2))
            ranges.append((lo, hi) if rng.random() > 0.1 else (None, None))
        keys = [f"k{rng.randint(0, 105):03d}" for _ in range(30)]
        got = sorted(zip(*[a.tolist() for a in KeyRangeIndex(ranges).query(keys)]))
        want = sorted((i, j) for i, k in enumerate(keys) for j, (lo, hi) in enumerate(ranges)
                      if lo is None or lo <= k <= hi)
        assert got == want


def test_range_index_without_pruning_pairs_every_file():
    index = KeyRangeIndex([("a", "b"), ("y", "z")], prune=False)
    keys, files = index.query(["m"])
    assert sorted(files.tolist()) == [0, 1] and keys.tolist() == [0, 0]


def test_java_string_hash_and_hudi_hash_keys():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("\U0001F600") == 0xD83D * 31 + 0xDE00   # UTF-16 surrogate pair
    assert hash_keys("abc", []) == ["abc"]
    assert hash_keys("f1:abc,f2:bcd", ["f2"]) == ["bcd"]
    assert hash_keys("f1:abc,f2:bcd", ["f1", "f2"]) == ["abc", "bcd"]
    assert hash_keys("f1:abc,f2:bcd", ["f2", "f1"]) == ["abc", "bcd"]        # the key's order (Hudi 0.13+)
    # a value holding ',' leaves a part without ':', hashed whole (KeyGenUtils.extractRecordKeysByFields)
    assert hash_keys("id:1,name:a1,1", ["id", "name"]) == ["1", "a1", "1"]
    assert hash_keys("id:__null__,name:__empty__", ["id", "name"]) == [None, ""]
    assert bucket_id("1", ["id"], 4) == (31 + ord("1")) % 4      # List.hashCode of ["1"]
    assert bucket_of_file_id("00000003-aaaa-bbbb-cccc-dddddddddddd-0") == 3
    assert bucket_of_file_id("5d1f2a3b-aaaa") is None


def test_index_spec_validation():
    spec = index_spec(C.HoodieConfig({"hoodie.index.type": "bucket"}), ["id"])
    assert spec.is_bucket and spec.num_buckets == 256 and spec.hash_fields == ("id",)
    with pytest.raises(ConfigError, match="subset"):
        index_spec(C.HoodieConfig({"hoodie.index.type": "BUCKET", "hoodie.bucket.index.hash.field": "x"}), ["id"])
    assert index_spec(C.HoodieConfig({"hoodie.index.type": "INMEMORY"}), ["id"]).type == "GLOBAL_SIMPLE"
    with pytest.raises(ConfigError, match="GLOBAL_SIMPLE"):
        C.HoodieConfig({"hoodie.index.type": "HASH"})
    assert index_spec(C.HoodieConfig({"hoodie.index.type": "GLOBAL_BLOOM",
                                      "hoodie.bloom.index.update.partition.path": "false"}), ["id"]) \
        .update_partition_path is False


def test_footer_cache_is_bounded_lru():
    cache = FooterCache(budget=100)
    for i in range(5):
        cache.put(f"f{i}", FileKeys("a", "b", None, 40))
    assert cache.get("f0") is None and cache.get("f4") is not None
    assert sum(cache.get(f"f{i}") is not None for i in range(5)) == 2


def test_write_result_prints_its_instant_but_is_not_a_string():
    result = WriteResult("20240101000000000", "upsert", [{"numWrites": 3}], {"index_type": "BLOOM"})
    assert str(result) == f"{result}" == "20240101000000000" and result != "20240101000000000"
    assert result.num_writes == 3
    copy = pickle.loads(pickle.dumps(result))
    assert copy == result and copy.index_stats == {"index_type": "BLOOM"} and copy.operation == "upsert"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40), st.text(alphabet="abc:,0123", max_size=12),
                          st.from_regex(r"k[0-9]{1,12}", fullmatch=True)).filter(lambda k: _hashable(k)), max_size=60),
    st.integers(min_value=1, max_value=300), st.integers(min_value=0, max_value=3))
def test_vectorized_bucket_ids_equal_the_per_key_java_hash(keys, num_buckets, skip):
    array = pa.array(["pad"] * skip + keys, pa.string()).slice(skip)   # a slice: offsets not starting at 0
    expected = [bucket_id(k, ["id"], num_buckets) for k in keys]
    assert bucket_ids(array, ["id"], num_buckets).tolist() == expected


def _hashable(key: str) -> bool:
    try:
        bucket_id(key, ["id"], 3)
        return True
    except Exception:   # malformed "field:value" keys are refused by both paths alike
        return False
