"""Base-file footers the bloom index needs (min/max record key, bloom filter), read once per file.

Base files are immutable (their name carries the write token and instant), so a footer read for a path stays
valid: a driver-side LRU cache keyed by the file's full URI spares repeated writes from re-reading unchanged
files. Few uncached files are read on the driver (metadata); many are read by a Spark job, one task per slice.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from pyhudi.file_group.base_file import read_footer
from pyhudi.file_group.bloom_filter import FOOTER_MAX_KEY, FOOTER_MIN_KEY, BloomFilter, from_footer
from pyhudi.storage import Storage

SPARK_READ_THRESHOLD = 64          # more uncached footers than this are read by a Spark job
CACHE_BUDGET_BYTES = 256 << 20     # bloom bits kept in the cache


@dataclass(frozen=True)
class FileKeys:
    """What a base file's footer says about its record keys."""

    min_key: str | None
    max_key: str | None
    bloom: BloomFilter | None
    nbytes: int = 0      # size of the serialized filter (cache accounting)


def _parse(footer: dict[str, str]) -> FileKeys:
    size = sum(len(v) for k, v in footer.items() if k.endswith("bloomfilter"))
    return FileKeys(footer.get(FOOTER_MIN_KEY), footer.get(FOOTER_MAX_KEY), from_footer(footer), size)


def _footer_subset(footer: dict[str, str]) -> dict[str, str]:
    wanted = ("org.apache.hudi.bloomfilter", "com.uber.hoodie.bloomfilter", "hoodie_bloom_filter_type_code",
              FOOTER_MIN_KEY, FOOTER_MAX_KEY)
    return {k: v for k, v in footer.items() if k in wanted}


class FooterCache:
    """LRU of FileKeys by full file URI, bounded by the bloom filters' size."""

    def __init__(self, budget: int = CACHE_BUDGET_BYTES):
        self.budget = budget
        self._entries: OrderedDict[str, tuple[FileKeys, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.reads = 0   # footers read from storage (for tests and stats)

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


CACHE = FooterCache()


def file_keys(spark, storage: Storage, paths: list[str], cache: FooterCache = CACHE) -> list[FileKeys]:
    """FileKeys for each relative base-file path, from the cache or storage."""
    uris = [storage.uri(p) for p in paths]
    found = {uri: cache.get(uri) for uri in uris}
    missing = [(p, u) for p, u in zip(paths, uris) if found[u] is None]
    if missing:
        if spark is not None and len(missing) > SPARK_READ_THRESHOLD:
            footers = _read_in_spark(spark, storage, [p for p, _ in missing])
        else:
            footers = [read_footer(storage, p) for p, _ in missing]
        cache.reads += len(missing)
        for (_, uri), footer in zip(missing, footers):
            keys = _parse(footer)
            found[uri] = keys
            cache.put(uri, keys)
    return [found[u] for u in uris]


def _read_in_spark(spark, storage: Storage, paths: list[str]) -> list[dict[str, str]]:
    """Read many footers in executors; only the index entries come back to the driver."""
    slices = max(1, min(len(paths) // 16, spark.sparkContext.defaultParallelism * 4))

    def read(part):
        for index, path in part:
            yield index, _footer_subset(read_footer(storage, path))

    rows = spark.sparkContext.parallelize(list(enumerate(paths)), slices).mapPartitions(read).collect()
    by_index = dict(rows)
    return [by_index[i] for i in range(len(paths))]
