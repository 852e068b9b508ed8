"""Transitional: the Avro timeline schemas and codec moved to pyhudi.actions.avro_metadata (shared by every action).
Kept for services/compaction_plan.py until it imports pyhudi.actions.avro_metadata; then delete this file."""

from pyhudi.actions.avro_metadata import (INSTANT_INFO, RESTORE_METADATA, RESTORE_PLAN,  # noqa: F401
                                          ROLLBACK_METADATA, ROLLBACK_PLAN, SAVEPOINT_METADATA, from_bytes,
                                          to_bytes)
