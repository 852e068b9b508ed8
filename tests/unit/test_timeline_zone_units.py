"""Timeline zone rules without Spark: the zone read from hoodie.properties, carried by latest_time, and the
process clock floor compared as moments across zones."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from pyhudi import timeline as tl
from pyhudi.errors import ConfigError
from pyhudi.storage import Storage
from pyhudi.timeline import Timeline, create_requested


@pytest.fixture
def kolkata(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _table(tmp_path, zone_line: str | None) -> Storage:
    (tmp_path / ".hoodie").mkdir(parents=True, exist_ok=True)
    text = "hoodie.table.name=t\n" + (f"{zone_line}\n" if zone_line else "")
    (tmp_path / ".hoodie" / "hoodie.properties").write_text(text)
    return Storage(str(tmp_path))


def test_zone_comes_from_hoodie_properties(tmp_path, kolkata):
    assert Timeline.load(_table(tmp_path / "a", None)).zone == "LOCAL"
    storage = _table(tmp_path / "b", "hoodie.table.timeline.timezone=utc")
    timeline = Timeline.load(storage)
    assert timeline.zone == "UTC" and timeline.latest_time() == "" and timeline.latest_time().zone == "UTC"
    first = timeline.new_instant_time()
    utc_now = datetime.now(timezone.utc).replace(tzinfo=None)
    assert abs(datetime.strptime(first, "%Y%m%d%H%M%S%f") - utc_now) < timedelta(minutes=1)
    create_requested(storage, first, "commit")
    latest = Timeline.load(storage).latest_time()
    assert latest == first and latest.zone == "UTC"
    assert tl.new_instant_time(after=latest) > first                 # the zone travels with the time
    with pytest.raises(ConfigError, match="hoodie.table.timeline.timezone='Asia/Tokyo'"):
        Timeline.load(_table(tmp_path / "c", "hoodie.table.timeline.timezone=Asia/Tokyo"))


def test_clock_floor_is_a_moment_across_zones(kolkata, monkeypatch):
    monkeypatch.setattr(tl.instant_time, "_last_instant", ["0"])
    local = tl.new_instant_time(zone="LOCAL")                        # 5:30 ahead of UTC on the wall clock
    utc = tl.new_instant_time(zone="UTC")
    assert utc < local                                              # not pushed to the local wall clock
    assert tl.parse_instant_time(utc) > tl.parse_instant_time(local, "LOCAL")   # still a later moment
    assert tl.new_instant_time(zone="LOCAL") > local


def test_instant_time_before(kolkata):
    now = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
    assert tl.instant_time_before(2, "UTC", now) == "20260101100000000"
    assert tl.instant_time_before(2, "LOCAL", now) == "20260101153000000"    # 10:00 UTC on Kolkata's clock
