"""Hudi's compaction statements, as its SQL grammar (HoodieSqlCommon.g4) has them, run as the procedures they
stand for:

    RUN COMPACTION ON <table> | '<path>' [AT <instant>]        -> CALL run_compaction(op => 'run', ...)
    SCHEDULE COMPACTION ON <table> | '<path>' [AT <instant>]   -> CALL run_compaction(op => 'schedule', ...)
    SHOW COMPACTION ON <table> | '<path>' [LIMIT <n>]          -> CALL show_compaction(...)
"""

from __future__ import annotations

import re

_STATEMENT = re.compile(
    r"^\s*(?P<verb>run|schedule|show)\s+compaction\s+on\s+(?:'(?P<path>[^']*)'|(?P<table>[\w.`]+))"
    r"(?:\s+at\s+(?P<at>\d+))?(?:\s+limit\s+(?P<limit>\d+))?\s*;?\s*$", re.IGNORECASE)


def as_call(text: str) -> str | None:
    """The CALL a compaction statement stands for (its argument list), or None when `text` is not one."""
    m = _STATEMENT.match(text)
    if m is None or (m.group("at") and m.group("verb").lower() == "show") or \
            (m.group("limit") and m.group("verb").lower() != "show"):
        return None
    target = f"path => '{m.group('path')}'" if m.group("path") is not None else \
        f"table => '{m.group('table').replace('`', '')}'"
    verb = m.group("verb").lower()
    if verb == "show":
        limit = f", limit => {m.group('limit')}" if m.group("limit") else ""
        return f"show_compaction({target}{limit})"
    at = f", timestamp => {m.group('at')}" if m.group("at") else ""
    return f"run_compaction(op => '{verb}', {target}{at})"
