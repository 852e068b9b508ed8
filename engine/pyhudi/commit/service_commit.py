"""The commit protocol (instant_commit.py) for table-service instants whose plan and metadata are Avro: clean, rollback,
restore and savepoint. Same steps and guarantees as every other action (requested -> inflight -> completed by
create-if-absent, nothing undone once completed); what differs is only the content: Hudi writes these instants'
inflight and completed files as Avro records (timeline/avro_record.py), not commit JSON. They write no data files
under markers, so there is nothing to reconcile.

A clean, rollback or restore a crash interrupted is not aborted: the next run `resume`s it from its requested plan
(all its steps are idempotent), as Hudi re-executes pending table services.
"""

from __future__ import annotations

from pyhudi.timeline import avro_record as avro
from pyhudi.commit.instant_commit import InstantCommit
from pyhudi.errors import TimelineError
from pyhudi.storage import Storage
from pyhudi.commit.metadata_table import MetadataTableOptions, sync_metadata_table
from pyhudi.timeline import Instant, State, complete_instant, instant_file, transition_to_inflight


class ServiceInstantCommit(InstantCommit):
    @classmethod
    def begin_plan(cls, storage: Storage, instant_time: str, action: str, schema: dict | None = None,
                   plan: dict | None = None,
                   metadata_options: MetadataTableOptions | None = None) -> "ServiceInstantCommit":
        """Create the requested instant holding the Avro `plan` (empty without a schema)."""
        content = avro.to_bytes(schema, plan) if schema is not None else b""
        return cls.begin(storage, instant_time, action, content, metadata_options)

    @classmethod
    def resume(cls, storage: Storage, instant: Instant,
               metadata_options: MetadataTableOptions | None = None) -> "ServiceInstantCommit":
        """The protocol of a pending instant found on the timeline (requested or inflight)."""
        commit = cls(storage, instant.with_state(State.REQUESTED), metadata_options=metadata_options)
        inflight = instant.with_state(State.INFLIGHT)
        if instant.state == State.INFLIGHT or storage.exists(instant_file(storage, inflight)):
            commit.inflight = inflight
        return commit

    def start_with(self, content: bytes = b"") -> Instant:
        """requested -> inflight; Hudi copies the plan into a clean's inflight file, other services leave it empty."""
        if self.inflight is None:
            self.inflight = transition_to_inflight(self.storage, self.requested, content)
        return self.inflight

    def complete_with(self, schema: dict, metadata: dict) -> Instant:
        """inflight -> completed, holding the Avro `metadata` record: the last step, atomic (create-if-absent)."""
        if self.inflight is None:
            raise RuntimeError(f"{self.where} was never started")   # a programming error, not bad input
        # never completed while a metadata table it did not update is named
        sync_metadata_table(self.storage, self.inflight, metadata, self.metadata_options)
        try:
            self.completed = complete_instant(self.storage, self.inflight, avro.to_bytes(schema, metadata))
        except TimelineError:
            raise TimelineError(f"{self.where} was completed by another writer") from None
        return self.completed
