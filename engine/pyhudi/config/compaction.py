"""Compaction config: when merge-on-read file slices are compacted and which (Hudi's HoodieCompactionConfig).
Strategy short names are resolved by pyhudi.services.compaction.plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pyhudi.config.core import NON_NEGATIVE, POSITIVE, bool_value, declare, upper, whole_number
from pyhudi.config.resolve import HoodieConfig, read_settings, setting

COMPACT_INLINE = declare("hoodie.compact.inline", False, bool_value)
COMPACT_SCHEDULE_INLINE = declare("hoodie.compact.schedule.inline", False, bool_value)
COMPACT_MAX_DELTA_COMMITS = declare("hoodie.compact.inline.max.delta.commits", 5, POSITIVE)
COMPACT_MAX_DELTA_SECONDS = declare("hoodie.compact.inline.max.delta.seconds", 3600, NON_NEGATIVE)
COMPACT_TRIGGER = declare("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS", upper,
                          ("NUM_COMMITS", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME"))
COMPACTION_STRATEGY = declare("hoodie.compaction.strategy",
                              "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",
                              doc="Which file slices a compaction plan takes and in which order.")
COMPACTION_TARGET_IO = declare("hoodie.compaction.target.io", 500 * 1024, whole_number,
                               doc="MB of IO (read + write) one compaction plans for (BoundedIO budget).")
COMPACTION_LOG_SIZE_THRESHOLD = declare("hoodie.compaction.logfile.size.threshold", 0, whole_number,
                                        doc="Bytes of log files a slice needs (LogFileSizeBasedCompactionStrategy).")
COMPACTION_LOG_NUM_THRESHOLD = declare("hoodie.compaction.logfile.num.threshold", 0, whole_number,
                                       doc="Log files a slice needs (LogFileNumBasedCompactionStrategy).")
COMPACTION_PAYLOAD_CLASS = declare("hoodie.compaction.payload.class", None,
                                   doc="Payload of compaction; default: the table's, else the write payload class.")


@dataclass(frozen=True)
class CompactionConfig:
    """The compaction options of one write or service call, parsed once."""

    inline: bool = setting(COMPACT_INLINE)
    schedule_inline: bool = setting(COMPACT_SCHEDULE_INLINE)
    trigger: str = setting(COMPACT_TRIGGER)
    max_delta_commits: int = setting(COMPACT_MAX_DELTA_COMMITS)
    max_delta_seconds: int = setting(COMPACT_MAX_DELTA_SECONDS)
    strategy: str = setting(COMPACTION_STRATEGY)
    target_io_mb: int = setting(COMPACTION_TARGET_IO)
    log_size_threshold: int = setting(COMPACTION_LOG_SIZE_THRESHOLD)
    log_num_threshold: int = setting(COMPACTION_LOG_NUM_THRESHOLD)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | HoodieConfig | None) -> CompactionConfig:
        return read_settings(cls, options)
