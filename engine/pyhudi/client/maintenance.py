"""The cleaner and the archiver as the client runs them (`pyhudi.Table.maintenance`, `pyhudi.clean`,
`pyhudi.archive`, CALL run_clean / archive_commits): each result is typed, with Hudi's own metadata kept beside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyhudi import config as C
from pyhudi.services import archive as archiver
from pyhudi.services.clean import run as cleaner
from pyhudi.table import HudiTable
from pyhudi.timeline import Instant
from pyhudi.timeline.clean_metadata import CleanMetadata
from pyhudi.transaction.lock import table_lock

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class CleanResult:
    """A completed clean: its instant, what it deleted per partition, and Hudi's HoodieCleanMetadata (typed:
    `clean`; as its Avro record: `metadata`)."""

    instant_time: str
    files_deleted: int
    earliest_commit_to_retain: str | None
    deleted_files: dict[str, list[str]]
    clean: CleanMetadata = field(repr=False)

    @property
    def metadata(self) -> dict:
        """Hudi's HoodieCleanMetadata record (camelCase fields, as stored in `<t>.clean`)."""
        return self.clean.to_avro()

    @classmethod
    def of(cls, metadata: CleanMetadata) -> "CleanResult":
        return cls(instant_time=str(metadata.start_clean_time), files_deleted=int(metadata.total_files_deleted or 0),
                   earliest_commit_to_retain=metadata.earliest_commit_to_retain or None,
                   deleted_files=metadata.deleted_files(), clean=metadata)


def clean(spark: "SparkSession", path: str, options: dict | None = None) -> CleanResult | None:
    """Run Hudi's cleaner now (pending cleans first); None when nothing was due."""
    metadata = cleaner.clean(spark, str(path), options)
    return None if metadata is None else CleanResult.of(metadata)


def archive(spark: "SparkSession", path: str, options: dict | None = None) -> list[Instant]:
    """Archive what hoodie.keep.min/max.commits make due; the archived instants (completed), oldest first."""
    C.check_archival_options(C.HoodieConfig(options or {}))   # bad options are refused before the table is read
    before = {i.time: i for i in HudiTable.load(str(path)).timeline().instants if i.is_completed}
    times = archiver.archive(spark, str(path), options, table_lock)
    return [before[t] for t in times if t in before]
