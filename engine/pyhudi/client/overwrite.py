"""mode='overwrite' of an existing table: write the new table first, then swap it in.

The batch may read the table it replaces (`pyhudi.write(pyhudi.read(spark, p), p, mode="overwrite")`), so the
old table must stay until the new one is committed. On a local filesystem the new table is written to a hidden
sibling folder and swapped in with two renames; if the write fails, the staging folder is removed and the old
table is untouched. On other filesystems (no directory rename) the batch is first materialised in the executors
(a local checkpoint), then the old table is deleted and the new one written.
"""

from __future__ import annotations

import os
import shutil
import uuid
from typing import TYPE_CHECKING, Callable, TypeVar

from pyspark.sql import DataFrame

from pyhudi.commit.spark_jobs import wait_for_failed_job
from pyhudi.storage import Storage

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_R = TypeVar("_R")


def staging_path(storage: Storage) -> str:
    parent, name = os.path.split(storage.base_path.rstrip("/"))
    return os.path.join(parent, f".{name}.pyhudi-overwrite-{uuid.uuid4().hex[:12]}")


def overwrite_local(spark: SparkSession, storage: Storage, write_new: Callable[[str], _R]) -> _R:
    """Run `write_new(staging)` (it creates and commits the new table there), then swap it in for the old one."""
    target = storage.base_path.rstrip("/")
    staging = staging_path(storage)
    try:
        result = write_new(staging)
    except BaseException:
        wait_for_failed_job(spark, staging)   # the failed job's other tasks may still be writing into it
        shutil.rmtree(staging, ignore_errors=True)
        raise
    retired = staging.replace("pyhudi-overwrite-", "pyhudi-replaced-")
    os.rename(target, retired)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(retired, target)   # put the old table back
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(retired, ignore_errors=True)
    return result


def materialise(df: DataFrame) -> DataFrame:
    """The batch computed once and kept in the executors, so deleting its source does not change it."""
    return df.localCheckpoint(eager=True)


def delete_table(storage: Storage) -> None:
    if storage.is_local:
        shutil.rmtree(storage.base_path, ignore_errors=True)
    else:
        storage.delete_dir("")
