"""Key ranges a write just produced seed the driver's footer cache (index/footers.remember_key_ranges): the next
write's range pruning reads no footer for them."""

from pyhudi.index.footers import FooterCache, file_keys, remember_key_ranges
from pyhudi.storage import Storage


def test_remembered_ranges_are_served_without_reading(tmp_path):
    storage = Storage(str(tmp_path))
    cache = FooterCache()
    remember_key_ranges(storage, [("p/f1_0-1-1_001.parquet", "a", "m"), (".f2_001.log.1_0-1-1", "x", "z")],
                        cache=cache)
    # the base file does not even exist: its range comes from the cache, not from storage
    (keys,) = file_keys(None, storage, ["p/f1_0-1-1_001.parquet"], cache=cache)
    assert (keys.min_key, keys.max_key, cache.reads) == ("a", "m", 0)
    assert cache.get(storage.uri(".f2_001.log.1_0-1-1")) is None     # log files are not base files
