"""pyhudi.Table, the front door: its methods, `.maintenance` and `.savepoints` groups do what the free functions
(shims over them) do. One scenario runs twice, on two tables, once through pyhudi.<function> and once through Table;
typed results (instants named by first appearance), rows, timelines and hoodie.properties must agree, and every
read of the Table-written table equals pyhudi.read and hudi-rs. Plus the result types and bad paths/names."""

from __future__ import annotations

import dataclasses
import json
import pickle
import re

import pytest

import pyhudi
from pyhudi.client import WriteResult
from pyhudi.client.maintenance import CleanResult
from pyhudi.client.undo import RollbackResult
from pyhudi.errors import ConfigError, NotAHudiTableError, PyHudiError
from pyhudi.table import HudiTable
from pyhudi.timeline import Instant, State
from support import assert_same_rows_as_hudi_rs, rows

DATA = ["id", "name", "ts", "region"]
INSTANT = re.compile(r"\d{17}")


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, ts long, region string")


def _options(table_type):
    return {"hoodie.table.name": "api", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.table.type": table_type, "hoodie.clean.automatic": "false",
            "hoodie.archive.automatic": "false", "hoodie.parquet.small.file.limit": "0"}


class Names:
    """Instant times -> I0, I1, ... in order of first appearance, so two tables' results compare."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def __call__(self, value):
        if isinstance(value, WriteResult):
            return ("WriteResult", self(value.instant_time), value.operation, value.num_writes)
        if isinstance(value, Instant):
            return ("Instant", self(value.time), value.action, value.state.name)
        if isinstance(value, CleanResult):
            return ("CleanResult", self(value.instant_time), value.files_deleted,
                    self(value.earliest_commit_to_retain or ""), sorted(value.deleted_files))
        if isinstance(value, RollbackResult):
            return ("RollbackResult", self(value.instant), self(value.rolled_back), value.files_deleted)
        if isinstance(value, str):
            return INSTANT.sub(lambda m: self.names.setdefault(m.group(), f"I{len(self.names)}"), value)
        if isinstance(value, (list, tuple)):
            return [self(v) for v in value]
        return value


def _batches(spark):
    regions = ("us", "eu")
    return {
        "w1": _df(spark, [(i, f"v1-{i}", 1, regions[i % 2]) for i in range(8)]),
        "w2": _df(spark, [(i, f"v2-{i}", 2, regions[i % 2]) for i in range(4)]),
        "w3": _df(spark, [(4, "v3", 3, "us"), (5, "v3", 3, "eu"), (20, "new", 3, "us")]),
        "w4": _df(spark, [(6, "v4", 4, "us")]),
        "w5": _df(spark, [(0, "v5", 5, "us")]),
        "w6": _df(spark, [(2, "v6", 6, "us")]),
    }


def _steps(spark, table_type):
    """(step, via the free functions (spark, path, seen), via Table (table, seen)); `seen` holds earlier results."""
    b, opts, mor = _batches(spark), _options(table_type), table_type == "MERGE_ON_READ"
    services = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
                "hoodie.keep.max.commits": "3"}
    clustering = {"hoodie.clustering.plan.strategy.small.file.limit": str(100 * 1024 * 1024)}
    return [
        ("w1", lambda s, p, r: pyhudi.write(b["w1"], p, opts), lambda t, r: t.write(b["w1"], opts)),
        ("w2", lambda s, p, r: pyhudi.write(b["w2"], p), lambda t, r: t.write(b["w2"])),
        ("savepoint", lambda s, p, r: pyhudi.create_savepoint(s, p, r["w2"], "me", "x"),
         lambda t, r: t.savepoints.create(r["w2"], "me", "x")),
        ("savepoints", lambda s, p, r: pyhudi.show_savepoints(s, p), lambda t, r: t.savepoints.list()),
        ("w3", lambda s, p, r: pyhudi.write(b["w3"], p), lambda t, r: t.write(b["w3"])),
        ("schedule_compaction", lambda s, p, r: pyhudi.compact(s, p, "schedule"),
         lambda t, r: [t.maintenance.schedule_compaction()] if mor else t.maintenance.compact("schedule")),
        ("compact", lambda s, p, r: pyhudi.compact(s, p, "execute"), lambda t, r: t.maintenance.compact("execute")),
        ("cluster", lambda s, p, r: pyhudi.cluster(s, p, options=clustering),
         lambda t, r: t.maintenance.cluster(options=clustering)),
        ("w4", lambda s, p, r: pyhudi.write(b["w4"], p), lambda t, r: t.write(b["w4"])),
        ("rollback", lambda s, p, r: pyhudi.rollback_to_instant(s, p, r["w4"]), lambda t, r: t.rollback(r["w4"])),
        ("restore", lambda s, p, r: pyhudi.restore_to_savepoint(s, p, r["w2"]),
         lambda t, r: t.savepoints.restore(r["w2"])),
        ("delete_savepoint", lambda s, p, r: pyhudi.delete_savepoint(s, p, r["w2"]),
         lambda t, r: t.savepoints.delete(r["w2"])),
        ("drop_eu", lambda s, p, r: pyhudi.delete_partitions(s, p, ["eu"]), lambda t, r: t.delete_partitions(["eu"])),
        ("w5", lambda s, p, r: pyhudi.write(b["w5"], p), lambda t, r: t.write(b["w5"])),
        ("w6", lambda s, p, r: pyhudi.write(b["w6"], p), lambda t, r: t.write(b["w6"])),
        ("clean", lambda s, p, r: pyhudi.clean(s, p, services), lambda t, r: t.maintenance.clean(services)),
        ("archive", lambda s, p, r: pyhudi.archive(s, p, services), lambda t, r: t.maintenance.archive(services)),
    ]


def _outcome(run):
    try:
        return run()
    except PyHudiError as exc:   # the same refusal both ways (e.g. compaction of a copy-on-write table)
        return type(exc).__name__


def _actions(path):
    return [(i.action, i.state.name) for i in HudiTable.load(str(path)).timeline().instants]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_table_methods_do_what_the_free_functions_do(spark, tmp_path, table_type):
    free_path, api_path = str(tmp_path / "free" / "api"), str(tmp_path / "table" / "api")
    table = pyhudi.Table(spark, api_path)
    free_seen, api_seen, free_names, api_names = {}, {}, Names(), Names()
    for step, via_free, via_table in _steps(spark, table_type):
        free_seen[step] = _outcome(lambda: via_free(spark, free_path, free_seen))
        api_seen[step] = _outcome(lambda: via_table(table, api_seen))
        assert api_names(api_seen[step]) == free_names(free_seen[step]), step
        assert _actions(api_path) == _actions(free_path), step
        if step == "w3":
            _check_reads(spark, table, api_seen)

    # the scenario did something: a savepoint, a restore, a dropped partition, a clean and an archive
    w2, w4 = api_seen["w2"].instant_time, api_seen["w4"].instant_time
    assert api_seen["savepoint"] == Instant(w2, "savepoint") and api_seen["savepoints"] == [api_seen["savepoint"]]
    assert api_seen["rollback"].instant.action == "rollback" and api_seen["rollback"].rolled_back == [w4]
    assert api_seen["restore"].instant.action == "restore" and api_seen["restore"].rolled_back
    assert all(t > w2 for t in api_seen["restore"].rolled_back) and api_seen["delete_savepoint"] is None
    assert api_seen["drop_eu"].operation == "delete_partition"
    clean = api_seen["clean"]
    assert clean.files_deleted == sum(map(len, clean.deleted_files.values())) > 0
    assert clean.metadata["startCleanTime"] == clean.instant_time
    assert api_seen["archive"] and all(i.is_completed for i in api_seen["archive"])
    if table_type == "MERGE_ON_READ":
        (scheduled,), (compacted,) = api_seen["schedule_compaction"], api_seen["compact"]
        assert scheduled.state == State.REQUESTED and scheduled.action == "compaction"
        assert compacted.time == scheduled.time and compacted.is_completed
    else:
        assert api_seen["compact"] == "ConfigError"
    assert all(i.action == "replacecommit" for i in api_seen["cluster"])
    assert table.savepoints.list() == pyhudi.show_savepoints(spark, api_path) == []
    assert table.properties == HudiTable.load(api_path).properties.values == HudiTable.load(free_path).properties.values
    assert table.table_type == table_type and table.name == "api"
    assert table.timeline.instants == HudiTable.load(api_path).timeline().instants
    assert table.timeline.pending() == [] and table.timeline.completed_writes()
    assert table.schema == pyhudi.read(spark, api_path).schema
    assert rows(table.read(), DATA) == rows(pyhudi.read(spark, free_path), DATA)
    assert_same_rows_as_hudi_rs(spark, api_path, min_columns=4)


def _check_reads(spark, table, seen):
    """Table.read's keywords are Hudi's read options: the same rows as pyhudi.read on the same table."""
    path = table.path
    pairs = [
        (table.read(), {}),
        (table.read(query_type="read_optimized"), {"hoodie.datasource.query.type": "read_optimized"}),
        (table.read(as_of=seen["w2"]), {"as.of.instant": str(seen["w2"])}),
        (table.read(begin_instant=seen["w1"]), {"hoodie.datasource.query.type": "incremental",
                                                "hoodie.datasource.read.begin.instanttime": str(seen["w1"])}),
        (table.read(begin_instant=seen["w1"], end_instant=seen["w2"].instant_time),
         {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": str(seen["w1"]),
          "hoodie.datasource.read.end.instanttime": str(seen["w2"])}),
    ]
    for ours, options in pairs:
        assert rows(ours) == rows(pyhudi.read(spark, path, options)), options
    as_of_w2 = {r["id"]: r["name"] for r in table.read(as_of=seen["w2"]).collect()}
    assert as_of_w2 == {i: f"v2-{i}" if i < 4 else f"v1-{i}" for i in range(8)}   # before w3
    incremental = sorted(r["id"] for r in table.read(begin_instant=seen["w2"]).collect())
    assert incremental == [4, 5, 20]                                               # w3 only


def test_write_result_is_a_frozen_result_that_prints_its_instant(spark, tmp_path):
    path = tmp_path / "wr"
    first = pyhudi.write(_df(spark, [(i, f"n{i}", 1, "us") for i in range(6)]), str(path), _options("COPY_ON_WRITE"))
    result = pyhudi.Table(spark, path).write(_df(spark, [(1, "u", 2, "us"), (9, "new", 2, "us")]))
    commit = json.loads((path / ".hoodie" / f"{result.instant_time}.commit").read_text())
    stats = [s for group in commit["partitionToWriteStats"].values() for s in group]
    assert not isinstance(result, str) and str(result) == f"{result}" == result.instant_time
    assert result.operation == "upsert" and result.failed_services == []
    assert result.write_stats == stats and result.num_writes == sum(s["numWrites"] for s in stats) == 7
    assert result.bytes_written == sum(s["totalWriteBytes"] for s in stats) > 0
    assert result.index_stats == json.loads(commit["extraMetadata"]["pyhudi.index.stats"])
    assert result.write_amplification is not None and result.write_amplification > 1   # a copy-on-write rewrite
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.instant_time = "x"
    # a result, not a string: equal only to an equal result; it stands for its instant where a time is read
    instant = result.instant_time
    assert result != instant and result != first and first.instant_time < instant
    assert {result: 1}[result] == 1
    assert json.loads(json.dumps({"instant": str(result)}))["instant"] == instant
    assert pickle.loads(pickle.dumps(result)) == result
    assert HudiTable.load(str(path)).timeline().latest_completed_write().time == instant
    assert rows(pyhudi.read(spark, str(path), {"as.of.instant": first})) == \
        rows(pyhudi.read(spark, str(path), {"as.of.instant": first.instant_time}))


def test_bad_paths_and_names_are_refused_naming_them(spark, tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(NotAHudiTableError, match=re.escape(str(missing))):
        pyhudi.Table(spark, missing).timeline
    with pytest.raises(NotAHudiTableError, match=re.escape(str(missing))):
        pyhudi.Table(spark, missing).read()
    assert not missing.exists()
    a_file = tmp_path / "a_file"
    a_file.write_text("not a table")
    with pytest.raises(NotAHudiTableError, match=re.escape(str(a_file))):
        pyhudi.Table(spark, a_file)
    with pytest.raises(NotAHudiTableError, match="no_such_db.no_such_table"):
        pyhudi.Table.for_name(spark, "no_such_db.no_such_table")
    spark.sql("DROP TABLE IF EXISTS api_plain")
    spark.sql("CREATE TABLE api_plain (id INT) USING parquet")
    with pytest.raises(NotAHudiTableError, match="api_plain is a parquet table"):
        pyhudi.Table.for_name(spark, "api_plain")
    spark.sql("DROP TABLE api_plain")
    table = pyhudi.Table(spark, tmp_path / "refused")
    with pytest.raises(ConfigError, match="write mode 'sideways'"):
        table.write(_df(spark, [(1, "a", 1, "us")]), _options("COPY_ON_WRITE"), mode="sideways")
    assert not (tmp_path / "refused").exists()


def test_for_name_opens_the_catalog_tables_location(spark, tmp_path):
    spark.sql("DROP TABLE IF EXISTS api_named")
    location = tmp_path / "named"
    pyhudi.sql(spark, f"""CREATE TABLE api_named (id INT, name STRING, ts BIGINT) USING hudi
        LOCATION '{location}' TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts');
        INSERT INTO api_named VALUES (1, 'a', 1), (2, 'b', 1)""")
    for name in ("api_named", "default.api_named", "spark_catalog.default.api_named"):
        table = pyhudi.Table.for_name(spark, name)
        assert table.path == str(location)
    result = table.write(spark.createDataFrame([(2, "b2", 2), (3, "c", 2)], "id int, name string, ts long"))
    assert result.operation == "upsert"
    assert sorted(tuple(r) for r in pyhudi.sql(spark, "SELECT id, name FROM api_named").collect()) == \
        sorted(tuple(r) for r in table.read().select("id", "name").collect()) == [(1, "a"), (2, "b2"), (3, "c")]
    pyhudi.sql(spark, "DROP TABLE api_named")


def test_explain_write_is_pyhudi_explain_write(spark, tmp_path):
    path = str(tmp_path / "explained")
    table = pyhudi.Table(spark, path, _options("MERGE_ON_READ"))
    table.write(_df(spark, [(i, f"n{i}", 1, "us" if i % 2 else "eu") for i in range(10)]))
    before = sorted(p.name for p in (tmp_path / "explained").rglob("*"))
    batch = _df(spark, [(1, "u", 2, "us"), (2, "u", 2, "eu"), (50, "new", 2, "asia")])
    ours, theirs = table.explain_write(batch), pyhudi.explain_write(batch, path, _options("MERGE_ON_READ"))
    assert sorted(p.name for p in (tmp_path / "explained").rglob("*")) == before   # nothing written
    counts = {k: v for k, v in ours.summary.items() if not k.startswith("bytes")}
    assert counts == {k: v for k, v in theirs.summary.items() if not k.startswith("bytes")}
    for key in (k for k in ours.summary if k.startswith("bytes")):   # dry-run files differ in names/footers only
        assert abs(ours.summary[key] - theirs.summary[key]) <= 0.01 * max(1, theirs.summary[key]), key
    assert ours.partitions == theirs.partitions == ["asia", "eu", "us"]
    assert ours.index_stats == theirs.index_stats and ours.index_stats["updates"] == 2


def test_a_table_is_loaded_once_and_refreshed_on_demand(spark, tmp_path):
    path = str(tmp_path / "loaded")
    table = pyhudi.Table(spark, path)
    with pytest.raises(NotAHudiTableError):
        table.name                      # nothing there yet
    pyhudi.write(_df(spark, [(1, "a", 1, "us")]), path, _options("COPY_ON_WRITE"))   # another writer creates it
    assert table.refresh().name == "api"
    loaded = table._table()
    assert table._table() is loaded                       # kept between calls
    table.write(_df(spark, [(2, "b", 1, "us")]))          # an action through the table refreshes it
    assert table._table() is not loaded and len(table.timeline.completed_writes()) == 2
