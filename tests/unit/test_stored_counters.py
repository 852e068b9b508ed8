"""The bloom lookup's counters on Spark Connect (index/bloom._StoredCounters): files in the table's storage."""

from pyhudi.index.bloom import _StoredCounters
from pyhudi.storage import Storage


def test_a_retried_add_replaces_its_own_and_value_merges_once(tmp_path):
    storage = Storage(str(tmp_path))
    counters = _StoredCounters(storage)
    counters.add({("range", 0): (5, {1: 2}), ("partitions", 0): {"p1"}})
    counters.add({("range", 0): (7, {1: 3})})           # task 0 retried: its entry is replaced, not added
    counters.add({("file", 1): (3, 2)})
    assert counters.value == {("range", 0): (7, {1: 3}), ("partitions", 0): {"p1"}, ("file", 1): (3, 2)}
    assert not storage.exists(counters.folder)          # read once, then deleted
    assert counters.value[("file", 1)] == (3, 2)
