"""Upsert benchmark: pyhudi against delta-rs merge, pyiceberg upsert and a plain Spark parquet rewrite.

    .venv/bin/python integration/bench/run.py [--rows 2000000] [--runs 3] [--keys time|uuid|both]
        [--systems delta,iceberg,spark,cow-bloom,cow-simple,mor-bloom,mor-bucket] [--scale-rows 20000000]
        [--codec snappy|gzip] [--profile] [--quick] [--out DIR]

Data is generated once (fixed seed) as parquet that every system reads. Each system runs in its own Python
process (so peak memory is its own): it builds its base table (untimed), then per run restores the base table,
and times only the upsert of the batch (Spark session start excluded). The table printed at the end has the
median of the runs and the ratio to delta-rs; the JSON with every run lands in --out.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import data as bench_data  # noqa: E402
import measure  # noqa: E402
from systems import ALIASES, SYSTEMS  # noqa: E402

DEFAULT_SYSTEMS = list(ALIASES)


# --- one system, in this process ------------------------------------------------------------------------------
def start_spark(work: str, cores: int = 2):
    import pyhudi
    spark = pyhudi.session(master=f"local[{cores}]", warehouse_dir=os.path.join(work, "warehouse"), hive=False,
                           **{"spark.driver.memory": "4g"})
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_system(alias: str, data: str, work: str, runs: int, spark=None, profile: bool = False) -> dict:
    """Build the base table of one system, then time `runs` upserts, each from the same base state."""
    system = SYSTEMS[ALIASES.get(alias, alias)]
    path = os.path.join(work, alias, "table")
    pristine = os.path.join(work, alias, "base")
    shutil.rmtree(os.path.join(work, alias), ignore_errors=True)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    t0 = time.perf_counter()
    system.setup(spark, data, path)
    setup_seconds = time.perf_counter() - t0
    shutil.copytree(path, pristine, symlinks=True)
    jvm = measure.jvm_pid(spark) if spark is not None else None
    undo = measure.label_collects(spark) if spark is not None and system.name.startswith("pyhudi") else None
    results = []
    try:
        for run in range(runs + (1 if profile else 0)):
            if run:
                shutil.rmtree(path)
                shutil.copytree(pristine, path, symlinks=True)
            before = measure.snapshot(path)
            system.reset()
            gc.collect()
            measure.reset_peak_rss()
            if jvm:
                measure.reset_peak_rss(jvm)
            jobs = measure.SparkJobs(spark) if spark is not None else None
            if jobs:
                jobs.start()
            profiler = None
            if profile and run == runs:
                import cProfile
                profiler = cProfile.Profile()
                profiler.enable()
            t0 = time.perf_counter()
            detail = system.upsert(spark, data, path)
            seconds = time.perf_counter() - t0
            if profiler:
                profiler.disable()
            written, files = measure.written_since(before, path)
            result = {"seconds": round(seconds, 3), "bytes_written": written, "files_written": files,
                      "peak_rss_py": measure.peak_rss(), "peak_rss_jvm": measure.peak_rss(jvm) if jvm else None,
                      **detail}
            if jobs:
                spark_jobs = jobs.stop()
                result["spark"] = jobs.summary(spark_jobs)
                if profiler:
                    result["spark_jobs"] = spark_jobs
                    result["driver_profile"] = _top_functions(profiler)
            if profiler:
                result["profile_run"] = True
            results.append(result)
        rows_after = system.count(spark, path)
    finally:
        if undo:
            undo()
    timed = [r for r in results if not r.get("profile_run")]
    return {"system": system.name, "alias": alias, "setup_seconds": round(setup_seconds, 1),
            "median_seconds": statistics.median(r["seconds"] for r in timed), "runs": results,
            "rows_after": rows_after}


def _top_functions(profiler, limit: int = 25) -> list[str]:
    """Driver-side hot spots (cumulative time), pyhudi's own functions first."""
    import pstats
    stats = pstats.Stats(profiler)
    rows = []
    for (filename, line, func), (_, calls, _, cumulative, _) in stats.stats.items():
        if "pyhudi" in filename or "integration/bench" in filename:
            rows.append((cumulative, f"{cumulative:7.2f}s {calls:6d}x {os.path.basename(filename)}:{line} {func}"))
    return [text for _, text in sorted(rows, reverse=True)[:limit]]


def worker(args) -> None:
    import systems
    systems.HUDI_CODEC = args.codec
    system = SYSTEMS[ALIASES.get(args.worker, args.worker)]
    spark = start_spark(args.work) if system.spark else None
    try:
        result = run_system(args.worker, args.data, args.work, args.runs, spark, args.profile)
    finally:
        if spark is not None:
            spark.stop()
    with open(args.result, "w") as f:
        json.dump(result, f, indent=1)


