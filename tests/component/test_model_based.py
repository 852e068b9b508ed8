"""Model-based test: random sequences of writes and table services on copy-on-write and merge-on-read tables,
checked after every step against an in-memory model of the table (record key -> row).

Operations: upsert, insert, delete, insert_overwrite, delete_partition, compaction (merge-on-read), clean,
archive, rollback of the latest commit, savepoint, savepoint deletion and restore, and two concurrent writers
under optimistic concurrency control (threads sharing the session, disjoint keys): each commits or fails with
WriteConflictError, and a failed one leaves the table as if it never ran. Accepted refusals, as Hudi's: a rollback
whose files the cleaner removed, and a savepoint of a commit older than the latest clean's earliest commit to retain
(possible only after a rollback or restore removed the newer commit that clean retained). Every write also runs
the automatic clean (1 commit retained) and archive (2..3 commits kept), so services interleave with everything.
At the end of each sequence hudi-rs reads the same rows and no stray, missing or pending file or instant is left.

CI runs a short profile. PYHUDI_LONG_TESTS=1 runs the long one: 250 sequences per table type (500 in all) of 10
steps, without shrinking (a failure prints its whole sequence). PYHUDI_MODEL_EXAMPLES / PYHUDI_MODEL_STEPS override
either; PYHUDI_MODEL_LOG names a file that gets one line per finished sequence (progress of a long run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import time

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import pyhudi
from file_audit import CLEAN, leftovers
from pyhudi.errors import TimelineError, WriteConflictError
from pyhudi.services.rollback import RollbackError
from pyhudi.table import HudiTable
from pyhudi.timeline import SAVEPOINT
from support import hudi_rs_read, rows

LONG = os.environ.get("PYHUDI_LONG_TESTS") == "1"
EXAMPLES = int(os.environ.get("PYHUDI_MODEL_EXAMPLES", "250" if LONG else "2"))
STEPS = int(os.environ.get("PYHUDI_MODEL_STEPS", "10" if LONG else "5"))
LOG = os.environ.get("PYHUDI_MODEL_LOG")
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.wait_time_ms": "60000",
       "hoodie.write.lock.wait_time_ms_between_retry": "50"}
OUTCOMES: dict[str, int] = {}   # how often each accepted non-success outcome happened (reported by the test)
KEYS = list(range(8))
PARTITIONS = ["p0", "p1"]
COLUMNS = ["id", "name", "ts", "part"]
_SPARK = {}


# Draws whose shape never depends on the table's state: the state is not a function of the draws (concurrent
# writers may or may not conflict), and hypothesis refuses a choice whose bounds change between runs of the same
# draws (FlakyStrategyDefinition). So rules draw positions and map them onto the current state (_pick), and no rule
# has a state-dependent precondition (the rule chooser would then draw from a state-sized list).
PICK = st.integers(0, len(KEYS) - 1)
PICKS = st.sets(PICK, min_size=1, max_size=3)


def _part(key: int) -> str:
    return PARTITIONS[key % len(PARTITIONS)]


def _pick(candidates: list, picks: set[int]) -> set:
    """The candidates at the drawn positions (modulo their number); empty when there are none."""
    return {candidates[i % len(candidates)] for i in picks} if candidates else set()


def _count(outcome: str, n: int = 1) -> None:
    OUTCOMES[outcome] = OUTCOMES.get(outcome, 0) + n


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
        self.undone: set[str] = set()                 # completed instants a rollback or restore removed
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

    def _write(self, records, operation: str, extra: dict | None = None) -> str:
        df = self.spark.createDataFrame(records, "id long, name string, ts long, part string")
        options = {**self.options, **(extra or {}), "hoodie.datasource.write.operation": operation}
        return str(pyhudi.write(df, self.path, options))

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

    @rule(picks=PICKS)
    def insert_new_keys(self, picks):
        keys = _pick([k for k in KEYS if k not in self.model], picks)
        if not keys:
            return
        records = self._rows(keys)
        instant = self._write(records, "insert")
        self.model.update({r[0]: r for r in records})
        self._committed(instant)

    @rule(picks=PICKS)
    def delete(self, picks):
        keys = _pick(sorted(self.model), picks)
        if not keys:
            return
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

    @rule(pick=PICK)
    def delete_partition(self, pick):
        present = sorted({v[3] for v in self.model.values()})
        if not present:
            return
        partition = present[pick % len(present)]
        instant = pyhudi.delete_partitions(self.spark, self.path, [partition], self.options).instant_time
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
        try:
            assert pyhudi.rollback_to_instant(self.spark, self.path, latest)
        except RollbackError as exc:
            if "archived" in str(exc):   # the only commit left on the active timeline (readers lose the rest)
                _count("rollbacks refused (last commit on the active timeline)")
                return
            assert "clean" in str(exc).lower(), exc   # Hudi refuses when the cleaner removed the files it needs
            _count("rollbacks refused")
            return
        self.undone.add(latest)
        self.history.pop()
        self.model = dict(self.history[-1][1])

    @rule()
    def savepoint(self):
        latest = self._latest_write()
        if latest in self.savepoints or not self.history or latest != self.history[-1][0]:
            return
        try:
            assert pyhudi.create_savepoint(self.spark, self.path, latest).time == str(latest)
        except TimelineError as exc:
            # Hudi's rule (SavepointActionExecutor): refused when older than the latest clean's earliest commit to
            # retain. That commit was completed when the clean ran and is newer than every commit left, so it must
            # be one a rollback or restore removed since.
            window = re.search(r"lookup window (\d+)", str(exc))
            assert window and window.group(1) in self.undone and window.group(1) > latest, (exc, self.undone)
            _count("savepoints refused (older than the last clean's retained commit)")
            return
        self.savepoints[latest] = dict(self.model)

    @rule(pick=PICK)
    def restore_any_savepoint(self, pick):
        if not self.savepoints:
            return
        target = sorted(self.savepoints)[pick % len(self.savepoints)]
        writes = HudiTable.load(self.path).timeline().completed_writes()
        assert pyhudi.restore_to_savepoint(self.spark, self.path, target)
        self.undone.update(i.time for i in writes if i.time > target)
        self.model = dict(self.savepoints[target])
        self.history = [h for h in self.history if h[0] <= target]
        self.savepoints = {t: m for t, m in self.savepoints.items() if t <= target}

    @rule(pick=PICK)
    def delete_savepoint(self, pick):
        if not self.savepoints:
            return
        target = sorted(self.savepoints)[pick % len(self.savepoints)]
        pyhudi.delete_savepoint(self.spark, self.path, target)
        del self.savepoints[target]

    @rule()
    def archive(self):
        pyhudi.archive(self.spark, self.path, {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
                                               "hoodie.cleaner.commits.retained": "1"})

    @rule(data=st.data())
    def concurrent_writers(self, data):
        """Two OCC writers at once on disjoint keys: each commits or raises WriteConflictError."""
        first = data.draw(st.sets(st.sampled_from(KEYS), min_size=1, max_size=3))
        second = data.draw(st.sets(st.sampled_from([k for k in KEYS if k not in first]), min_size=1, max_size=3))
        batches = [self._rows(first), self._rows(second)]
        outcomes: list = [None, None]

        def writer(index):
            try:
                outcomes[index] = self._write(batches[index], "upsert", OCC)
            except WriteConflictError as exc:
                outcomes[index] = exc
            except BaseException as exc:  # noqa: BLE001 - re-raised below, in the test's thread
                outcomes[index] = ("error", exc)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for outcome in outcomes:
            if isinstance(outcome, tuple):
                raise outcome[1]
        committed = sorted((outcome, batch) for outcome, batch in zip(outcomes, batches) if isinstance(outcome, str))
        _count("write conflicts", 2 - len(committed))
        for instant, batch in committed:
            self.model.update({r[0]: r for r in batch})
            self._committed(instant)

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
        outcome = "failed"
        try:
            if self.history:
                theirs = rows(hudi_rs_read(self.path), COLUMNS) if self.model else []
                assert theirs == sorted(self.model.values(), key=repr), (theirs, self.model)
                assert leftovers(self.path) == CLEAN
            outcome = "ok"
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            OUTCOMES["sequences"] = OUTCOMES.get("sequences", 0) + 1
            if LOG:
                with open(LOG, "a") as log:
                    log.write(json.dumps({"time": time.strftime("%H:%M:%S"), "table": self.table_type,
                                          "final checks": outcome, "writes": len(self.history)}) + "\n")


class MergeOnReadModel(HudiTableModel):
    table_type = "MERGE_ON_READ"


_SETTINGS = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck),
                     phases=[Phase.explicit, Phase.generate] if LONG else list(Phase))


@pytest.mark.parametrize("machine", [HudiTableModel, MergeOnReadModel], ids=["cow", "mor"])
def test_table_follows_the_model(spark, machine):
    _SPARK["spark"] = spark
    machine.TestCase.settings = _SETTINGS
    OUTCOMES.clear()
    started = time.monotonic()
    try:
        machine.TestCase().runTest()
    finally:
        print(f"model-based {machine.table_type}: {OUTCOMES} in {time.monotonic() - started:.0f} s")


def test_savepoint_after_a_clean_and_a_rollback_replays(spark):
    """The long run's COW finding, replayed without hypothesis: the clean after the third write retains that write
    and deletes the first one's files; that write is rolled back; savepointing the now latest write (older than
    the clean's earliest commit to retain) is refused, as Hudi's SavepointActionExecutor refuses it."""
    _SPARK["spark"] = spark
    machine = HudiTableModel()
    try:
        machine.create({1})
        machine.upsert({1})
        machine.upsert({1})
        machine.rollback_latest()
        assert len(machine.history) == 2, "the rollback must have happened for this replay to mean anything"
        machine.savepoint()
        machine.table_matches_model()
    finally:
        machine.teardown()
