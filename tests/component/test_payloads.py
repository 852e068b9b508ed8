"""Payload classes (hoodie.datasource.write.payload.class / hoodie.compaction.payload.class) on COW and MOR tables:
upsert sequences whose expected rows a plain-Python reference computes from Hudi's documented semantics, read
through pyhudi (native MOR scan and the Python data source), after compaction, and by hudi-rs."""

from __future__ import annotations

import glob
import json
import os

import pytest

import pyhudi
from pyhudi.errors import ConfigError
from pyhudi.merge import (DEFAULT_PAYLOAD, EMPTY_PAYLOAD, EVENT_TIME_PAYLOAD, OVERWRITE_NON_DEFAULTS,
                          OVERWRITE_WITH_LATEST, PARTIAL_UPDATE)
from support import hudi_rs_read, rows

SCHEMA = "id long, ts long, name string, amount long, region string, _hoodie_is_deleted boolean"
COLUMNS = ["id", "ts", "name", "amount", "region"]
FILLED = ("name", "amount")          # the fields the null-filling payloads merge in these batches

# id, ts, name, amount, deleted (region is always "x": one file group, so MOR updates become log files)
BATCH1 = [(i, 10, f"n{i}", i * 100, False) for i in range(1, 7)]
BATCH2 = [(1, 20, None, 111, False),       # newer, null name
          (2, 5, "old2", None, False),     # older than stored
          (3, 30, "n3b", None, False),     # two versions of one key in a batch: preCombine
          (3, 25, None, 333, False),
          (4, 40, None, None, True),       # newer delete
          (5, 1, None, None, True)]        # older delete
BATCH3 = [(1, 15, "n1c", None, False),     # older than the previous update
          (6, 50, None, None, False),
          (2, 60, "n2c", None, False)]


# --- reference: Hudi's payload semantics in plain Python ---------------------------------------------------------
def _record(row):
    i, ts, name, amount, deleted = row
    return {"id": i, "ts": ts, "name": name, "amount": amount, "region": "x", "deleted": bool(deleted)}


def _fill(first, second):
    return {**first, **{f: first[f] if first[f] is not None else second[f] for f in FILLED}}


def _pre(payload, old, new):
    """preCombine(old, new): the greater ordering value wins (ties: the later); PartialUpdate fills fields."""
    if payload == PARTIAL_UPDATE:
        if new["deleted"] or old["deleted"]:
            return new
        return _fill(old, new) if old["ts"] > new["ts"] else _fill(new, old)
    return old if old["ts"] > new["ts"] else new


def _combine(payload, stored, new):
    """combineAndGetUpdateValue(stored, new): the record that is stored afterwards (None: deleted)."""
    if payload == EMPTY_PAYLOAD:
        return None
    stored_newer = stored is not None and stored["ts"] > new["ts"]
    if payload in (DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD) and stored_newer:
        return stored
    if new["deleted"]:
        return None
    if stored is None or payload in (OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD):
        return new
    if payload == OVERWRITE_NON_DEFAULTS:
        return _fill(new, stored)
    return _fill(stored, new) if stored_newer else _fill(new, stored)


def _precombined(payload, records):
    out = {}
    for r in records:
        out[r["id"]] = _pre(payload, out[r["id"]], r) if r["id"] in out else r
    return out


def expected_cow(batches):
    """[(payload, rows)] applied one commit after another, each batch preCombined then combined with storage."""
    state = {}
    for payload, batch in batches:
        for key, r in _precombined(payload, [_record(x) for x in batch]).items():
            merged = _combine(payload, state.get(key), r)
            if merged is None:
                state.pop(key, None)
            else:
                state[key] = merged
    return _rows(state)


def expected_mor(table_payload, batches):
    """The first batch is the base file; later batches are log records: preCombined across all of them (by the
    table's payload), then combined with the base record. Deletes are delete-block entries: a batch written with
    EmptyHoodieRecordPayload (natural order: deletes whatever was read before), and `_hoodie_is_deleted` records
    (with their ordering value: a log record read before with a greater one survives). A delete-block entry
    removes the base record under every payload (Hudi 0.14: the delete's payload has no record bytes), so an
    older `_hoodie_is_deleted` record deletes on MOR what it would not delete on COW under the event-time
    payloads."""
    base = _precombined(batches[0][0], [_record(x) for x in batches[0][1]])
    logs = {}
    for payload, batch in batches[1:]:
        for r in (_record(x) for x in batch):
            current = logs.get(r["id"])
            if payload == EMPTY_PAYLOAD:
                logs[r["id"]] = "delete-block"
            elif r["deleted"]:
                if not (isinstance(current, dict) and current["ts"] > r["ts"]):
                    logs[r["id"]] = "delete-block"
            elif logs.get(r["id"]) in (None, "delete-block"):
                logs[r["id"]] = r
            else:
                logs[r["id"]] = _pre(table_payload, logs[r["id"]], r)
    state = dict(base)
    for key, r in logs.items():
        merged = None if r == "delete-block" else _combine(table_payload, base.get(key), r)
        if merged is None:
            state.pop(key, None)
        else:
            state[key] = merged
    return _rows(state)


