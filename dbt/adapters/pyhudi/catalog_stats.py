"""Table statistics `dbt docs generate` shows for a Hudi table, from its metadata only (timeline and file
listing; no data file is opened): table type, record key, last commit, files and bytes of the latest snapshot."""

from __future__ import annotations

from typing import Any, Dict


def _stat(name: str, label: str, value: Any, description: str) -> Dict[str, Any]:
    return {f"stats:{name}:label": label, f"stats:{name}:value": value,
            f"stats:{name}:description": description, f"stats:{name}:include": True}


def hudi_table_stats(location: str) -> Dict[str, Any]:
    """dbt catalog stats (`stats:<id>:label/value/description/include`) of the Hudi table at `location`."""
    from pyhudi.table import HudiTable

    table = HudiTable.load(location)
    props = table.properties
    timeline = table.timeline()
    latest = timeline.latest_completed_write()
    slices = table.view(timeline=timeline).latest_slices()
    base_files = [s.base_file for s in slices if s.base_file is not None]
    log_files = [log for s in slices for log in s.log_files]
    size = sum(f.size for f in base_files) + sum(log.size for log in log_files)
    stats: Dict[str, Any] = {}
    stats.update(_stat("hudi_table_type", "Hudi table type", props.table_type, "hoodie.table.type"))
    stats.update(_stat("hudi_record_key", "Record key", ",".join(props.record_key_fields) or "(generated)",
                       "hoodie.table.recordkey.fields"))
    # "<instant> <action>": a text value (dbt's catalog would read a bare instant time as a float)
    stats.update(_stat("hudi_last_commit", "Last commit", f"{latest.time} {latest.action}" if latest else "(none)",
                       "the latest completed write instant on the timeline and its action"))
    stats.update(_stat("hudi_files", "Files", len(base_files) + len(log_files),
                       f"{len(base_files)} base and {len(log_files)} log files in the latest file slices"))
    stats.update(_stat("bytes", "Approximate size", size, "bytes of the latest file slices (base + log files)"))
    return stats
