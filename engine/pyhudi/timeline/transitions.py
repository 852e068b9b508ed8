"""Instant state transitions, the writer's side: requested -> inflight -> completed, each file published by
create-if-absent (a clash means another writer took the instant time)."""

from __future__ import annotations

from typing import Any

from pyhudi.errors import TimelineError, UnsupportedTableVersionError
from pyhudi.storage import Storage
from pyhudi.timeline.commit_metadata import commit_metadata_bytes
from pyhudi.timeline.active import timeline_layout
from pyhudi.timeline.instant import METAFOLDER, Instant, State

def _publish(storage: Storage, instant: Instant, content: bytes) -> None:
    if timeline_layout(storage).version != 1:
        raise UnsupportedTableVersionError(
            f"cannot start instant {instant} on table {storage.base_uri}: its timeline has layout 2 (table version "
            "8 or 9, Hudi 1.x), which pyhudi reads but does not write yet. Write it with Hudi 1.x, or downgrade it "
            "to version 6 with Hudi's `downgrade` CLI command.")
    # An inflight file only announces a state: recovery reads the requested plan, the markers and completed
    # files, so only those are made durable before their name appears.
    durable = instant.state != State.INFLIGHT
    if not storage.create_if_absent(f"{METAFOLDER}/{instant.file_name}", content, durable=durable):
        raise TimelineError(f"instant {instant} already exists in {storage.base_uri}/{METAFOLDER}; "
                            "another writer used the same instant time")


def create_requested(storage: Storage, instant_time: str, action: str, content: bytes = b"") -> Instant:
    instant = Instant(instant_time, action, State.REQUESTED)
    _publish(storage, instant, content)
    return instant


def transition_to_inflight(storage: Storage, requested: Instant, content: bytes = b"") -> Instant:
    instant = requested.with_state(State.INFLIGHT)
    _publish(storage, instant, content)
    return instant


def transition_to_completed(storage: Storage, inflight: Instant, metadata: dict[str, Any]) -> Instant:
    instant = inflight.with_state(State.COMPLETED)
    _publish(storage, instant, commit_metadata_bytes(metadata))
    return instant
