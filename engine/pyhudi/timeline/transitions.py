"""Instant state transitions, the writer's side: requested -> inflight -> completed, each file published by
create-if-absent (a clash means another writer took the instant time), in the table's timeline layout: layout 2
(Hudi 1.x) names a completed instant by its completion time too, and keeps commit metadata as Avro."""

from __future__ import annotations

from typing import Any

from pyhudi.errors import TimelineError
from pyhudi.storage import Storage
from pyhudi.timeline.active import current_settings
from pyhudi.timeline.commit_avro import commit_metadata_avro_bytes
from pyhudi.timeline.commit_metadata import commit_metadata_bytes
from pyhudi.timeline.instant import CLUSTERING, REPLACE_COMMIT, Instant, State
from pyhudi.timeline.instant_time import new_instant_time


def _publish(storage: Storage, instant: Instant, content: bytes) -> Instant:
    settings = current_settings(storage)
    if instant.is_completed and settings.layout.version == 2:
        # Layout 2 records when the instant completed: a new instant time, after its requested time.
        instant = Instant(instant.time, instant.action, State.COMPLETED,
                          new_instant_time(after=instant.time, zone=settings.zone))
    # An inflight file only announces a state: recovery reads the requested plan, the markers and completed
    # files, so only those are made durable before their name appears.
    durable = instant.state != State.INFLIGHT
    if not storage.create_if_absent(settings.layout.path(instant), content, durable=durable):
        raise TimelineError(f"instant {instant} already exists in {storage.base_uri}/{settings.layout.folder}; "
                            "another writer used the same instant time")
    return instant


def commit_content(storage: Storage, metadata: dict[str, Any], replace: bool = False) -> bytes:
    """Commit metadata as the table's layout stores it: JSON (layout 1) or Avro (layout 2: HoodieCommitMetadata,
    HoodieReplaceCommitMetadata in a completed replacecommit; Hudi 1.x's inflight replacecommit holds the former)."""
    if current_settings(storage).layout.version == 2:
        return commit_metadata_avro_bytes(metadata, replace)
    return commit_metadata_bytes(metadata)


def create_requested(storage: Storage, instant_time: str, action: str, content: bytes = b"") -> Instant:
    return _publish(storage, Instant(instant_time, action, State.REQUESTED), content)


def transition_to_inflight(storage: Storage, requested: Instant, content: bytes = b"") -> Instant:
    return _publish(storage, requested.with_state(State.INFLIGHT), content)


def complete_instant(storage: Storage, inflight: Instant, content: bytes) -> Instant:
    """inflight -> completed holding `content`: the last step, atomic (create-if-absent)."""
    return _publish(storage, inflight.with_state(State.COMPLETED), content)


def transition_to_completed(storage: Storage, inflight: Instant, metadata: dict[str, Any]) -> Instant:
    """inflight -> completed holding the commit metadata (commit_content)."""
    replace = inflight.action in (REPLACE_COMMIT, CLUSTERING)   # a clustering completes as a replacecommit
    return complete_instant(storage, inflight, commit_content(storage, metadata, replace))