def _rows(state):
    return sorted((tuple(r[c] for c in COLUMNS) for r in state.values()), key=repr)


# --- the tables ----------------------------------------------------------------------------------------------------
def _options(name, table_type, payload, **extra):
    return {"hoodie.table.name": name, "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "region",
            "hoodie.datasource.write.table.type": table_type, "hoodie.datasource.write.payload.class": payload,
            "hoodie.compact.inline": "false", **extra}


def _write(spark, path, options, batch):
    frame = spark.createDataFrame([(i, ts, name, amount, "x", deleted) for i, ts, name, amount, deleted in batch],
                                  SCHEMA)
    pyhudi.write(frame, str(path), options)


def _sequence(payload):
    """(write payload, batch) per commit. EmptyHoodieRecordPayload: a table of the default payload whose second
    batch is written with EmptyHoodieRecordPayload (every record a hard delete)."""
    if payload == EMPTY_PAYLOAD:
        return OVERWRITE_WITH_LATEST, [(OVERWRITE_WITH_LATEST, BATCH1), (EMPTY_PAYLOAD, [(1, 1, None, None, False),
                                                                                         (4, 99, "z", 1, False)]),
                                       (OVERWRITE_WITH_LATEST, [(2, 70, None, 7, False), (3, 5, "n3z", 8, False)])]
    return payload, [(payload, BATCH1), (payload, BATCH2), (payload, BATCH3)]


def _write_sequence(spark, path, name, table_type, sequence) -> None:
    for write_payload, batch in sequence:
        _write(spark, path, _options(name, table_type, write_payload), batch)


PAYLOAD_NAMES = [OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD, EVENT_TIME_PAYLOAD, EMPTY_PAYLOAD, OVERWRITE_NON_DEFAULTS,
                 PARTIAL_UPDATE]


@pytest.mark.parametrize("payload", PAYLOAD_NAMES, ids=lambda p: p.rsplit(".", 1)[-1])
def test_cow_payload_sequence(spark, tmp_path, payload):
    path = tmp_path / "t"
    table_payload, sequence = _sequence(payload)
    _write_sequence(spark, path, "cow_payload", "COPY_ON_WRITE", sequence)
    expected = expected_cow(sequence)
    assert sorted(rows(pyhudi.read(spark, str(path)), COLUMNS), key=repr) == expected
    assert sorted(rows(hudi_rs_read(path), COLUMNS), key=repr) == expected


@pytest.mark.parametrize("payload", PAYLOAD_NAMES, ids=lambda p: p.rsplit(".", 1)[-1])
def test_mor_payload_sequence_snapshot_and_compaction(spark, tmp_path, payload):
    path = tmp_path / "t"
    table_payload, sequence = _sequence(payload)
    _write_sequence(spark, path, "mor_payload", "MERGE_ON_READ", sequence)
    assert glob.glob(str(path / "x" / ".*.log.*")), "the updates must be log files"
    expected = expected_mor(table_payload, sequence)
    native = sorted(rows(pyhudi.read(spark, str(path)), COLUMNS), key=repr)
    python = sorted(rows(spark.read.format("hudi").load(str(path)), COLUMNS), key=repr)
    assert native == expected
    assert python == expected
    pyhudi.compact(spark, str(path))
    assert sorted(rows(pyhudi.read(spark, str(path)), COLUMNS), key=repr) == expected
    assert sorted(rows(hudi_rs_read(path), COLUMNS), key=repr) == expected   # base files only now


def test_partial_update_precombine_under_a_global_index(spark, tmp_path):
    """A global index deduplicates the batch on Spark before tagging (across partitions): under
    PartialUpdateAvroPayload two versions of a key in one batch merge field by field there too."""
    path = tmp_path / "t"
    _, sequence = _sequence(PARTIAL_UPDATE)
    for write_payload, batch in sequence:
        _write(spark, path, _options("pu_global", "COPY_ON_WRITE", write_payload,
                                     **{"hoodie.index.type": "GLOBAL_BLOOM"}), batch)
    expected = expected_cow(sequence)
    assert sorted(rows(pyhudi.read(spark, str(path)), COLUMNS), key=repr) == expected
    assert sorted(rows(hudi_rs_read(path), COLUMNS), key=repr) == expected


def test_partial_update_precombine_in_bulk_insert(spark, tmp_path):
    """bulk_insert with hoodie.combine.before.insert=true folds duplicate keys as the payload's preCombine."""
    path = tmp_path / "t"
    batch = [r for r in BATCH2 if not r[4]] + [(6, 7, None, 600, False), (6, 7, "n6", None, False)]
    _write(spark, path, _options("pu_bulk", "COPY_ON_WRITE", PARTIAL_UPDATE, **{
        "hoodie.datasource.write.operation": "bulk_insert", "hoodie.combine.before.insert": "true"}), batch)
    expected = _rows(_precombined(PARTIAL_UPDATE, [_record(x) for x in batch]))
    assert ("n3b", 333) in {(r[2], r[3]) for r in expected} and ("n6", 600) in {(r[2], r[3]) for r in expected}
    assert sorted(rows(pyhudi.read(spark, str(path)), COLUMNS), key=repr) == expected
    assert sorted(rows(hudi_rs_read(path), COLUMNS), key=repr) == expected


