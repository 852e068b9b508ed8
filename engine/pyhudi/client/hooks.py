"""Post-commit services, run as hooks once a write's completed instant exists (Hudi's postCommit): inline
compaction of a merge-on-read table when due, inline clustering when due, then the cleaner and the archiver when due.

A hook's failure does not make the committed write an error (the caller would retry it and duplicate its rows):
it becomes a warning naming the service, the committed instant and how to run the service again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import warnings

from pyhudi import config as C
from pyhudi.table import HudiTable

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _inline_compaction(spark: SparkSession, table: HudiTable, config: C.HoodieConfig) -> None:
    from pyhudi.client import compaction
    # hoodie.compact.schedule.inline alone schedules (Hudi's postCommit reaches it without compact.inline)
    settings = C.CompactionConfig.from_options(config)
    if table.properties.is_mor and (settings.inline or settings.schedule_inline):
        compaction.run_inline_compaction_if_due(spark, table.storage.base_uri, config.string_options())


def _inline_clustering(spark: SparkSession, table: HudiTable, config: C.HoodieConfig) -> None:
    if config.get(C.CLUSTERING_INLINE) or config.get(C.CLUSTERING_SCHEDULE_INLINE):
        from pyhudi.client import clustering
        clustering.run_inline_clustering_if_due(spark, table.storage.base_uri, config.string_options())


def _clean(spark: SparkSession, table: HudiTable, config: C.HoodieConfig) -> None:
    from pyhudi.services.clean import run as clean
    from pyhudi.services.clean.trigger import clean_async
    # hoodie.clean.async: started before the write (client/write.py); wait for it, its error raised here. Without
    # it, a background clean an earlier write of this process left running finishes first (one clean at a time).
    clean.join_async_clean(table.storage.base_uri)
    if not clean_async(config):
        clean.clean_after_commit(spark, table.storage.base_uri, config)


def _archive(spark: SparkSession, table: HudiTable, config: C.HoodieConfig) -> None:
    from pyhudi.services import archive
    from pyhudi.transaction.lock import table_lock
    archive.archive_after_commit(spark, table.storage.base_uri, config, table_lock)


# (service, hook, how to run it again by hand), in Hudi's postCommit order
POST_COMMIT_HOOKS = (
    ("inline compaction", _inline_compaction, "pyhudi.compact(spark, path) or CALL run_compaction"),
    ("inline clustering", _inline_clustering, "pyhudi.cluster(spark, path) or CALL run_clustering"),
    ("clean", _clean, "pyhudi.clean(spark, path) or CALL run_clean"),
    ("archive", _archive, "pyhudi.archive(spark, path) or CALL archive_commits"),
)


def run_post_commit_hooks(spark: SparkSession, table: HudiTable, config: C.HoodieConfig,
                          instant_time: str) -> list[str]:
    """Run every hook in order with the write's parsed options; returns the names of those that failed (each also
    warned)."""
    failed = []
    for name, hook, fix in POST_COMMIT_HOOKS:
        try:
            hook(spark, table, config)
        except Exception as exc:  # noqa: BLE001 - the write is committed: report, do not fail it
            failed.append(name)
            warnings.warn(f"{name} after commit {instant_time} of table {table.name} at {table.storage.base_uri} "
                          f"failed: {type(exc).__name__}: {exc}. The write is committed (do not retry it); "
                          f"run {fix} to run the service again", stacklevel=3)
    return failed
