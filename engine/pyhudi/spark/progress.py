"""Progress of long work (writes, compactions, clusterings, cleans) and a one-line summary of each commit.

- The summary line goes to the `pyhudi` logger at INFO: the `pyhudi` command prints it, the dbt adapter passes
  it to dbt's log, and a notebook user sees it with `logging.basicConfig(level="INFO")`.
- The progress line reads Spark's status tracker (tasks done / total of the running stages; on Spark Connect, the
  server's progress reports) from a background thread and redraws one line on stderr. Spark's own console bar does
  this on a terminal (the `pyhudi sql` shell turns it on), but not in a notebook, whose cells do not see the JVM's
  stderr. So the line is on by default in an IPython kernel only, and `spark.pyhudi.spark.progress` (true/false, a
  session setting) or `PYHUDI_PROGRESS=1|0` choose.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Iterator, Sequence

from pyhudi.spark.jvm import is_connect

if TYPE_CHECKING:   # the write stats are the timeline layer's, above this one
    from pyhudi.timeline import WriteStat

logger = logging.getLogger("pyhudi")

PROGRESS_SETTING = "spark.pyhudi.spark.progress"
_INTERVAL_SECONDS = 0.5


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        return type(shell.get_ipython()).__name__ == "ZMQInteractiveShell"
    except Exception:   # noqa: BLE001 - an IPython without a running shell
        return False


def progress_enabled(spark) -> bool:
    """Whether a progress line is drawn for work on `spark` (see the module docstring for the rule)."""
    env = os.environ.get("PYHUDI_PROGRESS")
    if env is not None:
        return env.strip().lower() in ("1", "true", "yes")
    try:
        setting = spark.conf.get(PROGRESS_SETTING, None)
    except Exception:   # noqa: BLE001 - a stopped session: no progress
        return False
    if setting is not None:
        return str(setting).strip().lower() == "true"
    return _in_notebook()


def stage_progress(spark) -> tuple[int, int, int] | None:
    """(tasks completed, tasks total, stages running) over Spark's active stages, or None when none runs."""
    tracker = spark.sparkContext.statusTracker()
    done = total = stages = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is None:
            continue
        stages += 1
        done += info.numCompletedTasks
        total += info.numTasks
    return (done, total, stages) if stages else None


class ConnectStages:
    """The running stages of a Spark Connect session's operations, as the server's progress reports give them
    (a Connect client has no status tracker): register it with `spark.registerProgressHandler`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._operations: dict[str | None, list[tuple[int, int]]] = {}

    def __call__(self, stages, inflight_tasks: int, operation_id: str | None, done: bool) -> None:
        with self._lock:
            if done:
                self._operations.pop(operation_id, None)
            else:
                self._operations[operation_id] = [(stage.num_completed_tasks, stage.num_tasks)
                                                  for stage in stages or () if not stage.done]

    def progress(self) -> tuple[int, int, int] | None:
        """(tasks completed, tasks total, stages running), as stage_progress gives it on a classic session."""
        with self._lock:
            running = [stage for stages in self._operations.values() for stage in stages]
        if not running:
            return None
        return sum(done for done, _ in running), sum(total for _, total in running), len(running)


def wait_for_running_tasks(spark, timeout_s: float = 60.0) -> None:
    """Wait (at most `timeout_s`) until no Spark stage runs: when a job fails, Spark kills its other tasks
    asynchronously, so a task can still write a file after the action raised. Call before deleting what a failed
    job was writing into."""
    deadline = time.monotonic() + timeout_s
    try:
        while stage_progress(spark) is not None and time.monotonic() < deadline:
            time.sleep(0.2)
    except Exception:   # noqa: BLE001 - no status tracker (a stopped or remote session): nothing to wait for
        return


def render(label: str, progress: tuple[int, int, int] | None, elapsed: float) -> str:
    """One progress line: label, a 20-cell bar, tasks done/total, stages, elapsed seconds."""
    if progress is None:
        return f"[pyhudi] {label}: planning ({elapsed:.0f} s)"
    done, total, stages = progress
    filled = int(20 * done / total) if total else 0
    bar = "#" * filled + "." * (20 - filled)
    return f"[pyhudi] {label}: [{bar}] {done}/{total} tasks, {stages} stage(s) ({elapsed:.0f} s)"


@contextlib.contextmanager
def tracked(spark, label: str) -> Iterator[None]:
    """Draw the progress line of `label` while the block runs (when enabled); erase it at the end."""
    if not progress_enabled(spark):
        yield
        return
    stop = threading.Event()
    started = time.monotonic()
    width = [0]
    connect = ConnectStages() if is_connect(spark) else None
    if connect is not None:
        spark.registerProgressHandler(connect)

    def draw() -> None:
        while not stop.wait(_INTERVAL_SECONDS):
            try:
                progress = connect.progress() if connect is not None else stage_progress(spark)
                line = render(label, progress, time.monotonic() - started)
            except Exception:   # noqa: BLE001 - the session went away: stop drawing, never fail the work
                return
            sys.stderr.write("\r" + line.ljust(width[0]))
            sys.stderr.flush()
            width[0] = len(line)

    thread = threading.Thread(target=draw, name="pyhudi-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        if connect is not None:
            spark.removeProgressHandler(connect)
        if width[0]:
            sys.stderr.write("\r" + " " * width[0] + "\r")
            sys.stderr.flush()


def commit_summary(action: str, path: str, instant: str, seconds: float,
                   write_stats: Sequence[WriteStat] | None = None,
                   extra: str = "") -> str:
    """`<action> <instant> on <path>: N inserted, N updated, N deleted, N files, N MB in S s` — the line each
    commit logs; `extra` adds what a service did (e.g. files deleted by a clean)."""
    parts = []
    if write_stats is not None:
        inserted = sum(s.num_inserts or 0 for s in write_stats)
        updated = sum(s.num_update_writes or 0 for s in write_stats)
        deleted = sum(s.num_deletes or 0 for s in write_stats)
        written = sum(s.total_write_bytes or 0 for s in write_stats)
        parts.append(f"{inserted} inserted, {updated} updated, {deleted} deleted, {len(write_stats)} files, "
                     f"{written / 1e6:.1f} MB")
    if extra:
        parts.append(extra)
    figures = "; ".join(parts)
    return f"{action} {instant} on {path}: {figures + ' ' if figures else ''}in {seconds:.1f} s"


def log_commit(action: str, path: str, instant: str, started: float, write_stats: Sequence[WriteStat] | None = None,
               extra: str = "") -> None:
    """Log the commit's summary line (INFO on the `pyhudi` logger); `started` is a time.monotonic() reading."""
    logger.info(commit_summary(action, path, instant, time.monotonic() - started, write_stats, extra))