def test_reference_differs_between_payloads():
    """The sequences tell the payloads apart (otherwise the tests above would prove little)."""
    cow = {p: repr(expected_cow(_sequence(p)[1])) for p in PAYLOAD_NAMES if p != EVENT_TIME_PAYLOAD}
    assert len(set(cow.values())) == len(cow)


def _files(path) -> dict:
    return {p: open(p, "rb").read() for p in glob.glob(str(path / "**"), recursive=True) if not os.path.isdir(p)}


def test_unknown_payload_class_leaves_table_untouched(spark, tmp_path):
    path = tmp_path / "t"
    _write(spark, path, _options("bad_payload", "COPY_ON_WRITE", OVERWRITE_WITH_LATEST), BATCH1)
    before = _files(path)
    with pytest.raises(ConfigError, match="hoodie.datasource.write.payload.class.*PartialUpdateAvroPayload"):
        _write(spark, path, _options("bad_payload", "COPY_ON_WRITE", "com.example.MyPayload"), BATCH2)
    assert _files(path) == before


def test_payload_ordering_field_on_cow_and_refused_on_mor(spark, tmp_path):
    """hoodie.payload.ordering.field orders an incoming record against the stored one (EventTimeAvroPayload);
    a MOR table refuses a field other than its precombine field (its readers order by that), nothing written."""
    schema = "id long, ts long, version long, region string"
    path = tmp_path / "cow"
    opts = {**_options("ordering_cow", "COPY_ON_WRITE", EVENT_TIME_PAYLOAD),
            "hoodie.payload.ordering.field": "version"}
    pyhudi.write(spark.createDataFrame([(1, 1, 5, "x"), (2, 1, 5, "x")], schema), str(path), opts)
    pyhudi.write(spark.createDataFrame([(1, 9, 3, "x"), (2, 0, 7, "x")], schema), str(path), opts)
    expected = [(1, 1, 5), (2, 0, 7)]     # key 1: stored version 5 > 3 stays, although ts 9 > 1
    assert sorted(rows(pyhudi.read(spark, str(path)), ["id", "ts", "version"])) == expected
    assert sorted(rows(hudi_rs_read(path), ["id", "ts", "version"])) == expected

    mor = tmp_path / "mor"
    with pytest.raises(ConfigError, match="hoodie.payload.ordering.field=version"):
        pyhudi.write(spark.createDataFrame([(1, 1, 5, "x")], schema), str(mor),
                     {**opts, "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.table.name": "o_mor"})
    assert not mor.exists() or not any(mor.rglob("*.parquet"))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_event_time_in_write_stats(spark, tmp_path, table_type):
    """DefaultHoodieRecordPayload reports min/maxEventTime (epoch millis) of hoodie.payload.event.time.field over
    the records a write stores, as Hudi's WriteStatus: 10-digit values are seconds, 13-digit values millis."""
    schema = "id long, ts long, event long, region string"
    path = tmp_path / "t"
    opts = {**_options("event_time", table_type, DEFAULT_PAYLOAD), "hoodie.payload.event.time.field": "event"}
    pyhudi.write(spark.createDataFrame([(1, 1, 1700000000, "x"), (2, 1, 1700000500123, "x"), (3, 1, 42, "x")],
                                       schema), str(path), opts)
    pyhudi.write(spark.createDataFrame([(1, 2, 1700000900, "x"), (2, 0, 1800000000, "x")], schema), str(path), opts)
    commits = sorted(glob.glob(str(path / ".hoodie" / "*.commit")) + glob.glob(str(path / ".hoodie" / "*.deltacommit")))
    stats = [[s for ss in json.load(open(c))["partitionToWriteStats"].values() for s in ss] for c in commits]
    first, second = stats[0], stats[1]
    assert min(s["minEventTime"] for s in first) == 1700000000 * 1000
    assert max(s["maxEventTime"] for s in first) == 1700000500123
    # COW: key 2's record loses to the stored one (ts 0 < 1), only key 1's event time counts; MOR appends both
    # records to the log (the merge happens when reading), so both count, as in Hudi's append handle
    high = 1700000900 * 1000 if table_type == "COPY_ON_WRITE" else 1800000000 * 1000
    assert [(s["minEventTime"], s["maxEventTime"]) for s in second if s["minEventTime"] is not None] \
        == [(1700000900 * 1000, high)]
    no_payload = tmp_path / "plain"
    pyhudi.write(spark.createDataFrame([(1, 1, 1700000000, "x")], schema), str(no_payload),
                 _options("plain", table_type, OVERWRITE_WITH_LATEST))
    for c in glob.glob(str(no_payload / ".hoodie" / "*commit")):
        for ss in json.load(open(c))["partitionToWriteStats"].values():
            assert all(s["minEventTime"] is None for s in ss)
