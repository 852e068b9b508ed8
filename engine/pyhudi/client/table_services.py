"""Table services run on their own, beside the writers: one pass over one or more tables scheduling and executing
compaction, clustering, clean and archive, once or in rounds (Hudi's HoodieCompactor, HoodieClusteringJob,
HoodieCleaner and HoodieMultiTableServicesMain; the `pyhudi services` command).

Each service is the one the client already runs (pyhudi.compact, pyhudi.cluster, the cleaner, the archiver), so it
takes the table lock and respects live writers' heartbeats as it does after a write. A service that fails on one
table is reported and the others go on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import time
from dataclasses import dataclass, field

from pyhudi.client import clustering, compaction
from pyhudi.index import is_simple_bucket_table
from pyhudi.errors import ConfigError
from pyhudi.services import archive
from pyhudi.services.clean import run as clean
from pyhudi.table import HudiTable
from pyhudi.transaction.lock import table_lock

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SERVICES = ("compaction", "clustering", "clean", "archive")
MODES = ("schedule", "execute", "scheduleAndExecute")


@dataclass
class ServiceRun:
    """What one service did on one table in one round: `result` (instants acted on, files deleted, instants
    archived) or `error` (the exception's type and message)."""
    round: int
    path: str
    service: str
    result: object = None
    error: str | None = None


@dataclass
class ServicesReport:
    runs: list[ServiceRun] = field(default_factory=list)

    @property
    def failed(self) -> list[ServiceRun]:
        return [r for r in self.runs if r.error is not None]


def run_table_services(spark: SparkSession, paths: list[str], services: list[str] | None = None, options: dict | None = None,
                       compaction_mode: str = "scheduleAndExecute", clustering_mode: str = "scheduleAndExecute",
                       rounds: int = 1, interval_seconds: float = 0.0,
                       on_run: Callable[[ServiceRun], None] | None = None) -> ServicesReport:
    """Run `services` (default all four, in Hudi's postCommit order) on every table of `paths`, `rounds` times
    (0: until interrupted), sleeping `interval_seconds` between rounds. `on_run(ServiceRun)` is called after each."""
    services = list(services or SERVICES)
    unknown = [s for s in services if s not in SERVICES]
    if unknown or not paths:
        raise ConfigError(f"table services: {'unknown service(s) ' + ', '.join(unknown) if unknown else 'no table'}"
                          f"; give one or more table paths and services among {', '.join(SERVICES)}")
    for mode in (compaction_mode, clustering_mode):
        if mode not in MODES:
            raise ConfigError(f"table services: mode {mode!r} is not one of {', '.join(MODES)}")
    if rounds < 0 or interval_seconds < 0:
        raise ConfigError("table services: rounds and the interval must be zero or more")
    report = ServicesReport()
    done = 0
    while rounds == 0 or done < rounds:
        done += 1
        for path in paths:
            for service in services:
                run = ServiceRun(done, str(path), service)
                try:
                    run.result = _run_service(spark, str(path), service, options or {}, compaction_mode,
                                              clustering_mode)
                except Exception as exc:  # noqa: BLE001 - one table's failure is reported, the others go on
                    run.error = f"{type(exc).__name__}: {exc}"
                report.runs.append(run)
                if on_run is not None:
                    on_run(run)
        if rounds == 0 or done < rounds:
            time.sleep(interval_seconds)
    return report


def _run_service(spark: SparkSession, path: str, service: str, options: dict, compaction_mode: str,
                 clustering_mode: str) -> object:
    if service == "compaction":
        if not HudiTable.load(path).properties.is_mor:
            return None          # copy-on-write tables have nothing to compact
        return compaction.compact(spark, path, compaction_mode, None, options)
    if service == "clustering":
        if is_simple_bucket_table(HudiTable.load(path), options):
            return None          # a simple bucket table's file groups are its buckets: Hudi does not cluster it
        return clustering.cluster(spark, path, clustering_mode, None, options)
    if service == "clean":
        metadata = clean.clean(spark, path, options, respect_trigger=True)   # as HoodieCleaner
        return None if metadata is None else {"clean": metadata.start_clean_time,
                                              "files_deleted": metadata.total_files_deleted}
    return archive.archive(spark, path, options, table_lock)
