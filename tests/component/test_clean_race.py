"""Two writers' post-commit cleans may re-execute the same pending clean plan at once (found by the model-based
test's concurrent OCC writers): the one that completes second must not turn its committed write into a failed
service — the clean is done."""

from __future__ import annotations

import pyhudi
from pyhudi.commit.retention import CleanOptions
from pyhudi.services.clean import run as clean_service
from pyhudi.table import HudiTable
from pyhudi.timeline import CLEAN, Instant, State


def test_second_execution_of_a_completed_clean_plan_is_done(spark, tmp_path):
    path = tmp_path / "t"
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.clean.automatic": "false"}
    for ts in (1, 2, 3):
        pyhudi.write(spark.createDataFrame([(1, ts)], "id long, ts long"), path, options)
    table = HudiTable.load(str(path))
    opts = CleanOptions.of({"hoodie.cleaner.commits.retained": "1"})
    planned = clean_service._schedule(table, table.timeline(), opts)
    assert planned is not None
    pending = Instant(planned, CLEAN, State.REQUESTED)
    first = clean_service._execute(spark, table, pending)         # the writer that wins
    again = clean_service._execute(spark, table, pending)         # the other one, on the same plan
    assert first.total_files_deleted > 0 and again.start_clean_time == planned
    timeline = HudiTable.load(str(path)).timeline()
    assert [i.time for i in timeline.completed([CLEAN])] == [planned] and not timeline.pending([CLEAN])
    assert [r["ts"] for r in pyhudi.read(spark, path).collect()] == [3]
