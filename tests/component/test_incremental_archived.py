"""An incremental query whose range reaches archived instants (or files its commits wrote that were cleaned)
cannot be answered from the commits in range: it raises, or with
hoodie.datasource.read.incr.fallback.fulltablescan.enable=true scans the whole table filtered by commit time,
as Hudi's IncrementalRelation does."""

from __future__ import annotations

import pytest

import pyhudi
from pyhudi import errors
from pyhudi.table import HudiTable
from pyhudi.timeline import has_archived_instants

from support import rows

SCHEMA = "id long, region string, ts long, v string"
OPTIONS = {"hoodie.table.name": "incr", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3", "hoodie.cleaner.commits.retained": "1",
           "hoodie.clean.automatic": "false"}
FALLBACK = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"


@pytest.fixture(scope="module", params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def archived_table(request, spark, tmp_path_factory):
    """Commit i inserts id=i in its own partition and rewrites id=0 in partition 'p0'; early commits archived."""
    path = tmp_path_factory.mktemp("incr") / request.param
    options = {**OPTIONS, "hoodie.datasource.write.table.type": request.param}
    if request.param == "MERGE_ON_READ":   # the archiver keeps delta commits after the last compaction
        options.update({"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"})
    instants = []
    for i in range(1, 7):
        df = spark.createDataFrame([(i, f"p{i}", i, f"v{i}"), (0, "p0", i, f"zero{i}")], SCHEMA)
        instants.append(str(pyhudi.write(df, path, options)))
    pyhudi.archive(spark, path, options)
    timeline = HudiTable.load(str(path)).timeline()
    assert has_archived_instants(HudiTable.load(str(path)).storage)
    first_active = timeline.completed_writes()[0].time
    assert instants[0] < first_active
    return path, instants, first_active


def _expected(spark, path, begin, end):
    snapshot = pyhudi.read(spark, path, {"as.of.instant": end})
    return [r for r in rows(snapshot, ["id", "v", "_hoodie_commit_time"]) if begin < r[2] <= end]


def test_archived_begin_raises_without_fallback(spark, archived_table):
    path, instants, _ = archived_table
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": instants[0]}
    with pytest.raises(errors.TimelineError, match=f"archived.*{FALLBACK}=true"):
        pyhudi.read(spark, path, options)
    with pytest.raises(Exception, match=FALLBACK):
        spark.read.format("hudi").options(**options).load(str(path)).collect()


def test_archived_begin_falls_back_to_a_full_scan(spark, archived_table):
    path, instants, _ = archived_table
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": instants[0],
               "hoodie.datasource.read.end.instanttime": instants[-2], FALLBACK: "true"}
    expected = _expected(spark, path, instants[0], instants[-2])
    assert sorted(r[0] for r in expected) == [0, 2, 3, 4, 5]   # id=1 was committed at the begin instant
    for df in (pyhudi.read(spark, path, options), spark.read.format("hudi").options(**options).load(str(path))):
        assert rows(df, ["id", "v", "_hoodie_commit_time"]) == expected


def test_begin_on_the_active_timeline_reads_the_range(spark, archived_table):
    path, instants, first_active = archived_table
    options = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first_active}
    assert rows(pyhudi.read(spark, path, options), ["id", "v", "_hoodie_commit_time"]) == \
        _expected(spark, path, first_active, instants[-1])
