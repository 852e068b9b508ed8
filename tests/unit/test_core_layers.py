"""Pure-Python layers without Spark: config, timeline, hoodie.properties and the file-system view."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, strategies as st

from pyhudi import config as C
from pyhudi.errors import ConfigError, NotAHudiTableError, TimelineError
from pyhudi.file_group.naming import (base_file_name, log_file_name, parse_base_file_name, parse_log_file_name)
from pyhudi.storage import Storage
from pyhudi.table import HudiTable, dump_properties, load_properties, table_checksum
from pyhudi.timeline import (Instant, State, Timeline, create_requested, new_instant_time,
                             normalize_instant_argument, parse_instant_file_name, transition_to_completed,
                             transition_to_inflight)
from support import fixture_table


# --- config -------------------------------------------------------------------------------------------------
def test_defaults_aliases_and_validation():
    config = C.HoodieConfig({"primaryKey": "id", "preCombineField": "ts", "type": "mor"})
    assert config.get(C.RECORD_KEY) == "id" and config.get(C.PRECOMBINE) == "ts"
    assert config.get(C.TABLE_TYPE) == "MERGE_ON_READ"
    assert config.get(C.OPERATION) == "upsert" and config.get(C.MAX_FILE_SIZE) == 125829120
    assert config.get(C.SMALL_FILE_LIMIT) == 104857600 and config.get(C.INDEX_TYPE) == "SIMPLE"
    with pytest.raises(ConfigError, match="hoodie.parquet.max.file.size"):
        C.HoodieConfig({"hoodie.parquet.max.file.size": "lots"})
    with pytest.raises(ConfigError, match="hoodie.datasource.write.table.type"):
        C.HoodieConfig({"hoodie.datasource.write.table.type": "FAST"})


def test_unknown_hoodie_key_warns_but_known_families_do_not():
    with pytest.warns(UserWarning, match="hoodie.parquet.max.flie.size"):
        C.HoodieConfig({"hoodie.parquet.max.flie.size": "1"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C.HoodieConfig({"hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS", "spark.x": "1"})


# --- timeline ---------------------------------------------------------------------------------------------
def test_instant_file_names_follow_layout_1():
    assert Instant("1", "commit", State.INFLIGHT).file_name == "1.inflight"
    assert Instant("1", "commit", State.REQUESTED).file_name == "1.commit.requested"
    assert Instant("1", "deltacommit", State.INFLIGHT).file_name == "1.deltacommit.inflight"
    assert Instant("1", "compaction", State.COMPLETED).file_name == "1.commit"
    for name in ["20240418172802262.commit", "20240418172802262.inflight", "1.replacecommit.requested",
                 "1.clean.inflight", "1.deltacommit"]:
        assert parse_instant_file_name(name).file_name == name
    assert parse_instant_file_name("hoodie.properties") is None
    assert parse_instant_file_name("archived") is None


def test_instant_times_strictly_increase_within_a_millisecond():
    times = [new_instant_time() for _ in range(200)]
    assert times == sorted(set(times)) and all(len(t) == 17 for t in times)


def test_instant_time_arguments():
    assert normalize_instant_argument("20240101120000123") == "20240101120000123"
    assert normalize_instant_argument("2024-01-01 12:00:00.123") == "20240101120000123"
    assert normalize_instant_argument("2024-01-01") == "20240101000000000"
    with pytest.raises(TimelineError, match="yyyy"):
        normalize_instant_argument("yesterday")


def test_transitions_are_create_if_absent(tmp_path):
    storage = Storage(str(tmp_path))
    requested = create_requested(storage, "20240101000000000", "commit")
    inflight = transition_to_inflight(storage, requested)
    with pytest.raises(TimelineError, match="already exists"):
        transition_to_inflight(storage, requested)
    transition_to_completed(storage, inflight, {"partitionToWriteStats": {}})
    timeline = Timeline.load(storage)
    assert [str(i) for i in timeline.instants] == ["[20240101000000000__commit__COMPLETED]"]
    assert timeline.read_metadata(timeline.instants[0]) == {"partitionToWriteStats": {}}


# --- table ------------------------------------------------------------------------------------------------
@given(st.dictionaries(st.text(min_size=1), st.text(), max_size=8))
def test_properties_round_trip(props):
    assert load_properties(dump_properties(props).decode("latin-1")) == props


def test_fixture_properties_and_checksum(tmp_path_factory):
    path = fixture_table("cow_v6_simplekeygen_nonhivestyle", tmp_path_factory)
    table = HudiTable.load(str(path))
    props = table.properties
    assert props.name == "v6_simplekeygen_nonhivestyle" and props.version == "6"
    assert props.record_key_fields == ["id"] and props.partition_fields == ["byteField"]
    assert props.precombine_field == "longField" and not props.hive_style
    assert props.get("hoodie.table.create.schema").startswith('{"type":"record"')
    assert int(props.get("hoodie.table.checksum")) == table_checksum("default", props.name)


def test_fixture_file_system_view_time_travel(tmp_path_factory):
    path = fixture_table("cow_v6_simplekeygen_nonhivestyle", tmp_path_factory)
    table = HudiTable.load(str(path))
    first, second = [i.time for i in table.timeline().completed_writes()]
    latest = table.view()
    assert latest.partitions() == ["10", "20", "30"]
    assert {b.instant_time for b in latest.latest_base_files(["10"])} == {second}
    assert {b.instant_time for b in table.view(as_of=first).latest_base_files()} == {first}
    assert table.view(as_of=first).partitions() == ["10", "20"]


def test_replaced_file_groups_are_dropped(tmp_path_factory):
    path = fixture_table("cow_v6_simplekeygen_nonhivestyle_overwritetable", tmp_path_factory)
    view = HudiTable.load(str(path)).view()
    assert len(view.latest_base_files()) == 1


def test_uncommitted_files_are_invisible(tmp_path_factory):
    path = fixture_table("cow_v6_simplekeygen_nonhivestyle", tmp_path_factory)
    table = HudiTable.load(str(path))
    stray = path / "10" / base_file_name("deadbeef-0", "0-1-2", "29990101000000000")
    stray.write_bytes(b"not parquet")
    assert all("deadbeef" not in b.path for b in table.view().latest_base_files())


def test_not_a_table(tmp_path):
    with pytest.raises(NotAHudiTableError, match="hoodie.properties"):
        HudiTable.load(str(tmp_path))


def test_file_names():
    assert parse_base_file_name(base_file_name("abc-0", "1-2-3", "20240101000000000")) == \
        ("abc-0", "1-2-3", "20240101000000000")
    assert parse_log_file_name(log_file_name("abc-0", "20240101000000000", 2, "1-2-3")) == \
        ("abc-0", "20240101000000000", 2, "1-2-3")
    assert parse_base_file_name(".abc-0_2024.log.1_0-1-2") is None


def test_new_instant_time_is_after_the_timeline(monkeypatch):
    from pyhudi import timeline
    # the process-wide floor would push every later test's instants to the year 2100
    monkeypatch.setattr(timeline.instant_time, "_last_instant", ["0"])
    assert new_instant_time(after="20991231235959999") > "20991231235959999"


def test_timeline_layout_2_names():
    """Hudi 1.x names (InstantFileNameGeneratorV2): completed instants carry their completion time, pending ones
    and legacy (upgraded) completed ones are named as in layout 1; a clustering completes as a replacecommit."""
    from pyhudi.timeline import CLUSTERING, REPLACE_COMMIT, layout_for

    layout = layout_for("2", "timeline", "history")
    assert layout.folder == ".hoodie/timeline" and layout.history_folder == ".hoodie/timeline/history"
    done = layout.parse("20251220210129235_20251220210129883.commit")
    assert (done.time, done.action, done.state, done.completion_time) == \
        ("20251220210129235", "commit", State.COMPLETED, "20251220210129883")
    for name in ("20251220210129235_20251220210129883.commit", "20251220210108078.deltacommit.inflight",
                 "20251220210108078.deltacommit.requested", "20251220210108078.inflight",
                 "20251220210108078.commit", "20260307162619269.clustering.requested"):
        assert layout.file_name(layout.parse(name)) == name
    clustering = layout.parse("20260307162619269.clustering.inflight")
    finished = Instant(clustering.time, CLUSTERING, State.COMPLETED, "20260307162620442")
    assert layout.file_name(finished) == f"20260307162619269_20260307162620442.{REPLACE_COMMIT}"
    for other in ("history", "hoodie.properties", "2025_x.commit", "20251220210129235_1.unknown"):
        assert layout.parse(other) is None
    assert layout_for(None, None, None).version == layout_for("1", "timeline", "history").version == 1
