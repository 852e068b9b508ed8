"""The failed-write rollback policy (``hoodie.cleaner.policy.failed.writes``), a transaction-level decision: which
pending writes were left by writers that failed and may be rolled back, never a live one.

EAGER (single writer): every pending commit, delta commit or replace commit is a failed write, rolled back by the
next writer. LAZY (forced under optimistic concurrency control): only those whose heartbeat expired. NEVER: none.
Compactions and clustering are never failed writes (a requested plan stays; compaction re-executes an inflight one).
The rollbacks themselves are the rollback action's (services/rollback.py).
"""

from __future__ import annotations

from typing import Mapping

from pyhudi import config as C
from pyhudi.timeline.clustering_plan import RequestedReplaceMetadata
from pyhudi.commit.markers import delete_markers
from pyhudi.commit.metadata_table import MetadataTableOptions
from pyhudi.transaction.heartbeat import delete_heartbeat, is_heartbeat_expired
from pyhudi.services.rollback import finish_pending_rollbacks, rollback
from pyhudi.storage import Storage
from pyhudi.table import HudiTable
from pyhudi.timeline import (instant_file, COMMIT, DELTA_COMMIT, REPLACE_COMMIT, RESTORE, ROLLBACK, TEMP_FOLDER,
                             Instant, State, Timeline)

FAILED_WRITES_KEY = C.FAILED_WRITES_POLICY.key
CONCURRENCY_KEY = C.CONCURRENCY_MODE.key
OCC = "optimistic_concurrency_control"


def failed_writes_policy(options: Mapping[str, str] | None) -> str:
    """EAGER for a single writer, LAZY under optimistic concurrency control (Hudi forces LAZY there)."""
    options = options or {}
    if str(options.get(CONCURRENCY_KEY, "")).strip().lower() == OCC:
        return "LAZY"
    return str(options.get(FAILED_WRITES_KEY) or "EAGER").strip().upper()


def rollback_failed_writes(table: HudiTable, options: Mapping[str, str] | None = None,
                           exclude: set[str] | None = None) -> list[str]:
    """Roll back pending writes left by failed writers (EAGER: all; LAZY: those whose heartbeat expired), after
    finishing interrupted rollbacks and restores. Returns the rolled-back instant times."""
    return rollback_failed_writes_on(table, table.timeline(), options, exclude)[0]


def rollback_failed_writes_on(table: HudiTable, timeline: Timeline, options: Mapping[str, str] | None = None,
                              exclude: set[str] | None = None) -> tuple[list[str], Timeline]:
    """rollback_failed_writes from a freshly loaded `timeline`; also returns the timeline after it (the same
    object when nothing was rolled back, so a writer lists `.hoodie/` once to begin)."""
    if timeline.pending([ROLLBACK, RESTORE]):
        finish_pending_rollbacks(table)
        timeline = table.timeline()
    policy = failed_writes_policy(options)
    done = []
    if policy != "NEVER":
        lazy = policy == "LAZY"
        for instant in reversed(timeline.pending((COMMIT, DELTA_COMMIT, REPLACE_COMMIT))):
            if exclude and instant.time in exclude:
                continue
            if instant.action == REPLACE_COMMIT and _is_clustering(table.storage, instant):
                continue
            if lazy and not is_heartbeat_expired(table.storage, instant.time, options):
                continue
            rollback(table, instant, timeline, metadata_options=MetadataTableOptions.of(options))
            delete_heartbeat(table.storage, instant.time)
            done.append(instant.time)
    if done:
        timeline = table.timeline()
    _delete_stale_markers(table.storage, timeline)
    return done, timeline


def _is_clustering(storage: Storage, instant: Instant) -> bool:
    """A pending replacecommit whose requested file holds a clustering plan is clustering, not a failed write."""
    name = instant_file(storage, instant.with_state(State.REQUESTED))
    if not storage.exists(name):
        return False
    data = storage.read_bytes(name)
    if not data:
        return False
    try:
        record = RequestedReplaceMetadata.from_bytes(data, name)
    except Exception:  # noqa: BLE001
        return False
    return record.is_clustering


def _delete_stale_markers(storage: Storage, timeline: Timeline) -> None:
    """Marker folders of instants that are no longer pending (left by a crash right after a commit)."""
    pending = {i.time for i in timeline.pending()}
    for name in storage.list_dirs(TEMP_FOLDER):
        if name.isdigit() and name not in pending:
            delete_markers(storage, name)
