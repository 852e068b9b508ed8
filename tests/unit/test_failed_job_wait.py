"""Waiting out a failed job's last tasks before its staging folder is deleted (commit/spark_jobs.py). On Spark
Connect there is no status tracker to ask, so the folder has to stay unchanged for a while: a straggler task that
keeps writing after the action raised must not leave files behind in a folder already deleted."""

from __future__ import annotations

import shutil
import threading
import time

from pyhudi.commit.spark_jobs import wait_for_failed_job


def _connect_session():
    """Stands in for a Spark Connect session: pyhudi tells one apart by its class's module (spark/jvm.is_connect)."""
    return type("SparkSession", (), {"__module__": "pyspark.sql.connect.session"})()


def _straggler(folder, files: int, every_s: float) -> threading.Thread:
    """A task of the failed job still writing its files, one every `every_s` seconds."""
    def write():
        for n in range(files):
            (folder / "part=a").mkdir(parents=True, exist_ok=True)
            (folder / "part=a" / f"f{n}.parquet").write_bytes(b"PAR1" * (n + 1))
            time.sleep(every_s)
    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_on_connect_the_staging_folder_is_deleted_only_once_its_writers_stopped(tmp_path):
    staging = tmp_path / ".t.pyhudi-overwrite-abc"
    writer = _straggler(staging, files=6, every_s=0.25)
    started = time.monotonic()
    wait_for_failed_job(_connect_session(), str(staging), timeout_s=20, quiet_s=0.8)
    shutil.rmtree(staging, ignore_errors=True)       # what the caller does next
    waited = time.monotonic() - started
    writer.join()
    assert not staging.exists()                      # deleted after the last file, not before it
    assert 1.2 <= waited < 10


def test_the_wait_is_bounded_and_a_quiet_or_missing_folder_costs_only_the_quiet_time(tmp_path):
    staging = tmp_path / "staging"
    writer = _straggler(staging, files=40, every_s=0.1)   # 4 s of writes: never quiet within the bound
    started = time.monotonic()
    wait_for_failed_job(_connect_session(), str(staging), timeout_s=1.0, quiet_s=0.5)
    assert time.monotonic() - started < 4.0        # the bound (1 s), not the writer (4 s)
    writer.join()
    started = time.monotonic()
    wait_for_failed_job(_connect_session(), str(tmp_path / "never-created"), timeout_s=20, quiet_s=0.3)
    assert time.monotonic() - started < 3.0
