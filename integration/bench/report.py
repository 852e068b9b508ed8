"""The benchmark's printed report: detailed markdown tables per case (big batch, small batch, scans) and the
summary table of issue 14 (| work | pyhudi | peer | ratio | goal | met? |), built from run_system's results."""

from __future__ import annotations

import statistics

# (alias, goal: pyhudi time <= goal x delta-rs MERGE) -- issue 14's targets, Hudi's default codec
BIG_GOALS = (("cow-bloom", 2.0), ("mor-bloom", 1.0), ("mor-bucket", 0.5))
SMALL_GOALS = (("mor-bloom", 1.0), ("mor-bucket", None), ("cow-bloom", None))
# (alias, goal: scan speed >= goal x spark.read.parquet of the same base files)
SCAN_GOALS = (("mor-bloom", 0.5), ("cow-bloom", 0.9))
SCALE_GOAL = ("mor-bloom", 1.2)      # upsert at --scale-rows <= 1.2x its time at --rows
RSS_FLAT = 1.2                       # "driver memory flat in table size": peak RSS at --scale-rows <= 1.2x


def _mb(value) -> str:
    return f"{value / 1e6:.1f}" if value else "-"


def _s(value) -> str:
    return f"{value:.2f} s" if value is not None else "-"


def _rows(n) -> str:
    return f"{n / 1e6:g}M" if n >= 1_000_000 else f"{n:,}"


# --- detailed tables ----------------------------------------------------------------------------------------------
def _opened(stats: dict):
    """Files whose keys the index read (pyhudi's IndexStats.candidate_files)."""
    return stats.get("candidate_files")


def _files(run: dict) -> str:
    parts = []
    if run.get("files_rewritten") is not None:
        parts.append(f"{run['files_rewritten']} rewritten")
    if run.get("log_files"):
        parts.append(f"{run['log_files']} logs")
    if run.get("files_added"):
        parts.append(f"{run['files_added']} new")
    opened = _opened(run.get("index_stats") or {})
    if opened is not None:
        parts.append(f"{opened} opened")
    return ", ".join(parts) or "-"


_INDEX_SHORT = {"files_considered": "considered", "files_pruned_by_range": "range-pruned",
                "files_pruned_by_bloom": "bloom-pruned", "candidate_files": "candidates",
                "confirmed_files": "confirmed", "false_positive_files": "false-pos", "keys_looked_up": "keys"}


def _index(run: dict) -> str:
    stats = run.get("index_stats") or {}
    return " ".join(f"{short} {stats[key]}" for key, short in _INDEX_SHORT.items() if stats.get(key)) or "-"


def _case(r: dict, case: str) -> dict | None:
    """The timed upsert case of one system's result: `big` (top level, as before) or `small`."""
    if "error" in r:
        return None
    if case == "big":
        return {"median_seconds": r.get("median_seconds"), "runs": r.get("runs") or []}
    return r.get(case)


def upsert_table(results: list[dict], title: str, case: str = "big") -> str:
    """One line per system: median, ratio to delta-rs, bytes and files written, write amplification (bytes written /
    Arrow bytes of the batch), index statistics, peak RSS, driver-only time and Spark jobs."""
    delta = next((_case(r, case) for r in results if r.get("alias") == "delta"), None)
    lines = [f"#### {title}", "",
             "| system | median s | × delta-rs | MB written | write amp | files | index stats | "
             "peak RSS MB py / JVM | driver-only s | Spark jobs |",
             "| --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['system']} | error: {r['error'][:80]} | | | | | | | | |")
            continue
        c = _case(r, case)
        timed = [x for x in (c or {}).get("runs", []) if not x.get("profile_run")]
        if not timed:
            continue
        ratio = f"{c['median_seconds'] / delta['median_seconds']:.2f}" if delta and delta.get("runs") else "-"
        rss_py = max(x["peak_rss_py"] or 0 for x in timed)
        rss_jvm = max(x["peak_rss_jvm"] or 0 for x in timed)
        spark = [x["spark"] for x in timed if x.get("spark")]
        driver_only = f"{statistics.median(s['driver_only'] for s in spark):.2f}" if spark else "-"
        jobs = f"{statistics.median(s['jobs'] for s in spark):.0f}" if spark else "-"
        amp = timed[0].get("write_amplification")
        lines.append(f"| {r['system']} | {c['median_seconds']:.2f} | {ratio} | {_mb(timed[0]['bytes_written'])} | "
                     f"{f'{amp:.1f}' if amp is not None else '-'} | {_files(timed[0])} | {_index(timed[0])} | "
                     f"{_mb(rss_py)} / {_mb(rss_jvm)} | {driver_only} | {jobs} |")
    return "\n".join(lines)


