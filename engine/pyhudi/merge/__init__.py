"""The one owner of Hudi's merge rules (ordering / precombine, payload classes, deletes) for writes, merge-on-read
snapshots and compaction: :mod:`.payloads` (the classes by their Hudi names), :mod:`.rules` (vectorized
preCombine and combine-with-stored), :mod:`.file_group` (an incoming batch against a stored file group)."""

from pyhudi.merge.file_group import (IS_DELETED_FIELD, RECORD_KEY, MergeResult, concat_file_group, data_columns,
                                     delete_mask, event_time_range, keep_latest_per_key, merge_file_group)
from pyhudi.merge.payloads import (DEFAULT_PAYLOAD, EMPTY_PAYLOAD, EVENT_TIME_PAYLOAD, OVERWRITE_NON_DEFAULTS,
                                   OVERWRITE_WITH_LATEST, PARTIAL_UPDATE, PAYLOAD_EVENT_TIME_FIELD,
                                   PAYLOAD_ORDERING_FIELD, PAYLOADS, SUPPORTED_PAYLOADS, VALIDATE_DUPLICATE_KEY,
                                   Payload, payload_of)
from pyhudi.merge.rules import combine_with_stored, latest_per_key, precombine, stored_wins

__all__ = ["IS_DELETED_FIELD", "RECORD_KEY", "MergeResult", "concat_file_group", "data_columns", "delete_mask",
           "event_time_range", "keep_latest_per_key", "merge_file_group", "DEFAULT_PAYLOAD", "EMPTY_PAYLOAD", "EVENT_TIME_PAYLOAD",
           "OVERWRITE_NON_DEFAULTS", "OVERWRITE_WITH_LATEST", "PARTIAL_UPDATE", "PAYLOAD_EVENT_TIME_FIELD",
           "PAYLOAD_ORDERING_FIELD", "VALIDATE_DUPLICATE_KEY", "PAYLOADS", "SUPPORTED_PAYLOADS", "Payload",
           "payload_of",
           "combine_with_stored", "latest_per_key", "precombine", "stored_wins"]
