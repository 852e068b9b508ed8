"""Merge-on-read tables: updates and deletes land in Hudi log files; pyhudi's merged reads and hudi-rs agree."""

from __future__ import annotations

import json

import pytest

import pyhudi
from pyhudi.file_group.log_file import read_log_bytes
from pyhudi.table import HudiTable
from support import assert_same_rows_as_hudi_rs, fixture_table, hudi_rs_read, rows

COLUMNS = ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_time", "id", "name", "price", "ts",
           "region"]


def _df(spark, records):
    return spark.createDataFrame(records, "id long, name string, price double, ts long, region string")


def _options(name, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", **extra}


@pytest.mark.parametrize("block_format", ["parquet", "avro"])
def test_mor_upserts_and_deletes_match_hudi_rs(spark, tmp_path, block_format):
    path = tmp_path / "mor"
    options = _options("mor", **{"hoodie.logfile.data.block.format": block_format})
    first = pyhudi.write(_df(spark, [(i, f"n{i}", float(i), 1, "us" if i % 2 else "eu") for i in range(20)]),
                         path, options).instant_time
    second = pyhudi.write(_df(spark, [(1, "upd", 100.0, 2, "us"), (2, "upd", 200.0, 2, "eu"),
                                      (50, "new", 5.0, 2, "asia")]), path, options).instant_time
    third = pyhudi.write(_df(spark, [(3, None, None, 3, "us"), (4, None, None, 3, "eu")]), path,
                         {**options, "hoodie.datasource.write.operation": "delete"}).instant_time
    hoodie = path / ".hoodie"
    assert all((hoodie / f"{t}.deltacommit").exists() for t in (first, second, third))
    logs = sorted(p.name for p in path.rglob(".*.log.*"))
    assert len(logs) == 4, logs          # two partitions x (update log, delete log)
    # every block's SCHEMA header is the writer schema with the meta fields, delete blocks' too (as Hudi's)
    schemas = {block.block_type.name: json.loads(block.schema) for log in path.rglob(".*.log.*")
               for block in read_log_bytes(log.read_bytes(), decode=False)}
    assert set(schemas) == {"DELETE_BLOCK", f"{block_format.upper()}_DATA_BLOCK"}
    assert schemas["DELETE_BLOCK"] == schemas[f"{block_format.upper()}_DATA_BLOCK"]
    assert [f["name"] for f in schemas["DELETE_BLOCK"]["fields"]][:2] == ["_hoodie_commit_time", "_hoodie_commit_seqno"]
    meta = json.loads((hoodie / f"{second}.deltacommit").read_text())
    log_stats = [s for g in meta["partitionToWriteStats"].values() for s in g if "logVersion" in s]
    assert sum(s["numUpdateWrites"] for s in log_stats) == 2 and all(s["prevCommit"] == first for s in log_stats)

    ours = pyhudi.read(spark, path)
    got = {r["id"]: r["name"] for r in ours.collect()}
    assert got[1] == "upd" and got[2] == "upd" and 3 not in got and 4 not in got and got[50] == "new"
    assert len(got) == 19
    assert rows(ours, COLUMNS) == rows(hudi_rs_read(path), COLUMNS)
    for instant in (first, second, third):
        assert rows(pyhudi.read(spark, path, {"as.of.instant": instant}), COLUMNS) == \
            rows(hudi_rs_read(path, as_of=instant), COLUMNS), instant
    incremental = pyhudi.read(spark, path, {"hoodie.datasource.query.type": "incremental",
                                            "hoodie.datasource.read.begin.instanttime": first})
    assert sorted(r["id"] for r in incremental.collect()) == [1, 2, 50]
    assert rows(incremental, COLUMNS) == rows(hudi_rs_read(path, start=first), COLUMNS)
    # read-optimized sees base files only: the updates still sit in the logs
    optimized = {r["id"]: r["name"] for r in
                 pyhudi.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"}).collect()}
    assert optimized[1] == "n1" and 3 in optimized and optimized[50] == "new"


MOR_FIXTURES = ["mor_parquet_v6_nonpartitioned", "mor_parquet_v6_nonpartitioned_rollback",
                "mor_parquet_v6_simplekeygen_nonhivestyle", "mor_parquet_v6_simplekeygen_nonhivestyle_overwritetable",
                "qs_mor_avro_v6_trips_8i1u", "qs_mor_avro_v6_trips_8i3d"]


@pytest.mark.parametrize("name", MOR_FIXTURES)
def test_mor_v6_fixture_matches_hudi_rs(spark, tmp_path_factory, name):
    assert_same_rows_as_hudi_rs(spark, fixture_table(name, tmp_path_factory), min_columns=5)


def test_writes_during_a_pending_compaction_and_inline_compaction(spark, tmp_path):
    from pyhudi.client.compaction import schedule_compaction
    from pyhudi.services.compaction.run import execute_compaction

    path = tmp_path / "pending"
    options = _options("pending")
    pyhudi.write(_df(spark, [(i, f"n{i}", float(i), 1, "us") for i in range(10)]), path, options)
    pyhudi.write(_df(spark, [(1, "u1", 1.0, 2, "us")]), path, options)
    planned = schedule_compaction(spark, str(path))
    assert planned is not None
    # ingestion does not wait for the compaction: the update joins the slice the compaction opens
    pyhudi.write(_df(spark, [(2, "u2", 2.0, 3, "us")]), path, options)
    assert any(f"_{planned}.log." in p.name for p in path.rglob(".*.log.*"))
    names = {r["id"]: r["name"] for r in pyhudi.read(spark, path).collect()}
    assert names[1] == "u1" and names[2] == "u2" and len(names) == 10
    execute_compaction(spark, str(path), planned)
    assert (path / ".hoodie" / f"{planned}.commit").exists()
    assert rows(pyhudi.read(spark, path), COLUMNS) == rows(hudi_rs_read(path), COLUMNS)
    assert {r["id"]: r["name"] for r in pyhudi.read(spark, path).collect()} == names

    inline = tmp_path / "inline"
    options = _options("inline", **{"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"})
    pyhudi.write(_df(spark, [(i, f"n{i}", float(i), 1, "us") for i in range(5)]), inline, options)
    pyhudi.write(_df(spark, [(1, "u1", 1.0, 2, "us")]), inline, options)
    timeline = HudiTable.load(str(inline)).timeline()
    compactions = [i for i in timeline.completed() if i.action == "commit"]
    assert len(compactions) == 1, timeline.instants
    optimized = pyhudi.read(spark, inline, {"hoodie.datasource.query.type": "read_optimized"})
    assert {r["id"]: r["name"] for r in optimized.collect()}[1] == "u1"   # the update is in the new base file
