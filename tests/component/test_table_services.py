"""Table services run apart from writes (issue 15 item 3: `pyhudi services`, Hudi's HoodieMultiTableServicesMain),
compaction strategies and soft deletes (item 8), and Hudi options accepted but ignored warn by name."""

from __future__ import annotations

import threading
import warnings

import pytest

import pyhudi
from pyhudi.cli import main
from pyhudi.client import ignored_options
from pyhudi.errors import WriteConflictError
from pyhudi.services.compaction.plan import read_compaction_plan
from pyhudi.table import HudiTable
from pyhudi.timeline import CLEAN, COMMIT
from support import hudi_rs_read, rows, times

MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, fare double, ts long, part string")


def _options(name, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.parquet.small.file.limit": "0", "hoodie.clean.automatic": "false", **extra}


# --- pyhudi services ----------------------------------------------------------------------------------------
def test_services_command_beside_a_live_writer(spark, tmp_path, capsys):
    occ = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
           "hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    mor, cow = tmp_path / "mor", tmp_path / "cow"
    opts = {"mor": _options("mor", **MOR, **occ), "cow": _options("cow", **occ)}
    for name, path in (("mor", mor), ("cow", cow)):
        pyhudi.write(_df(spark, [(k, "v0", 0.0, 0, f"p{k % 2}") for k in range(4)]), path, opts[name])
    errors, last = [], {}

    def writer():
        """Upserts to both tables while the services run; a write that meets a compaction planned meanwhile
        on its file groups is retried, as an application would."""
        try:
            for i in range(1, 7):
                for name, path in (("mor", mor), ("cow", cow)):
                    batch = _df(spark, [(k, f"v{i}", float(i), i, f"p{k % 2}") for k in (i % 4, (i + 1) % 4)])
                    for attempt in range(6):
                        try:
                            pyhudi.write(batch, path, opts[name])
                            break
                        except WriteConflictError:
                            continue
                    else:
                        raise AssertionError(f"write {i} to {name} kept conflicting")
                    last.setdefault(name, {}).update({i % 4: f"v{i}", (i + 1) % 4: f"v{i}"})
        except BaseException as exc:  # noqa: BLE001 - the test thread re-raises it
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    conf = [arg for key, value in occ.items() for arg in ("--hoodie-conf", f"{key}={value}")]
    code = main(["services", "--base-path", str(mor), "--base-path", str(cow), *conf, "--continuous",
                 "--rounds", "4", "--schedule-delay", "300", "--master", "local[2]"])
    thread.join()
    assert not errors, errors
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("round ")]
    assert len(lines) == 4 * 2 * 4, out                     # 4 rounds x 2 tables x 4 services
    # a service may find a write of the live writer pending and leave its table for the next round; nothing else
    failures = [line for line in lines if "failed:" in line]
    assert all("still pending" in line or "WriteConflictError" in line for line in failures), failures
    assert code == (1 if failures else 0)
    # once the writer is done, one more pass does everything due
    assert main(["services", "--base-path", str(mor), "--base-path", str(cow), *conf]) == 0
    for name, path in (("mor", mor), ("cow", cow)):
        expected = sorted((k, last[name].get(k, "v0")) for k in range(4))
        assert rows(pyhudi.read(spark, str(path)), ["id", "name"]) == expected
        assert rows(hudi_rs_read(path), ["id", "name"]) == expected
        timeline = HudiTable.load(str(path)).timeline()
        assert timeline.completed([CLEAN]) and not timeline.pending()
    compactions = [i for i in HudiTable.load(str(mor)).timeline().completed([COMMIT])]
    assert compactions, "the MOR table was compacted"
    assert main(["services", "--base-path", str(tmp_path / "none")]) == 1   # a missing table is reported


def test_services_arguments_are_checked(tmp_path, capsys):
    assert main(["services", "--base-path", str(tmp_path), "--hoodie-conf", "novalue"]) == 1
    assert "is not key=value" in capsys.readouterr().err


# --- compaction strategies ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def logs_table(spark, tmp_path_factory):
    """MOR: file group in p1 with 3 log files, file group in p2 with 1."""
    path = tmp_path_factory.mktemp("strategies") / "t"
    opts = _options("strategies", **MOR)
    pyhudi.write(_df(spark, [(1, "a", 1.0, 0, "p1"), (2, "b", 2.0, 0, "p2")]), path, opts)
    for i in range(1, 4):
        pyhudi.write(_df(spark, [(1, f"a{i}", 1.0, i, "p1")]), path, opts)
    pyhudi.write(_df(spark, [(2, "b1", 2.0, 1, "p2")]), path, opts)
    return path