# --- the whole benchmark --------------------------------------------------------------------------------------
def run_in_subprocess(alias: str, data: str, work: str, runs: int, profile: bool, timeout: int,
                      codec: str = "snappy") -> dict:
    result_file = os.path.join(work, f"{alias}.json")
    command = [sys.executable, os.path.abspath(__file__), "--worker", alias, "--data", data, "--work", work,
               "--runs", str(runs), "--result", result_file, "--codec", codec] + (["--profile"] if profile else [])
    print(f"  {alias} ...", end="", flush=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f" timed out after {timeout}s")
        return {"system": SYSTEMS[ALIASES[alias]].name, "alias": alias, "error": f"timed out after {timeout}s"}
    if proc.returncode != 0 or not os.path.exists(result_file):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-12:]
        print(" failed:\n    " + "\n    ".join(tail))
        return {"system": SYSTEMS[ALIASES[alias]].name, "alias": alias, "error": tail[-1] if tail else "failed"}
    with open(result_file) as f:
        result = json.load(f)
    print(f" median {result['median_seconds']:.2f}s ({time.perf_counter() - t0:.0f}s with setup)")
    shutil.rmtree(os.path.join(work, alias), ignore_errors=True)
    return result


def _mb(value) -> str:
    return f"{value / 1e6:.1f}" if value else "-"


def _files(r: dict) -> str:
    run = r["runs"][0]
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


def _opened(stats: dict):
    """Files whose keys the index read (pyhudi's IndexStats.candidate_files)."""
    return stats.get("candidate_files")


_INDEX_SHORT = {"files_considered": "considered", "files_pruned_by_range": "range-pruned",
                "files_pruned_by_bloom": "bloom-pruned", "candidate_files": "candidates",
                "confirmed_files": "confirmed", "false_positive_files": "false-pos", "keys_looked_up": "keys"}


def _index(r: dict) -> str:
    stats = r["runs"][0].get("index_stats") or {}
    return " ".join(f"{short} {stats[key]}" for key, short in _INDEX_SHORT.items() if stats.get(key)) or "-"


def table(results: list[dict], title: str) -> str:
    delta = next((r for r in results if r.get("alias") == "delta" and "error" not in r), None)
    lines = [f"#### {title}", "",
             "| system | median s | × delta-rs | MB written | files | index stats | peak RSS MB py / JVM | driver-only s | Spark jobs |",
             "| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['system']} | error: {r['error'][:80]} | | | | | | | |")
            continue
        timed = [x for x in r["runs"] if not x.get("profile_run")]
        ratio = f"{r['median_seconds'] / delta['median_seconds']:.2f}" if delta else "-"
        rss_py = max(x["peak_rss_py"] or 0 for x in timed)
        rss_jvm = max(x["peak_rss_jvm"] or 0 for x in timed)
        spark = [x["spark"] for x in timed if x.get("spark")]
        driver_only = f"{statistics.median(s['driver_only'] for s in spark):.2f}" if spark else "-"
        jobs = f"{statistics.median(s['jobs'] for s in spark):.0f}" if spark else "-"
        lines.append(f"| {r['system']} | {r['median_seconds']:.2f} | {ratio} | {_mb(timed[0]['bytes_written'])} | "
                     f"{_files(r)} | {_index(r)} | {_mb(rss_py)} / {_mb(rss_jvm)} | {driver_only} | {jobs} |")
    return "\n".join(lines)


