"""The documentation: README.md stays a short front door, docs/configuration.md is the config registry's output,
tables stay readable, no link leaves the repository, and architecture.md's layer list is pyproject.toml's contract.
No Spark."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:   # Python 3.10: mypy's dependency tomli is the same parser
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)[^)]*\)")


def _outside_fences(text: str) -> list[str]:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def test_configuration_page_is_generated():
    render = runpy.run_path(str(DOCS / "gen_config.py"), run_name="gen_config")["render"]
    assert (DOCS / "configuration.md").read_text(encoding="utf-8") == render(), \
        "docs/configuration.md is stale: run .venv/bin/python docs/gen_config.py"


def test_readme_is_short():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= 10_500, f"README.md is {size} bytes; move detail into docs/"


def test_table_cells_are_short():
    long_cells = []
    for page in PAGES:
        for line in _outside_fences(page.read_text(encoding="utf-8")):
            if line.lstrip().startswith("|"):
                long_cells += [f"{page.name}: {cell.strip()[:60]}..." for cell in re.split(r"(?<!\\)\|", line)
                               if len(cell.strip()) > 200]
    assert not long_cells, "table cells over 200 characters (use a list under the table):\n" + "\n".join(long_cells)


def test_no_link_leaves_the_repository():
    bad = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        bad += [f"{page.name}: mentions {word}" for word in ("../shared", "/work/") if word in text]
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:|#", target):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                bad.append(f"{page.name}: link to {target}")
    assert not bad, "\n".join(bad)


def test_architecture_lists_the_contract_layers():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    block = text.split("<!-- layers:begin -->")[1].split("<!-- layers:end -->")[0]
    documented = re.findall(r"^- `([^`]+)`", block, flags=re.M)
    assert documented == layers, "docs/architecture.md's layer list differs from pyproject.toml's layers contract"


def test_contributing_lists_every_fault_point():
    points = set()
    for source in (ROOT / "engine").rglob("*.py"):
        points |= set(re.findall(r"(?:crash_point|task_failure_point)\(\"([^\"]+)\"\)", source.read_text()))
    missing = sorted(p for p in points if f"`{p}`" not in (DOCS / "contributing.md").read_text(encoding="utf-8"))
    assert not missing, f"fault points missing from docs/contributing.md: {missing}"
