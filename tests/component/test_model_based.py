"""Model-based test: random sequences of writes and table services on copy-on-write and merge-on-read tables,
checked after every step against an in-memory model of the table (record key -> row).

Operations: upsert, insert, delete, insert_overwrite, delete_partition, compaction (merge-on-read), clean,
rollback of the latest commit, savepoint and restore; every write also runs the automatic clean (1 commit
retained) and archive (2..3 commits kept), so services interleave with everything else. The final table is read
by hudi-rs too.

CI runs a short profile. The long one: PYHUDI_MODEL_EXAMPLES=500 (sequences per table type) and optionally
PYHUDI_MODEL_STEPS=12 (steps per sequence), e.g.
    PYHUDI_MODEL_EXAMPLES=500 pytest -q tests/component/test_model_based.py
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import pyhudi
from pyhudi.table import HudiTable
from pyhudi.timeline import SAVEPOINT
from support import hudi_rs_read, rows

EXAMPLES = int(os.environ.get("PYHUDI_MODEL_EXAMPLES", "2"))
STEPS = int(os.environ.get("PYHUDI_MODEL_STEPS", "4"))
KEYS = list(range(8))
PARTITIONS = ["p0", "p1"]
COLUMNS = ["id", "name", "ts", "part"]
_SPARK = {}


def _part(key: int) -> str:
    return PARTITIONS[key % len(PARTITIONS)]


class HudiTableModel(RuleBasedStateMachine):
    table_type = "COPY_ON_WRITE"

    def __init__(self):
        super().__init__()
        self.spark = _SPARK["spark"]
        self.folder = tempfile.mkdtemp(prefix="pyhudi-model-")
        self.path = f"{self.folder}/t"
        self.model: dict[int, tuple] = {}
        self.history: list[tuple[str, dict]] = []     # (instant, model after it) of every data write
        self.savepoints: dict[str, dict] = {}
        self.clock = 0
        self.options = {
            "hoodie.table.name": "model", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "part",
            "hoodie.datasource.write.table.type": self.table_type, "hoodie.cleaner.commits.retained": "1",
            "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}

    # --- helpers ----------------------------------------------------------------------------------------
    def _rows(self, keys) -> list[tuple]:
        self.clock += 1
        return [(k, f"n{k}_{self.clock}", self.clock, _part(k)) for k in sorted(set(keys))]

    def _write(self, records, operation: str) -> str:
        df = self.spark.createDataFrame(records, "id long, name string, ts long, part string")
        instant = str(pyhudi.write(df, self.path, {**self.options, "hoodie.datasource.write.operation": operation}))
        return instant

    def _committed(self, instant: str) -> None:
        self.history.append((instant, dict(self.model)))

    def _latest_write(self) -> str | None:
        writes = HudiTable.load(self.path).timeline().completed_writes()
        return writes[-1].time if writes else None

    # --- rules ------------------------------------------------------------------------------------------
    @initialize(keys=st.sets(st.sampled_from(KEYS), min_size=1, max_size=4))
    def create(self, keys):
        records = self._rows(keys)
        instant = self._write(records, "insert")
        self.model.update({r[0]: r for r in records})
        self._committed(instant)

    @rule(keys=st.sets(st.sampled_from(KEYS), min_size=1, max_size=4))
    def upsert(self, keys):
        records = self._rows(keys)
        instant = self._write(records, "upsert")
        self.model.update({r[0]: r for r in records})
        self._committed(instant)

    @rule(data=st.data())
    def insert_new_keys(self, data):
        fresh = [k for k in KEYS if k not in self.model]
        if not fresh:
            return
        keys = data.draw(st.sets(st.sampled_from(fresh), min_size=1, max_size=3))
        records = self._rows(keys)
        instant = self._write(records, "insert")
        self.model.update({r[0]: r for r in records})
        self._committed(instant)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete(self, data):
        keys = data.draw(st.sets(st.sampled_from(sorted(self.model)), min_size=1, max_size=3))
        instant = self._write([self.model[k] for k in sorted(keys)], "delete")
        for k in keys:
            del self.model[k]
        self._committed(instant)

    @rule(partition=st.sampled_from(PARTITIONS), data=st.data())
    def insert_overwrite(self, partition, data):
        keys = data.draw(st.sets(st.sampled_from([k for k in KEYS if _part(k) == partition]), min_size=1,
                                 max_size=3))
        records = self._rows(keys)
        instant = self._write(records, "insert_overwrite")
        self.model = {k: v for k, v in self.model.items() if v[3] != partition}
        self.model.update({r[0]: r for r in records})
        self._committed(instant)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete_partition(self, data):
        partition = data.draw(st.sampled_from(sorted({v[3] for v in self.model.values()})))
        instant = pyhudi.delete_partitions(self.spark, self.path, [partition], self.options)
        self.model = {k: v for k, v in self.model.items() if v[3] != partition}
        self._committed(str(instant))

    @rule()
    def compact(self):
        if self.table_type == "MERGE_ON_READ":
            pyhudi.compact(self.spark, self.path)

    @rule(retained=st.integers(1, 3))
    def clean(self, retained):
        pyhudi.clean(self.spark, self.path, {"hoodie.cleaner.commits.retained": str(retained)})

    @rule()
    def rollback_latest(self):
        latest = self._latest_write()
        if len(self.history) < 2 or latest != self.history[-1][0] or latest in self.savepoints:
            return      # the latest commit is a compaction, or savepointed: not this rule's case
        assert pyhudi.rollback_to_instant(self.spark, self.path, latest)
        self.history.pop()
        self.model = dict(self.history[-1][1])

    @rule()
    def savepoint(self):
        latest = self._latest_write()
        if latest in self.savepoints or not self.history or latest != self.history[-1][0]:
            return
        assert pyhudi.create_savepoint(self.spark, self.path, latest) == latest
        self.savepoints[latest] = dict(self.model)

    @precondition(lambda self: self.savepoints)
    @rule()
    def restore_latest_savepoint(self):
        target = max(self.savepoints)
        assert pyhudi.restore_to_savepoint(self.spark, self.path, target)
        self.model = dict(self.savepoints[target])
        self.history = [h for h in self.history if h[0] <= target]

    # --- checks -----------------------------------------------------------------------------------------
    @invariant()
    def table_matches_model(self):
        if not self.history:
            return
        ours = rows(pyhudi.read(self.spark, self.path), COLUMNS)
        assert ours == sorted(self.model.values(), key=repr), (ours, self.model)
        timeline = HudiTable.load(self.path).timeline()
        assert sorted(self.savepoints) == [i.time for i in timeline.completed([SAVEPOINT])]

    def teardown(self):
        try:
            if self.history:
                theirs = rows(hudi_rs_read(self.path), COLUMNS) if self.model else []
                assert theirs == sorted(self.model.values(), key=repr), (theirs, self.model)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


class MergeOnReadModel(HudiTableModel):
    table_type = "MERGE_ON_READ"


_SETTINGS = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("machine", [HudiTableModel, MergeOnReadModel], ids=["cow", "mor"])
def test_table_follows_the_model(spark, machine):
    _SPARK["spark"] = spark
    machine.TestCase.settings = _SETTINGS
    machine.TestCase().runTest()
