"""The guard a table service (compaction scheduling) takes before it plans: the table lock under optimistic
concurrency control, and the failed-write rollback policy — which never undoes a live write."""

from __future__ import annotations

import contextlib
from typing import Mapping

from pyhudi import config as C
from pyhudi.transaction.heartbeat import is_heartbeat_expired
from pyhudi.transaction.lock import table_lock
from pyhudi.table import HudiTable
from pyhudi.timeline import WRITE_ACTIONS
from pyhudi.transaction.failed_writes import CONCURRENCY_KEY, OCC, rollback_failed_writes


@contextlib.contextmanager
def table_service_guard(table: HudiTable, options: Mapping | None):
    """Roll back the pending writes of failed writers, never a live one: a write whose heartbeat is fresh is left
    alone (compaction scheduling then refuses while it is pending). Under optimistic concurrency control the
    table lock is held until the caller has published its plan, so no write can start before it meanwhile."""
    raw = C.normalize_options(options or {})
    occ = str(raw.get(CONCURRENCY_KEY, "")).strip().lower() == OCC
    with (table_lock(table.storage, raw) if occ else contextlib.nullcontext()):
        live = {i.time for i in table.timeline().pending(WRITE_ACTIONS)
                if not is_heartbeat_expired(table.storage, i.time, raw)}
        rollback_failed_writes(table, raw, exclude=live)
        yield