def targets(results: list[dict], scale: list[dict]) -> str:
    by = {r["alias"]: r for r in results if "error" not in r}
    delta = by.get("delta")
    out = []
    if delta:
        for alias, limit in (("cow-bloom", 1.0), ("cow-simple", 1.0), ("mor-bloom", 0.3), ("mor-bucket", 0.3)):
            if alias in by:
                ratio = by[alias]["median_seconds"] / delta["median_seconds"]
                out.append(f"- {by[alias]['system']} ≤ {limit}× delta-rs: {ratio:.2f}× "
                           f"{'MET' if ratio <= limit else 'NOT MET'}")
    for alias in ("cow-bloom", "mor-bloom"):
        if alias in by:
            run = by[alias]["runs"][0]
            opened = _opened(run.get("index_stats") or {})
            updated = (run.get("index_stats") or {}).get("confirmed_files")
            if opened is not None and updated:
                ratio = opened / updated
                out.append(f"- {by[alias]['system']} files opened for key checks ≤ 1.2× files updated: {opened} / "
                           f"{updated} = {ratio:.2f} {'MET' if ratio <= 1.2 else 'NOT MET'}")
    for big in scale:
        small = by.get(big.get("alias"))
        if small and "error" not in big:
            ratio = big["median_seconds"] / small["median_seconds"]
            rss_small = max(x["peak_rss_py"] or 0 for x in small["runs"])
            rss_big = max(x["peak_rss_py"] or 0 for x in big["runs"])
            out.append(f"- {big['system']} upsert at {big['rows']:,} rows ≤ 1.5× at {small['rows']:,}: "
                       f"{big['median_seconds']:.2f}s / {small['median_seconds']:.2f}s = {ratio:.2f}× "
                       f"{'MET' if ratio <= 1.5 else 'NOT MET'}; driver peak RSS {_mb(rss_big)} MB vs "
                       f"{_mb(rss_small)} MB")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keys", choices=["time", "uuid", "both"], default="both")
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                        help=f"comma list of {', '.join(DEFAULT_SYSTEMS)}")
    parser.add_argument("--scale-rows", type=int, default=0,
                        help="also run the MOR systems on a table this big with the same batch (e.g. 20000000)")
    parser.add_argument("--codec", choices=["snappy", "gzip"], default="snappy",
                        help="pyhudi's hoodie.parquet.compression.codec: snappy (default) is what delta-rs and Spark "
                             "write; gzip is Hudi's own default")
    parser.add_argument("--profile", action="store_true",
                        help="one extra run per Spark system with its Spark jobs and driver hot spots")
    parser.add_argument("--quick", action="store_true", help="5000 rows, 1 run, time-ordered keys (smoke test)")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "pyhudi-bench"))
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per system")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    if args.quick:
        args.rows, args.runs, args.keys = 5000, 1, "time"
    aliases = [a.strip() for a in args.systems.split(",") if a.strip()]
    unknown = [a for a in aliases if a not in ALIASES]
    if unknown:
        parser.error(f"unknown systems {unknown}; choose from {', '.join(ALIASES)}")
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    work = tempfile.mkdtemp(prefix=f"run-{stamp}-", dir=args.out)
    report = {"started": stamp, "rows": args.rows, "runs": args.runs, "cores": os.cpu_count(), "codec": args.codec,
              "results": {}}
    sections = []
    for keys in (["time", "uuid"] if args.keys == "both" else [args.keys]):
        folder = bench_data.generate(args.out, args.rows, args.rows, keys)
        info = bench_data.info(folder)
        print(f"{keys} keys: {info['rows']:,} rows, batch {info['updates']:,} updates + {info['inserts']:,} inserts")
        results = [run_in_subprocess(a, folder, work, args.runs, args.profile, args.timeout, args.codec) for a in aliases]
        for r in results:
            r["rows"] = args.rows
        scale = []
        if args.scale_rows and keys == "time":
            big = bench_data.generate(args.out, args.scale_rows, args.rows, keys)
            print(f"{keys} keys: {args.scale_rows:,} rows, same batch")
            for alias in aliases:
                if SYSTEMS[ALIASES[alias]].scale:
                    r = run_in_subprocess(alias, big, work, args.runs, False, args.timeout, args.codec)
                    r["rows"] = args.scale_rows
                    scale.append(r)
        report["results"][keys] = {"data": info, "systems": results, "scale": scale}
        sections.append(table(results, f"{keys}-ordered keys, {args.rows:,} rows, batch {info['updates']:,} updates "
                                       f"+ {info['inserts']:,} inserts, median of {args.runs}"
                              if keys == "time" else
                              f"uuid keys, {args.rows:,} rows, batch {info['updates']:,} updates + "
                              f"{info['inserts']:,} inserts, median of {args.runs}"))
        if scale:
            sections.append(table(scale, f"same batch on {args.scale_rows:,} rows"))
        checks = targets(results, scale)
        if checks:
            sections.append(f"Targets ({keys} keys):\n{checks}")
    result_path = os.path.join(args.out, f"results-{stamp}.json")
    with open(result_path, "w") as f:
        json.dump(report, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)
    print()
    print("\n\n".join(sections))
    if args.profile:
        for keys, section in report["results"].items():
            for r in section["systems"]:
                prof = next((x for x in r.get("runs", []) if x.get("profile_run")), None)
                if prof and prof.get("spark_jobs"):
                    print(f"\n{r['system']} ({keys} keys) profile run {prof['seconds']:.2f}s: {prof['spark']}")
                    for job in prof["spark_jobs"]:
                        print(f"   job {job['id']:4d} +{job['start']:6.2f}s {job['seconds'] or 0:6.2f}s "
                              f"tasks {job['tasks']:4d}  {job['label'][:90]}")
                    for line in prof.get("driver_profile", [])[:15]:
                        print("   " + line)
    print(f"\nresults: {result_path}")
    failed = [r for s in report["results"].values() for r in s["systems"] + s["scale"] if "error" in r]
    return 1 if failed and len(failed) == sum(len(s["systems"]) for s in report["results"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
