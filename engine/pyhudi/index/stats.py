"""What an index lookup did, per write: reported in WriteResult.index_stats and stored in the commit's
extraMetadata under `pyhudi.index.stats` (a JSON string: Hudi's extraMetadata values are strings)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

EXTRA_METADATA_KEY = "pyhudi.index.stats"


@dataclass
class IndexStats:
    index_type: str
    keys_looked_up: int = 0          # incoming records that went through the index
    files_considered: int = 0        # latest base files in the partitions (or table, global) the keys may be in
    files_pruned_by_range: int = 0   # considered files whose [min, max] key range holds none of the keys
    files_pruned_by_bloom: int = 0   # in-range files whose bloom filter rejects every key
    candidate_files: int = 0         # files whose keys were read to confirm
    confirmed_files: int = 0         # file groups that really hold incoming keys (updated or deleted)
    false_positive_files: int = 0    # candidate files holding none of the keys
    footers_read: int = 0            # footers read from storage (the rest came from the footer cache)
    updates: int = 0                 # records tagged to an existing file group (updates and deletes)
    inserts: int = 0                 # records without a location (new keys)

    def as_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True)
