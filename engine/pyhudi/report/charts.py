"""The health report's charts, drawn with matplotlib as inline SVG.

Why matplotlib: it is the best-kept plotting library in Python, draws without a browser or a server, and its SVG
embeds in the page as plain markup — the report is one self-contained file that opens offline, with no
JavaScript bundle (plotly would add ~3.5 MB of script to every report). `Figure` objects are used directly (no
pyplot), so charts can be drawn from several threads.
"""

from __future__ import annotations

import io
from collections import Counter

import matplotlib
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure

from pyhudi.report.health import TableHealth, instant_moment

MAX_BARS = 30                 # partitions / file groups shown per chart (the largest)
_PENDING, _DONE = "#d62728", "#1f77b4"


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]          # drop the XML prolog: the SVG is inlined in HTML


def _figure(width: float = 7.5, height: float = 3.0):
    fig = Figure(figsize=(width, height))
    return fig, fig.add_subplot()


def _mib(n: float) -> float:
    return n / 1048576


def _empty(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#666")
    ax.set_xticks([])
    ax.set_yticks([])


def timeline_chart(h: TableHealth) -> str:
    fig, ax = _figure()
    actions = sorted({i.action for i in h.instants})
    for state, color in (("COMPLETED", _DONE), ("PENDING", _PENDING)):
        chosen = [i for i in h.instants if (i.state == "COMPLETED") == (state == "COMPLETED")]
        if chosen:
            ax.scatter([instant_moment(i.time) for i in chosen], [actions.index(i.action) for i in chosen],
                       color=color, label=state.lower(), s=28, zorder=3)
    if not h.instants:
        _empty(ax, "no instants on the active timeline")
    else:
        ax.set_yticks(range(len(actions)), actions)
        ax.legend(loc="upper left", fontsize=8)
        locator = AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
        ax.set_ylim(-0.7, len(actions) - 0.3)
    ax.set_title("Timeline: instants by action (red: requested or inflight)")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def file_size_chart(h: TableHealth) -> str:
    fig, ax = _figure(height=3.4)
    sizes = h.partition_bytes()
    partitions = sorted(sizes, key=sizes.get, reverse=True)[:MAX_BARS]
    for x, partition in enumerate(partitions):
        files = [_mib(g.base_size) for g in h.groups if g.partition == partition and g.base_size]
        ax.scatter([x] * len(files), files, color=_DONE, s=18, alpha=0.8, zorder=3)
    if not partitions:
        _empty(ax, "no base files")
    else:
        ax.axhline(_mib(h.settings["max_file_size"]), color="#2ca02c", linestyle="--",
                   label=f"hoodie.parquet.max.file.size {_mib(h.settings['max_file_size']):.0f} MiB")
        ax.axhline(_mib(h.settings["small_file_limit"]), color="#ff7f0e", linestyle=":",
                   label=f"hoodie.parquet.small.file.limit {_mib(h.settings['small_file_limit']):.0f} MiB")
        ax.set_xticks(range(len(partitions)), [p or "(table)" for p in partitions], rotation=60, ha="right",
                      fontsize=7)
        smallest = min((g.base_size for g in h.groups if g.base_size), default=1048576)
        ax.set_yscale("log")
        ax.set_ylim(_mib(smallest) / 3, _mib(h.settings["max_file_size"]) * 3)
        ax.legend(fontsize=7, loc="upper right")
    ax.set_ylabel("MiB")
    ax.set_title("Base file sizes per partition (latest slices)")
    return _svg(fig)


def log_backlog_chart(h: TableHealth) -> str:
    fig, ax = _figure()
    groups = sorted((g for g in h.groups if g.log_files), key=lambda g: g.log_files, reverse=True)[:MAX_BARS]
    if not h.is_mor:
        _empty(ax, "copy-on-write: no log files")
    elif not groups:
        _empty(ax, "no log files since the last compaction")
    else:
        ax.bar(range(len(groups)), [g.log_files for g in groups], color=_DONE, width=0.6)
        ax.set_xlim(-0.7, max(len(groups), 8) - 0.3)
        ax.axhline(h.settings["compact_max_delta_commits"], color=_PENDING, linestyle="--",
                   label=f"hoodie.compact.inline.max.delta.commits = {h.settings['compact_max_delta_commits']}")
        ax.set_xticks(range(len(groups)), [f"{g.partition}/{g.file_id[:8]}" if g.partition else g.file_id[:8]
                                           for g in groups], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("log files")
        ax.legend(fontsize=7)
    ax.set_title("Log backlog per file group (log files since its last compaction)")
    return _svg(fig)


def partition_chart(h: TableHealth) -> str:
    fig, ax = _figure()
    sizes = h.partition_bytes()
    partitions = sorted(sizes, key=sizes.get, reverse=True)[:MAX_BARS]
    if not partitions:
        _empty(ax, "no partitions")
    else:
        ax.bar(range(len(partitions)), [_mib(sizes[p]) for p in partitions], color=_DONE, width=0.6)
        ax.set_xlim(-0.7, max(len(partitions), 8) - 0.3)
        ax.set_xticks(range(len(partitions)), [p or "(table)" for p in partitions], rotation=60, ha="right",
                      fontsize=7)
        ax.set_ylabel("MiB")
    ax.set_title("Partition skew: bytes per partition (largest first)")
    return _svg(fig)


def commit_chart(h: TableHealth) -> str:
    fig, ax = _figure()
    commits = h.commits[-60:]
    if not commits:
        _empty(ax, "no completed writes")
    else:
        ax.bar(range(len(commits)), [_mib(c.bytes_written) for c in commits], color=_DONE, width=0.6)
        ax.set_xlim(-0.7, max(len(commits), 8) - 0.3)
        ax.set_ylabel("MiB written")
        ax.set_xticks(range(len(commits)), [f"{c.time[8:14]} {c.action[:6]}" for c in commits], rotation=60,
                      ha="right", fontsize=6)
        amplification = ax.twinx()
        amplification.plot(range(len(commits)), [c.write_amplification or float("nan") for c in commits], color=_PENDING,
                           marker="o", markersize=3, label="write amplification")
        amplification.set_ylabel("records written / changed")
        counts = Counter(c.action for c in commits)
        ax.set_xlabel(", ".join(f"{n} {a}" for a, n in sorted(counts.items())), fontsize=7)
    ax.set_title("Bytes written per commit, and write amplification (red)")
    return _svg(fig)


def storage_chart(h: TableHealth) -> str:
    fig, ax = _figure(height=1.4)
    latest, old, reclaim = _mib(h.bytes_latest), _mib(h.bytes_old_versions), _mib(h.reclaimable_bytes)
    ax.barh([0], [latest], color=_DONE, label=f"latest slices {latest:.1f} MiB")
    ax.barh([0], [old - reclaim], left=[latest], color="#aec7e8", label=f"older versions kept {old - reclaim:.1f} MiB")
    ax.barh([0], [reclaim], left=[latest + old - reclaim], color=_PENDING,
            label=f"reclaimable by a clean now {reclaim:.1f} MiB")
    ax.set_yticks([])
    ax.set_xlabel("MiB on storage")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title("Storage held by old versions")
    return _svg(fig)


CHARTS = (("timeline", timeline_chart), ("file-sizes", file_size_chart), ("log-backlog", log_backlog_chart),
          ("partition-skew", partition_chart), ("commits", commit_chart), ("storage", storage_chart))
