"""hoodie.table.timeline.timezone (issue 15 item 7): instant times in the table's timeline zone (LOCAL, Hudi's default,
or UTC), and tables Java Hudi wrote in local time read, time-travelled and cleaned by hours correctly."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest
from pyspark.sql import functions as F

import pyhudi
from pyhudi import timeline as tl
from pyhudi.errors import ConfigError
from pyhudi.table import HudiTable
from support import fixture_table, hudi_rs_read, rows


@pytest.fixture
def zone(monkeypatch):
    """Set this process's local zone (the zone a LOCAL timeline uses) for one test."""
    def set_zone(name: str):
        monkeypatch.setenv("TZ", name)
        time.tzset()
    yield set_zone
    monkeypatch.undo()
    time.tzset()


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, part string")


def _options(name, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.parquet.small.file.limit": "0", "hoodie.clean.automatic": "false", **extra}


def _wall(instant: str) -> datetime:
    return datetime.strptime(instant, "%Y%m%d%H%M%S%f")


def _near(instant: str, wall_now: datetime) -> bool:
    return abs(_wall(instant) - wall_now) < timedelta(minutes=5)


def test_local_and_utc_timelines(spark, tmp_path, zone):
    zone("Asia/Kolkata")                                  # UTC+05:30: local and UTC wall clocks differ
    local_now, utc_now = datetime.now(), datetime.now(timezone.utc).replace(tzinfo=None)
    local = tmp_path / "local"
    first = str(pyhudi.write(_df(spark, [(1, "a", 1, "p")]), local, _options("local")))
    assert _near(first, local_now) and not _near(first, utc_now)
    assert "hoodie.table.timeline.timezone" not in (local / ".hoodie/hoodie.properties").read_text()
    assert HudiTable.load(str(local)).timeline().zone == "LOCAL"

    utc = tmp_path / "utc"
    opts = _options("utc", **{"hoodie.table.timeline.timezone": "utc"})
    u1 = str(pyhudi.write(_df(spark, [(1, "a", 1, "p")]), utc, opts))
    assert "hoodie.table.timeline.timezone=UTC" in (utc / ".hoodie/hoodie.properties").read_text()
    # the table's zone holds for every later writer and service, whatever options they pass
    u2 = str(pyhudi.write(_df(spark, [(1, "b", 2, "p")]), utc, _options("utc")))
    meta = pyhudi.clean(spark, utc, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                     "hoodie.cleaner.fileversions.retained": "1"})
    for instant in (u1, u2, meta.metadata["startCleanTime"]):
        assert _near(instant, utc_now) and not _near(instant, local_now)

    with pytest.raises(ConfigError, match="hoodie.table.timeline.timezone='PST'"):
        pyhudi.write(_df(spark, [(1, "a", 1, "p")]), tmp_path / "bad",
                     _options("bad", **{"hoodie.table.timeline.timezone": "PST"}))
    assert not (tmp_path / "bad" / ".hoodie").exists()


def test_java_table_in_local_time(spark, tmp_path_factory, zone):
    """The fixture was written by Java Hudi in US Central time (no timezone key: LOCAL)."""
    zone("America/Chicago")
    path = fixture_table("cow_v6_simplekeygen_nonhivestyle", tmp_path_factory)
    table = HudiTable.load(str(path))
    commits = [i.time for i in table.timeline().completed_writes()]
    assert table.timeline().zone == "LOCAL" and commits[0].startswith("20240418172")   # 17:28 CDT = 22:28 UTC
    first_rows = rows(pyhudi.read(spark, str(path), {"as.of.instant": commits[0]}), ["id", "name"])
    # time travel by a date-time string means the timeline's wall clock, as Hudi formats it
    stamp = _wall(commits[0]).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    assert rows(pyhudi.read(spark, str(path), {"as.of.instant": stamp}), ["id", "name"]) == first_rows
    assert rows(hudi_rs_read(path, as_of=commits[0]), ["id", "name"]) == first_rows

    # a pyhudi write to it makes its instant in Chicago's wall clock, as Java Hudi would
    data = pyhudi.read(spark, str(path)).where("id = 1").withColumn("name", F.lit("renamed"))
    new = str(pyhudi.write(data, str(path), {"hoodie.table.name": "v6_simplekeygen_nonhivestyle",
                                             "hoodie.datasource.write.recordkey.field": "id",
                                             "hoodie.datasource.write.precombine.field": "longField"}))
    assert _near(new, datetime.now()) and not _near(new, datetime.now(timezone.utc).replace(tzinfo=None))
    latest = rows(pyhudi.read(spark, str(path)), ["id", "name"])
    assert (1, "renamed") in latest and latest == rows(hudi_rs_read(path), ["id", "name"])


def test_keep_latest_by_hours_on_a_local_timeline(spark, tmp_path, zone, monkeypatch):
    zone("Asia/Kolkata")
    path = tmp_path / "hours_local"
    opts = _options("hours_local")
    monkeypatch.setattr(tl.instant_time, "_last_instant", ["0"])
    commits = []
    for i, hours in enumerate([8, 6, 4, 1]):
        monkeypatch.setattr(tl.instant_time, "now_in_zone", lambda z, h=hours: datetime.now().astimezone() - timedelta(hours=h))
        commits.append(str(pyhudi.write(_df(spark, [(1, f"a{i}", i, "p1")]), path, opts)))
    monkeypatch.undo()
    zone("Asia/Kolkata")
    # 5 hours on Kolkata's clock: retain the commit 4 h ago and the slice before it (6 h); the 8 h one goes
    meta = pyhudi.clean(spark, path, {"hoodie.cleaner.policy": "KEEP_LATEST_BY_HOURS",
                                      "hoodie.cleaner.hours.retained": "5"})
    assert meta is not None and meta.metadata["earliestCommitToRetain"] == commits[2]
