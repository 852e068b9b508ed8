"""Table-service instants (clean, rollback, restore, savepoint) on the commit protocol, without Spark: Avro plan
in the requested file, resume of a pending instant, completion once and only once, no abort after completion."""

from __future__ import annotations

import pytest

from pyhudi.timeline import avro_record as avro
from pyhudi.commit.service_commit import ServiceInstantCommit
from pyhudi.errors import TimelineError
from pyhudi.storage import Storage
from pyhudi.timeline import RESTORE, ROLLBACK, Instant, State, Timeline

T = "20250101000000000"
PLAN = {"instantsToRollback": [{"commitTime": "20240101000000000", "action": "commit"}], "version": 2,
        "savepointToRestoreTimestamp": None}
METADATA = {"startRestoreTime": T, "timeTakenInMillis": 1, "instantsToRollback": ["20240101000000000"],
            "hoodieRestoreMetadata": {}, "version": 1, "restoreInstantInfo": PLAN["instantsToRollback"],
            "extraMetadata": None}


def _file(tmp_path, state):
    return tmp_path / ".hoodie" / Instant(T, RESTORE, state).file_name


def test_requested_inflight_completed_as_avro(tmp_path):
    storage = Storage(str(tmp_path))
    commit = ServiceInstantCommit.begin_plan(storage, T, RESTORE, avro.RESTORE_PLAN, PLAN)
    assert avro.from_bytes(_file(tmp_path, State.REQUESTED).read_bytes(), "plan") == PLAN
    commit.start_with(b"")
    assert _file(tmp_path, State.INFLIGHT).read_bytes() == b""
    commit.complete_with(avro.RESTORE_METADATA, METADATA)
    assert avro.from_bytes(_file(tmp_path, State.COMPLETED).read_bytes(), "metadata")["startRestoreTime"] == T
    assert Timeline.load(storage).find(T).state == State.COMPLETED
    assert commit.abort() is False                                 # published: nothing is undone
    assert _file(tmp_path, State.COMPLETED).exists() and _file(tmp_path, State.REQUESTED).exists()


def test_resume_continues_a_pending_instant_and_completes_once(tmp_path):
    storage = Storage(str(tmp_path))
    ServiceInstantCommit.begin_plan(storage, T, RESTORE, avro.RESTORE_PLAN, PLAN).start_with(b"")
    # A crash left the instant inflight; the timeline lists it, and the next run resumes it without a new inflight.
    pending = Timeline.load(storage).pending([RESTORE])
    assert [i.state for i in pending] == [State.INFLIGHT]
    resumed = ServiceInstantCommit.resume(storage, pending[0].with_state(State.REQUESTED))
    assert resumed.inflight is not None
    resumed.start_with(b"")                                        # no-op: already inflight
    resumed.complete_with(avro.RESTORE_METADATA, METADATA)
    again = ServiceInstantCommit.resume(storage, Instant(T, RESTORE, State.INFLIGHT))
    with pytest.raises(TimelineError, match="completed by another writer"):
        again.complete_with(avro.RESTORE_METADATA, METADATA)


def test_complete_before_start_is_a_programming_error(tmp_path):
    commit = ServiceInstantCommit.begin_plan(Storage(str(tmp_path)), T, ROLLBACK)
    with pytest.raises(RuntimeError, match="never started"):
        commit.complete_with(avro.ROLLBACK_METADATA, {})
