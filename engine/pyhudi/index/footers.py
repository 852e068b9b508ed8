"""Base-file footers the bloom index needs, read once per file: the min/max record key on the driver (to prune by
range), the bloom filter in the executor task that checks that file's candidate keys (as Hudi's bucketized
bloom check), so the driver never holds the filters and its memory does not grow with the table.

Base files are immutable (their name carries the write token and instant), so a footer read for a path stays
valid: an LRU cache per process, keyed by the file's full URI, spares repeated writes from re-reading unchanged
files (the driver caches key ranges; each Python worker caches the filters it loaded). Few uncached footers are
read on the driver; many are read by a Spark job, one task per slice.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterable

import pyarrow as pa

from pyhudi.file_group.base_file import read_footer, read_footer_entries
from pyhudi.file_group.bloom_filter import FILTER_KEYS, FOOTER_MAX_KEY, FOOTER_MIN_KEY, BloomFilter, from_footer
from pyhudi.storage import Storage
from pyhudi.spark.jvm import default_parallelism, is_connect

SPARK_READ_THRESHOLD = 256         # more uncached footers than this are read by a Spark job (fewer: 8 driver threads)
CACHE_BUDGET_BYTES = 256 << 20     # driver cache budget (key ranges: a few bytes per file)
EXECUTOR_CACHE_BUDGET_BYTES = 64 << 20   # bloom filters kept by each executor Python worker


@dataclass(frozen=True)
class FileKeys:
    """What a base file's footer says about its record keys."""

    min_key: str | None
    max_key: str | None
    bloom: BloomFilter | None
    nbytes: int = 0      # size of the serialized filter (cache accounting)


def _key_range(footer: dict[str, str]) -> FileKeys:
    low, high = footer.get(FOOTER_MIN_KEY), footer.get(FOOTER_MAX_KEY)
    return FileKeys(low, high, None, len(low or "") + len(high or "") + 64)


_RANGE_KEYS = (FOOTER_MIN_KEY, FOOTER_MAX_KEY)
_FOOTER_ROWS = pa.schema([("i", pa.int32()), ("keys", pa.map_(pa.string(), pa.string()))])


class FooterCache:
    """LRU of FileKeys by full file URI, bounded by the bloom filters' size."""

    def __init__(self, budget: int = CACHE_BUDGET_BYTES):
        self.budget = budget
        self._entries: OrderedDict[str, tuple[FileKeys, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.reads = 0   # footers read from storage (for tests and stats)
        self.epoch = 0   # bumped by clear(): the driver's epoch travels with a lookup and clears executor caches

    def get(self, uri: str) -> FileKeys | None:
        with self._lock:
            hit = self._entries.get(uri)
            if hit is None:
                return None
            self._entries.move_to_end(uri)
            return hit[0]

    def put(self, uri: str, keys: FileKeys) -> None:
        size = keys.nbytes
        with self._lock:
            if uri in self._entries:
                return
            self._entries[uri] = (keys, size)
            self._bytes += size
            while self._bytes > self.budget and len(self._entries) > 1:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self.epoch += 1


CACHE = FooterCache()          # key ranges (driver)
BLOOM_CACHE = FooterCache(EXECUTOR_CACHE_BUDGET_BYTES)    # bloom filters (in each executor Python worker)


def bloom_filter(storage: Storage, path: str, epoch: int = 0, cache: FooterCache = BLOOM_CACHE) -> BloomFilter | None:
    """The bloom filter in a base file's footer (None when it has none), from the cache, else from the footer's
    entries (read_footer_entries: the ~1 MB footer is not parsed); a cache filled under another driver cache epoch
    is dropped first."""
    if cache.epoch != epoch:
        cache.clear()
        cache.epoch = epoch
    uri = storage.uri(path)
    hit = cache.get(uri)
    if hit is None:
        footer = read_footer_entries(storage, path, FILTER_KEYS)
        size = sum(len(v) for k, v in footer.items() if k.endswith(b"bloomfilter"))
        hit = FileKeys(None, None, from_footer(footer), size)   # the key range is the driver's (CACHE)
        cache.reads += 1
        cache.put(uri, hit)
    return hit.bloom


def remember_key_ranges(storage: Storage, ranges: Iterable[tuple[str, str | None, str | None]],
                        cache: FooterCache = CACHE) -> None:
    """Key ranges of base files this process just wrote, as (relative path, min key, max key) from the write's
    stats rows (the values the writer put in the footer): the next write prunes by them without reading the
    footers back. Log files are skipped (the index reads base files only)."""
    for path, low, high in ranges:
        if path and path.endswith(".parquet"):
            keys = FileKeys(low, high, None, len(low or "") + len(high or "") + 64)
            cache.put(storage.uri(path), keys)


def file_keys(spark, storage: Storage, paths: list[str], cache: FooterCache = CACHE) -> list[FileKeys]:
    """The key range (FileKeys without filter) of each relative base-file path, from the cache or storage."""
    uris = [storage.uri(p) for p in paths]
    found = {uri: cache.get(uri) for uri in uris}
    missing = [(p, u) for p, u in zip(paths, uris) if found[u] is None]
    if missing:
        if spark is not None and len(missing) > SPARK_READ_THRESHOLD:
            footers = _read_in_spark(spark, storage, [p for p, _ in missing])
        else:
            with ThreadPoolExecutor(max_workers=min(8, len(missing))) as pool:   # pyarrow reads without the GIL
                footers = list(pool.map(lambda item: read_footer(storage, item[0], _RANGE_KEYS), missing))
        cache.reads += len(missing)
        for (_, uri), footer in zip(missing, footers):
            keys = _key_range(footer)
            found[uri] = keys
            cache.put(uri, keys)
    return [found[u] for u in uris]


def _read_in_spark(spark, storage: Storage, paths: list[str]) -> list[dict[str, str]]:
    """Read many footers in executors; only the key ranges come back to the driver."""
    slices = max(1, min(len(paths) // 16, default_parallelism(spark) * 4))

    def read(part):
        for index, path in part:
            yield index, read_footer(storage, path, _RANGE_KEYS)

    if is_connect(spark):   # no RDDs: the same tasks over a DataFrame of (index, path)
        def read_batches(batches):
            for batch in batches:
                found = list(read(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist())))
                yield pa.RecordBatch.from_pydict({"i": [i for i, _ in found], "keys": [k for _, k in found]},
                                                 schema=_FOOTER_ROWS)
        spread = spark.createDataFrame(list(enumerate(paths)), "i int, path string").repartition(slices)
        rows = [(r["i"], dict(r["keys"] or {})) for r in
                spread.mapInArrow(read_batches, "i int, `keys` map<string, string>").collect()]
    else:
        rows = spark.sparkContext.parallelize(list(enumerate(paths)), slices).mapPartitions(read).collect()
    by_index = dict(rows)
    return [by_index[i] for i in range(len(paths))]