def _planned(spark, path, options) -> list[tuple[str, int]]:
    (t,) = times(pyhudi.compact(spark, path, "schedule", options=options))
    try:
        return [(op.partition_path, len(op.delta_files))
                for op in read_compaction_plan(HudiTable.load(str(path)).storage, t).operations]
    finally:
        (HudiTable.load(str(path)).storage.fs.delete_file(f"{path}/.hoodie/{t}.compaction.requested"))


@pytest.mark.parametrize("options, expected", [
    # LogFileNumBasedCompactionStrategy: slices with at least `threshold` log files, most log files first
    ({"hoodie.compaction.strategy": "LogFileNumBasedCompactionStrategy",
      "hoodie.compaction.logfile.num.threshold": "2"}, [("p1", 3)]),
    ({"hoodie.compaction.strategy": "LogFileNumBasedCompactionStrategy", "hoodie.compaction.target.io": "0"},
     [("p1", 3)]),                     # bounded IO as Hudi's (it extends BoundedIO): the first slice only
    # UnBoundedCompactionStrategy: every slice with logs, whatever the IO budget
    ({"hoodie.compaction.strategy": "UnBoundedCompactionStrategy", "hoodie.compaction.target.io": "0"},
     [("p1", 3), ("p2", 1)]),
    ({"hoodie.compaction.strategy": "BoundedIOCompactionStrategy", "hoodie.compaction.target.io": "0"},
     [("p1", 3)]),
])
def test_compaction_strategies(spark, logs_table, options, expected):
    assert sorted(_planned(spark, logs_table, options)) == sorted(expected)
    if len(expected) > 1 or "num.threshold" in str(options):
        assert _planned(spark, logs_table, options)[0] == expected[0]


# --- soft delete --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_soft_delete_keeps_the_key_with_null_values(spark, tmp_path, table_type):
    """Hudi's soft delete: upsert the record with every value column null (key, partition and ordering kept)."""
    path = tmp_path / table_type
    opts = _options("soft", **{"hoodie.datasource.write.table.type": table_type})
    pyhudi.write(_df(spark, [(1, "a", 1.5, 1, "p"), (2, "b", 2.5, 1, "p")]), path, opts)
    pyhudi.write(_df(spark, [(1, None, None, 2, "p")]), path, opts)
    expected = [(1, None, None, 2, "p"), (2, "b", 2.5, 1, "p")]
    columns = ["id", "name", "fare", "ts", "part"]
    assert rows(pyhudi.read(spark, str(path)), columns) == expected
    assert rows(hudi_rs_read(path), columns) == expected
    if table_type == "MERGE_ON_READ":
        assert pyhudi.compact(spark, path)
        assert rows(pyhudi.read(spark, str(path)), columns) == expected
        assert rows(hudi_rs_read(path), columns) == expected


# --- options accepted but not implemented ------------------------------------------------------------------
def test_ignored_options_warn_once_by_name(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(ignored_options, "_warned", set())
    path = tmp_path / "ignored"
    ignored = {"hoodie.upsert.shuffle.parallelism": "8", "hoodie.compaction.lazy.block.read": "false",
               "hoodie.clustering.async.enabled": "true", "hoodie.clustering.preserve.commit.metadata": "false"}
    honoured = {"hoodie.clustering.inline": "false", "hoodie.compaction.strategy": "UnBoundedCompactionStrategy",
                "hoodie.bulkinsert.shuffle.parallelism": "2", "hoodie.clustering.preserve.commit.metadata": "true",
                "hoodie.clean.async": "false", "hoodie.clean.max.commits": "2"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pyhudi.write(_df(spark, [(1, "a", 1.0, 1, "p")]), path, _options("ignored", **ignored))
        pyhudi.write(_df(spark, [(1, "b", 1.0, 2, "p")]), path, _options("ignored", **ignored))   # once only
        pyhudi.write(_df(spark, [(1, "c", 1.0, 3, "p")]), path, _options("ignored", **honoured))
    messages = [str(w.message) for w in caught if "ignored" in str(w.message) or "unknown" in str(w.message)]
    for key, value in ignored.items():
        named = [m for m in messages if f"{key}={value}" in m]
        assert len(named) == 1 and "is ignored by pyhudi" in named[0], (key, messages)
    assert len(messages) == len(ignored), messages
