"""Hudi's record payload classes, by their Java names, as the rules pyhudi applies for them.

A payload decides two merges (hudi-common ``org.apache.hudi.common.model``):
- ``preCombine``: two incoming records of one key (a batch, or the records of a file slice's logs);
- ``combineAndGetUpdateValue``: an incoming record with the stored one (COW rewrite, MOR read, compaction).

Each payload is described here once, by what those two merges do; the vectorized rules in
:mod:`pyhudi.merge.rules` read these flags, so writes, reads and compaction cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyhudi import config as C
from pyhudi.errors import ConfigError

_PKG = "org.apache.hudi.common.model."
OVERWRITE_WITH_LATEST = _PKG + "OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = _PKG + "DefaultHoodieRecordPayload"
EVENT_TIME_PAYLOAD = _PKG + "EventTimeAvroPayload"
EMPTY_PAYLOAD = _PKG + "EmptyHoodieRecordPayload"
OVERWRITE_NON_DEFAULTS = _PKG + "OverwriteNonDefaultsWithLatestAvroPayload"
PARTIAL_UPDATE = _PKG + "PartialUpdateAvroPayload"
# Hudi's SQL strict insert mode / hoodie.datasource.insert.dup.policy=fail (hudi-spark's command package)
VALIDATE_DUPLICATE_KEY = "org.apache.spark.sql.hudi.command.ValidateDuplicateKeyPayload"

PAYLOAD_ORDERING_FIELD = C.PAYLOAD_ORDERING_FIELD.key
PAYLOAD_EVENT_TIME_FIELD = C.PAYLOAD_EVENT_TIME_FIELD.key


@dataclass(frozen=True)
class Payload:
    """What a payload class does (see the module docstring)."""

    name: str
    stored_can_win: bool = False     # combine: the stored record stays when its ordering value is greater
    fills_nulls: bool = False        # combine: null fields of the winner take the other record's value
    precombine_fills: bool = False   # preCombine: field-wise too (newer-by-ordering first), not winner-takes-all
    deletes_all: bool = False        # every record is a delete (EmptyHoodieRecordPayload)
    event_time: bool = False         # write stats carry min/maxEventTime of hoodie.payload.event.time.field
    rejects_stored: bool = False     # combine: a stored record of the key fails the write (a duplicate key)

    @property
    def short_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]


PAYLOADS = {p.name: p for p in (
    Payload(OVERWRITE_WITH_LATEST),
    Payload(DEFAULT_PAYLOAD, stored_can_win=True, event_time=True),
    Payload(EVENT_TIME_PAYLOAD, stored_can_win=True),
    Payload(EMPTY_PAYLOAD, deletes_all=True),
    Payload(OVERWRITE_NON_DEFAULTS, fills_nulls=True),
    Payload(PARTIAL_UPDATE, stored_can_win=True, fills_nulls=True, precombine_fills=True),
    Payload(VALIDATE_DUPLICATE_KEY, stored_can_win=True, event_time=True, rejects_stored=True),
)}
SUPPORTED_PAYLOADS = tuple(PAYLOADS)


def payload_of(name: str | Payload | None, option: str = C.PAYLOAD_CLASS.key) -> Payload:
    """The payload of a class name (None: OverwriteWithLatestAvroPayload); an unknown class is a ConfigError
    naming ``option`` and the supported classes."""
    if isinstance(name, Payload):
        return name
    if not name:
        return PAYLOADS[OVERWRITE_WITH_LATEST]
    found = PAYLOADS.get(name.strip())
    if found is None:
        raise ConfigError(f"{option}={name} is not supported; use one of {', '.join(SUPPORTED_PAYLOADS)}")
    return found
