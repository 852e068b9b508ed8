"""Hudi's savepoint window (SavepointActionExecutor): a completed commit older than the latest clean's
earliestCommitToRetain cannot be savepointed, whatever happened to the commits after it since; a commit the
cleaner has not passed can, even when it is not the latest."""

from __future__ import annotations

import pytest

import pyhudi
from support import times
from pyhudi.errors import TimelineError
from pyhudi.timeline import CLEAN
from pyhudi.table import HudiTable

OPTIONS = {"hoodie.table.name": "window", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
           "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.cleaner.commits.retained": "1"}


def _write(spark, path, ts):
    return pyhudi.write(spark.createDataFrame([(1, f"v{ts}", ts, "p0")], "id long, name string, ts long, part string"),
                        path, {**OPTIONS, "hoodie.datasource.write.operation": "upsert"}).instant_time


def _timeline_files(path):
    return sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file())


def test_savepoint_refused_behind_the_last_clean_even_after_a_rollback(spark, tmp_path):
    path = tmp_path / "t"
    w1, w2 = _write(spark, path, 1), _write(spark, path, 2)
    assert not HudiTable.load(str(path)).timeline().completed([CLEAN]), "nothing was due for the cleaner yet"
    assert pyhudi.create_savepoint(spark, path, w1).time == str(w1)      # older than the latest, but no clean passed it
    pyhudi.delete_savepoint(spark, path, w1)

    w3 = _write(spark, path, 3)                 # its automatic clean retains w3 and deletes w1's file
    assert HudiTable.load(str(path)).timeline().completed([CLEAN])
    assert pyhudi.rollback_to_instant(spark, path, w3)
    before = _timeline_files(path)
    with pytest.raises(TimelineError, match=f"could not savepoint commit {w2} .*lookup window {w3}"):
        pyhudi.create_savepoint(spark, path, w2)
    assert _timeline_files(path) == before

    w4 = _write(spark, path, 4)                 # a commit within the window is savepointed as usual
    assert pyhudi.create_savepoint(spark, path, w4).time == str(w4)
    assert times(pyhudi.show_savepoints(spark, path)) == times([w4])
