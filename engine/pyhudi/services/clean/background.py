"""``hoodie.clean.async=true``: the writer's clean runs in a background thread beside the write (Hudi's
AsyncCleanerService, started in preWrite) and is joined after the commit (postCommit waits for it), so the writer
does not wait for the clean while it writes.

One background clean per table per process: a new one (or a clean run by hand) first joins the one still running.
Errors are never lost: joining re-raises the clean's error (the post-commit hook turns it into a warning and a
failed service of the write); a clean nobody joined is joined when the process exits and its error is printed.
"""

from __future__ import annotations

import atexit
import sys
import threading
import warnings
from typing import Callable

_lock = threading.Lock()
_running: dict[str, "BackgroundClean"] = {}


class BackgroundClean:
    """One clean running in a daemon thread; join() waits and returns its result or raises its error."""

    def __init__(self, table_uri: str, run: Callable[[], object]):
        self.table_uri = table_uri
        self.result = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(run,), name=f"pyhudi-async-clean {table_uri}",
                                        daemon=True)

    def _run(self, run) -> None:
        try:
            self.result = run()
        except BaseException as exc:  # noqa: BLE001 - kept for join(): an error is reported, never lost
            self.error = exc

    def start(self) -> "BackgroundClean":
        self._thread.start()
        return self

    def join(self):
        self._thread.join()
        if self.error is not None:
            raise self.error
        return self.result


def start(table_uri: str, run: Callable[[], object]) -> BackgroundClean:
    """Start `run` (a clean of the table) in the background, after joining the one still running for it (its
    error, if any, is reported as a warning: nobody else would see it)."""
    try:
        join(table_uri)
    except Exception as exc:  # noqa: BLE001 - the previous writer did not join it (it failed): report it
        warnings.warn(f"the background clean (hoodie.clean.async) of the table at {table_uri} started by an earlier "
                      f"write failed: {type(exc).__name__}: {exc}; a new clean starts now", stacklevel=3)
    with _lock:
        job = _running[table_uri] = BackgroundClean(table_uri, run)
    return job.start()


def join(table_uri: str):
    """Wait for the table's background clean, if any; returns its HoodieCleanMetadata (None: no clean) or raises
    its error."""
    with _lock:
        job = _running.pop(table_uri, None)
    return job.join() if job is not None else None


def is_running(table_uri: str) -> bool:
    with _lock:
        return table_uri in _running


@atexit.register
def join_all() -> list[str]:
    """Join every background clean (at process exit); print each error. Returns the tables whose clean failed."""
    with _lock:
        uris = list(_running)
    failed = []
    for uri in uris:
        try:
            join(uri)
        except BaseException as exc:  # noqa: BLE001 - report every table's error
            failed.append(uri)
            print(f"pyhudi: the background clean (hoodie.clean.async) of the table at {uri} failed: "
                  f"{type(exc).__name__}: {exc}. Run pyhudi.clean(spark, path) or CALL run_clean to clean it",
                  file=sys.stderr)
    return failed
