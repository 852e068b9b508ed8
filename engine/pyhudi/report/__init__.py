"""Table health report (`pyhudi report PATH --html out.html`, `CALL show_table_health(table => 't')`): a table's
state from its metadata, findings with fixes in Hudi's words, and charts in one self-contained HTML page."""

from pyhudi.report.findings import Finding, findings
from pyhudi.report.health import TableHealth, table_health
from pyhudi.report.page import render_html, summary_rows

__all__ = ["Finding", "TableHealth", "findings", "render_html", "summary_rows", "table_health"]