def scan_table(results: list[dict], title: str) -> str:
    """One line per system with a scan case: its median, the same-process parquet scan of its files, speed ratio,
    whether the sum is right, and how many rows the merge-on-read tables keep in log files."""
    lines = [f"#### {title}", "",
             "| system | median s | peer in the same process | peer median s | speed × peer | sum correct | "
             "rows in logs |",
             "| --- | ---: | --- | ---: | ---: | --- | ---: |"]
    for r in results:
        scan = r.get("scan")
        if "error" in r or not scan:
            continue
        peer = scan.get("peer") or {}
        speed = f"{peer['median_seconds'] / scan['median_seconds']:.2f}" if peer else "-"
        correct = "yes" if scan["correct"] and peer.get("correct") is not False else (
            f"NO: {scan['sum']} vs expected {scan['expected_sum']}" if not scan["correct"]
            else f"peer NO: {peer.get('sum')}")
        logs = scan.get("log_rows")
        peer_median = f"{peer['median_seconds']:.2f}" if peer else "-"
        lines.append(f"| {r['system']} | {scan['median_seconds']:.2f} | {peer.get('label', '-')} | {peer_median} | "
                     f"{speed} | {correct} | {f'{logs:,}' if logs is not None else '-'} |")
    return "\n".join(lines)


# --- the summary ------------------------------------------------------------------------------------------------
def summary_rows(results: list[dict], scale: list[dict], info: dict, small_info: dict | None) -> list[dict]:
    """Issue 14's lines: each a dict work, pyhudi, peer, ratio, goal, met (None: no goal) as printed, and values:
    the numbers behind pyhudi, peer and ratio (seconds or bytes) for the JSON."""
    by = {r["alias"]: r for r in results if "error" not in r}
    rows: list[dict] = []

    def upsert_rows(goals, case, label):
        delta = _case(by["delta"], case) if "delta" in by else None
        for alias, goal in goals:
            mine = _case(by[alias], case) if alias in by else None
            if not (mine and mine.get("median_seconds") is not None):
                continue
            ratio = (mine["median_seconds"] / delta["median_seconds"]
                     if delta and delta.get("median_seconds") else None)
            rows.append({"work": f"{by[alias]['system'][len('pyhudi '):]} upsert, {label}",
                         "values": [mine["median_seconds"], delta and delta.get("median_seconds"), ratio],
                         "pyhudi": _s(mine["median_seconds"]),
                         "peer": f"delta-rs MERGE {_s(delta['median_seconds'])}" if ratio is not None else "-",
                         "ratio": f"{ratio:.2f}×" if ratio is not None else "-",
                         "goal": f"≤ {goal}×" if goal is not None else "-",
                         "met": None if goal is None or ratio is None else ratio <= goal})

    batch = f"{info['updates'] + info['inserts']:,}-row batch"
    upsert_rows(BIG_GOALS, "big", batch)
    if small_info:
        upsert_rows(SMALL_GOALS, "small", f"{small_info['rows']:,}-row batch")
    for alias, goal in SCAN_GOALS:
        scan = by.get(alias, {}).get("scan")
        if not scan or not scan.get("peer"):
            continue
        peer = scan["peer"]
        speed = peer["median_seconds"] / scan["median_seconds"]
        correct = scan["correct"] and peer.get("correct") is not False
        in_logs = (f" ({scan['log_rows'] / scan['rows']:.1%} of rows in logs)"
                   if scan.get("log_rows") and scan.get("rows") else "")
        rows.append({"work": f"{by[alias]['system'][len('pyhudi '):]} snapshot scan{in_logs}, sum(fare)",
                     "values": [scan["median_seconds"], peer["median_seconds"], speed],
                     "pyhudi": _s(scan["median_seconds"]), "peer": f"{peer['label']} {_s(peer['median_seconds'])}",
                     "ratio": f"{speed:.2f}× speed" + ("" if correct else " (WRONG SUM)"),
                     "goal": f"≥ {goal}×", "met": speed >= goal and correct})
    alias, goal = SCALE_GOAL
    for big in scale:
        small = by.get(big.get("alias"))
        if "error" in big or not small or not small.get("runs") or not big.get("runs"):
            continue
        name = big["system"][len("pyhudi "):]
        if big["alias"] == alias:
            ratio = big["median_seconds"] / small["median_seconds"]
            rows.append({"work": f"{name} upsert at {_rows(big['rows'])} rows vs {_rows(small['rows'])}",
                         "values": [big["median_seconds"], small["median_seconds"], ratio],
                         "pyhudi": _s(big["median_seconds"]), "peer": f"{_s(small['median_seconds'])} at "
                                                                       f"{_rows(small['rows'])}",
                         "ratio": f"{ratio:.2f}×", "goal": f"≤ {goal}×", "met": ratio <= goal})
        rss_big = max(x["peak_rss_py"] or 0 for x in big["runs"])
        rss_small = max(x["peak_rss_py"] or 0 for x in small["runs"])
        ratio = rss_big / rss_small if rss_small else None
        rows.append({"work": f"Python driver peak RSS, {name} upsert, {_rows(big['rows'])} vs "
                             f"{_rows(small['rows'])} rows", "values": [rss_big, rss_small, ratio],
                     "pyhudi": f"{_mb(rss_big)} MB", "peer": f"{_mb(rss_small)} MB",
                     "ratio": f"{ratio:.2f}×" if ratio else "-", "goal": f"flat (≤ {RSS_FLAT}×)",
                     "met": ratio <= RSS_FLAT if ratio else None})
    return rows


def summary_table(rows: list[dict], title: str) -> str:
    lines = [f"#### {title}", "", "| work | pyhudi | peer | ratio | goal | met? |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for row in rows:
        met = "-" if row["met"] is None else ("yes" if row["met"] else "**no**")
        lines.append(f"| {row['work']} | {row['pyhudi']} | {row['peer']} | {row['ratio']} | {row['goal']} | {met} |")
    return "\n".join(lines)
