"""The health report as one self-contained HTML page: summary, findings with fixes, and the charts inline."""

from __future__ import annotations

import html
from datetime import datetime, timezone

from pyhudi.report.charts import CHARTS
from pyhudi.report.findings import Finding, findings
from pyhudi.report.health import TableHealth

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1100px; }
h1 { font-size: 22px; margin-bottom: 4px; } .sub { color: #666; margin-top: 0; }
table.kv td { padding: 2px 14px 2px 0; } .error { color: #b00; font-weight: bold; } .warn { color: #b00; }
.info { color: #555; }
.finding { margin: 6px 0; } .fix { font-family: monospace; background: #f4f4f4; padding: 1px 4px; }
.chart { margin: 18px 0; } .chart svg { max-width: 100%; height: auto; }
"""


def summary_rows(h: TableHealth) -> list[tuple[str, str]]:
    """(label, value) pairs shown at the top of the page and by `pyhudi report`."""
    completed = [i for i in h.instants if i.state == "COMPLETED"]
    return [
        ("table", f"{h.name} ({h.table_type})"), ("path", h.path), ("record key", h.record_key or "(none)"),
        ("partitions", str(len(h.partitions))), ("file groups", str(len(h.groups))),
        ("active instants", f"{len(completed)} completed, {len(h.pending())} pending"),
        ("last commit", completed[-1].time if completed else "-"),
        ("snapshot size", f"{h.bytes_latest / 1048576:.1f} MiB"),
        ("on storage (all versions)", f"{h.bytes_on_disk / 1048576:.1f} MiB"),
        ("log files", f"{sum(g.log_files for g in h.groups)} ({sum(g.log_bytes for g in h.groups) / 1048576:.1f} MiB)"),
    ]


def _finding(f: Finding) -> str:
    return (f'<div class="finding {f.severity}"><b>{html.escape(f.severity)}</b>: {html.escape(f.what)}'
            f' &mdash; fix: <span class="fix">{html.escape(f.fix)}</span></div>')


def render_html(h: TableHealth, table: str | None = None) -> str:
    found = findings(h, table)
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in summary_rows(h))
    notes = "".join(_finding(f) for f in found) or '<div class="finding info">no findings: the table is healthy</div>'
    charts = "".join(f'<div class="chart" id="chart-{name}">{draw(h)}</div>' for name, draw in CHARTS)
    made = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Hudi table health: {html.escape(h.name)}"
            f"</title><style>{_STYLE}</style></head><body><h1>Hudi table health: {html.escape(h.name)}</h1>"
            f"<p class='sub'>pyhudi report, {made}</p><table class='kv'>{rows}</table>"
            f"<h2>Findings</h2>{notes}<h2>Charts</h2>{charts}</body></html>")
