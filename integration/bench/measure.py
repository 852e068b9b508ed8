"""What the benchmark measures besides wall time: peak RSS of a process (Linux VmHWM, reset before each run),
bytes a run wrote under a folder, and the Spark jobs a run started (from Spark's status store)."""

from __future__ import annotations

import os
import time


# --- memory -------------------------------------------------------------------------------------------------
def reset_peak_rss(pid: int | None = None) -> bool:
    """Reset the kernel's peak-RSS counter (VmHWM) of our own process; False where that is not possible."""
    try:
        with open(f"/proc/{pid or os.getpid()}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss(pid: int | None = None) -> int | None:
    """Peak resident set size in bytes since the last reset (None off Linux)."""
    try:
        with open(f"/proc/{pid or os.getpid()}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def jvm_pid(spark) -> int | None:
    try:
        return int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - not measurable (remote JVM)
        return None


# --- bytes written ------------------------------------------------------------------------------------------
def snapshot(folder: str) -> dict[str, int]:
    """path -> size of every file under folder."""
    sizes = {}
    for root, _, files in os.walk(folder):
        for name in files:
            full = os.path.join(root, name)
            try:
                sizes[full] = os.path.getsize(full)
            except OSError:
                pass
    return sizes


def written_since(before: dict[str, int], folder: str) -> tuple[int, int]:
    """(bytes, files) of files that are new or changed size since `before`."""
    after = snapshot(folder)
    changed = [size for path, size in after.items() if before.get(path) != size]
    return sum(changed), len(changed)


# --- Spark jobs ---------------------------------------------------------------------------------------------
class SparkJobs:
    """Spark jobs started between `start()` and `stop()`: id, label, duration, tasks (driver-side status store)."""

    def __init__(self, spark):
        self.sc = spark.sparkContext
        self.first_id = None
        self.t0 = self.t1 = 0.0

    def _all(self) -> list:
        store = self.sc._jsc.sc().statusStore()
        seq = store.jobsList(None)
        return [seq.apply(i) for i in range(seq.size())]

    def start(self) -> None:
        ids = [int(job.jobId()) for job in self._all()]
        self.first_id = max(ids, default=-1) + 1
        self.t0 = time.time()

    def stop(self) -> list[dict]:
        self.t1 = time.time()
        jobs = []
        for job in self._all():
            if int(job.jobId()) < self.first_id:
                continue
            submitted = job.submissionTime()
            completed = job.completionTime()
            start = submitted.get().getTime() / 1000 if submitted.isDefined() else None
            end = completed.get().getTime() / 1000 if completed.isDefined() else None
            description = job.description()
            jobs.append({"id": int(job.jobId()),
                         "label": description.get() if description.isDefined() else job.name(),
                         "start": round(start - self.t0, 3) if start else None,
                         "seconds": round(end - start, 3) if start and end else None,
                         "tasks": int(job.numTasks()), "stages": int(job.stageIds().size())})
        return sorted(jobs, key=lambda j: j["id"])

    def summary(self, jobs: list[dict]) -> dict:
        """Total wall time, time covered by at least one running job, and the rest (driver-only time)."""
        spans = sorted((j["start"], j["start"] + j["seconds"]) for j in jobs if j["seconds"] is not None)
        covered, end = 0.0, float("-inf")
        for lo, hi in spans:
            if hi <= end:
                continue
            covered += hi - max(lo, end)
            end = hi
        wall = self.t1 - self.t0
        return {"wall": round(wall, 3), "jobs": len(jobs), "in_jobs": round(covered, 3),
                "driver_only": round(wall - covered, 3)}


# modules that import pyhudi.commit.spark_jobs.collect_or_raise by name (the writer's are being reshaped: a module
# that no longer exists or no longer uses it is skipped)
COLLECT_USERS = ("pyhudi.writer.write_action", "pyhudi.writer.staged", "pyhudi.writer.one_job",
                 "pyhudi.writer.bulk_insert", "pyhudi.services.compaction.run", "pyhudi.client.compaction")


def label_collects(spark):
    """Label every job pyhudi's writer starts through collect_or_raise with the calling function (profiling
    aid for the benchmark only). Returns an undo function."""
    import importlib
    import sys

    try:
        from pyhudi.commit import spark_jobs
        original = spark_jobs.collect_or_raise
    except (ImportError, AttributeError):
        return lambda: None

    def labelled(df):
        frame = sys._getframe(1)
        spark.sparkContext.setJobDescription(f"{frame.f_code.co_name}:{frame.f_lineno}")
        try:
            return original(df)
        finally:
            spark.sparkContext.setJobDescription(None)

    users = []
    for name in COLLECT_USERS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if getattr(module, "collect_or_raise", None) is original:
            module.collect_or_raise = labelled
            users.append(module)
    return lambda: [setattr(module, "collect_or_raise", original) for module in users]
