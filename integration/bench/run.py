"""Upsert and scan benchmark: pyhudi against delta-rs merge, pyiceberg upsert and a plain Spark parquet rewrite.

    .venv/bin/python integration/bench/run.py [--rows 2000000] [--runs 3] [--keys time|uuid|both]
        [--systems delta,iceberg,spark,cow-bloom,cow-simple,mor-bloom,mor-bucket] [--scale-rows 20000000]
        [--codec snappy|gzip|gzip,snappy] [--small-batch 200] [--skip big,small,scan,scale] [--profile] [--quick]
        [--out DIR]

Data is generated once (fixed seed) as parquet that every system reads. Each system (each pyhudi system once per
codec) runs in its own Python process (so peak memory is its own): it builds its base table (untimed), then per
run restores the base table and times only the upsert of a batch (Spark session start excluded): first the small
batch (--small-batch rows), then the big one (1% updates + 0.1% inserts). Last, on the table the big batch left
(merge-on-read: ~1% of the rows in log files), it times snapshot scans summing a column, alternating with a plain
`spark.read.parquet` of the same base files in the same Spark session. Detailed tables per case and codec, then
issue 14's summary (| work | pyhudi | peer | ratio | goal | met? |) are printed; the JSON with every run lands in
--out.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
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
import report as report_tables  # noqa: E402
from systems import ALIASES, SYSTEMS  # noqa: E402

table = report_tables.upsert_table   # the big-batch table under its earlier name

DEFAULT_SYSTEMS = list(ALIASES)


# --- one system, in this process ------------------------------------------------------------------------------
CASES = ("big", "small", "scan")   # upsert of the 1% batch, upsert of a small batch, snapshot scan after the 1%


def start_spark(work: str, cores: int = 2):
    import pyhudi
    spark = pyhudi.session(master=f"local[{cores}]", warehouse_dir=os.path.join(work, "warehouse"), hive=False,
                           **{"spark.driver.memory": "4g"})
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class _Table:
    """The system's table folder and its pristine copy (the base table): restored before each timed upsert."""

    def __init__(self, path: str, pristine: str):
        self.path, self.pristine, self.dirty = path, pristine, False

    def restore(self) -> None:
        if self.dirty:
            shutil.rmtree(self.path)
            shutil.copytree(self.pristine, self.path, symlinks=True)
        self.dirty = False


def run_system(alias: str, data: str, work: str, runs: int, spark=None, profile: bool = False,
               cases=CASES, small_batch: int = 200) -> dict:
    """Build the base table of one system, then time `runs` upserts of each batch, each from the same base state
    (the small batch first; `median_seconds` and `runs` are the big batch's), and last `runs` snapshot scans of
    the table the big batch left."""
    system = SYSTEMS[ALIASES.get(alias, alias)]
    path = os.path.join(work, alias, "table")
    pristine = os.path.join(work, alias, "base")
    shutil.rmtree(os.path.join(work, alias), ignore_errors=True)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    t0 = time.perf_counter()
    system.setup(spark, data, path)
    setup_seconds = time.perf_counter() - t0
    shutil.copytree(path, pristine, symlinks=True)
    state = _Table(path, pristine)
    jvm = measure.jvm_pid(spark) if spark is not None else None
    undo = measure.label_collects(spark) if spark is not None and system.name.startswith("pyhudi") else None
    big = os.path.join(data, "batch.parquet")
    out = {"system": system.name, "alias": alias, "setup_seconds": round(setup_seconds, 1),
           "median_seconds": None, "runs": []}
    try:
        if "small" in cases:
            out["small"] = _time_upserts(system, spark, bench_data.small_batch(data, small_batch), state, runs, jvm)
        last = None
        if "big" in cases:
            timed = _time_upserts(system, spark, big, state, runs, jvm, profile)
            out.update(median_seconds=timed["median_seconds"], runs=timed["runs"], batch_bytes=timed["batch_bytes"])
            last = timed["runs"][-1]
        if "scan" in cases and last is None:   # the scan reads the table the big batch leaves: apply it untimed
            state.restore()
            state.dirty = True
            system.reset()
            last = system.upsert(spark, big, path)
        out["rows_after"] = system.count(spark, path)
        if "scan" in cases:
            scan = _time_scans(system, spark, path, runs, bench_data.expected_sum(data, big))
            if scan:
                scan.update(rows=out["rows_after"], log_rows=last.get("log_rows"), log_files=last.get("log_files"))
                out["scan"] = scan
    finally:
        if undo:
            undo()
    return out


def _time_upserts(system, spark, batch: str, state: _Table, runs: int, jvm, profile: bool = False) -> dict:
    """`runs` timed upserts of the batch file, each into the restored base table (plus one profiled run)."""
    import pyarrow.parquet as pq
    batch_bytes = pq.read_table(batch).nbytes
    results = []
    for run in range(runs + (1 if profile else 0)):
        state.restore()
        state.dirty = True
        result = _time_upsert(system, spark, batch, state.path, jvm, profile and run == runs)
        result["batch_bytes"] = batch_bytes
        result["write_amplification"] = round(result["bytes_written"] / batch_bytes, 2) if batch_bytes else None
        results.append(result)
    timed = [r for r in results if not r.get("profile_run")]
    return {"batch": os.path.basename(batch), "batch_bytes": batch_bytes,
            "median_seconds": statistics.median(r["seconds"] for r in timed), "runs": results}


def _time_upsert(system, spark, batch: str, path: str, jvm, profile: bool) -> dict:
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
    if profile:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
    t0 = time.perf_counter()
    detail = system.upsert(spark, batch, path)
    seconds = time.perf_counter() - t0
    if profiler:
        profiler.disable()
    written, files = measure.written_since(before, path)
    result = {"seconds": round(seconds, 3), "bytes_written": written, "files_written": files,
              "peak_rss_py": measure.peak_rss(), "peak_rss_jvm": measure.peak_rss(jvm) if jvm else None, **detail}
    if jobs:
        spark_jobs = jobs.stop()
        result["spark"] = jobs.summary(spark_jobs)
        if profiler:
            result["spark_jobs"] = spark_jobs
            result["driver_profile"] = _top_functions(profiler)
    if profiler:
        result["profile_run"] = True
    return result


def _time_scans(system, spark, path: str, runs: int, expected: float) -> dict | None:
    """`runs` snapshot scans (sum of a column) of the system's table and, alternating with them, of its peer's
    plain-parquet scan of the same files; one untimed warm-up of each first (JIT, page cache)."""
    if system.scan(spark, path) is None:   # also the warm-up of the system's own scan
        return None
    scans = {"self": lambda: system.scan(spark, path)}
    peer = system.peer_scan(spark, path)
    if peer:
        scans["peer"] = peer[1]
        peer[1]()
    timed: dict[str, list] = {name: [] for name in scans}
    values = {}
    for _ in range(runs):
        for name, scan in scans.items():
            system.reset()
            gc.collect()
            t0 = time.perf_counter()
            values[name] = scan()
            timed[name].append(round(time.perf_counter() - t0, 3))

    def case(name, checked=True):
        value = values[name]
        correct = value is not None and math.isclose(value, expected, rel_tol=1e-9) if checked else None
        return {"median_seconds": statistics.median(timed[name]), "seconds": timed[name], "sum": value,
                "correct": correct}
    out = {**case("self"), "expected_sum": expected}
    if peer:
        out["peer"] = {"label": peer[0], **case("peer", checked=peer[2])}
    return out


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
    systems.WARM = args.warm
    system = SYSTEMS[ALIASES.get(args.worker, args.worker)]
    spark = start_spark(args.work) if system.spark else None
    try:
        result = run_system(args.worker, args.data, args.work, args.runs, spark, args.profile,
                            cases=args.cases.split(","), small_batch=args.small_batch)
    finally:
        if spark is not None:
            spark.stop()
    with open(args.result, "w") as f:
        json.dump(result, f, indent=1)


# --- the whole benchmark --------------------------------------------------------------------------------------
def run_in_subprocess(alias: str, data: str, work: str, runs: int, profile: bool, timeout: int,
                      codec: str = "snappy", cases=CASES, small_batch: int = 200, warm: bool = False) -> dict:
    hudi = SYSTEMS[ALIASES[alias]].hudi
    tag = f"{alias}-{codec}" if hudi else alias
    result_file = os.path.join(work, f"{tag}.json")
    command = [sys.executable, os.path.abspath(__file__), "--worker", alias, "--data", data, "--work",
               os.path.join(work, tag), "--runs", str(runs), "--result", result_file, "--codec", codec,
               "--cases", ",".join(cases), "--small-batch", str(small_batch)] + (["--profile"] if profile else []) \
        + (["--warm"] if warm else [])
    print(f"  {tag} ...", end="", flush=True)
    t0 = time.perf_counter()
    name = SYSTEMS[ALIASES[alias]].name
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f" timed out after {timeout}s")
        return {"system": name, "alias": alias, "codec": codec, "error": f"timed out after {timeout}s"}
    finally:
        shutil.rmtree(os.path.join(work, tag), ignore_errors=True)
    if proc.returncode != 0 or not os.path.exists(result_file):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-12:]
        print(" failed:\n    " + "\n    ".join(tail))
        return {"system": name, "alias": alias, "codec": codec, "error": tail[-1] if tail else "failed"}
    with open(result_file) as f:
        result = json.load(f)
    result["codec"] = codec if hudi else None
    parts = []
    if result.get("median_seconds") is not None:
        parts.append(f"median {result['median_seconds']:.2f}s")
    if result.get("small"):
        parts.append(f"small batch {result['small']['median_seconds']:.2f}s")
    if result.get("scan"):
        scan = result["scan"]
        parts.append(f"scan {scan['median_seconds']:.2f}s" + ("" if scan["correct"] else " WRONG SUM"))
    print(f" {', '.join(parts) or 'done'} ({time.perf_counter() - t0:.0f}s with setup)")
    return result


def _print_profiles(report: dict) -> None:
    for keys, section in report["results"].items():
        for r in section["systems"]:
            prof = next((x for x in r.get("runs", []) if x.get("profile_run")), None)
            if prof and prof.get("spark_jobs"):
                print(f"\n{r['system']} ({keys} keys, {r.get('codec') or '-'}) profile run {prof['seconds']:.2f}s: "
                      f"{prof['spark']}")
                for job in prof["spark_jobs"]:
                    print(f"   job {job['id']:4d} +{job['start']:6.2f}s {job['seconds'] or 0:6.2f}s "
                          f"tasks {job['tasks']:4d}  {job['label'][:90]}")
                for line in prof.get("driver_profile", [])[:15]:
                    print("   " + line)


def _list(parser, text: str, allowed, what: str) -> list[str]:
    items = [a.strip() for a in text.split(",") if a.strip()]
    unknown = [a for a in items if a not in allowed]
    if unknown:
        parser.error(f"unknown {what} {unknown}; choose from {', '.join(allowed)}")
    return items


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keys", choices=["time", "uuid", "both"], default="both")
    parser.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                        help=f"comma list of {', '.join(DEFAULT_SYSTEMS)}")
    parser.add_argument("--scale-rows", type=int, default=0,
                        help="also run the MOR systems' big-batch upsert on a table this big with the same batch "
                             "(e.g. 20000000), with the targets' codec only")
    parser.add_argument("--codec", default="snappy",
                        help="pyhudi's hoodie.parquet.compression.codec, one or a comma list of snappy, gzip: snappy "
                             "(default) is what delta-rs and Spark write; gzip is Hudi's own default and, when run, "
                             "the codec of the summary's targets")
    parser.add_argument("--small-batch", type=int, default=200, help="rows of the small-batch upsert (default 200)")
    parser.add_argument("--skip", default="",
                        help="comma list of parts to leave out: big (the 1%% upsert), small (the small-batch upsert), "
                             "scan (the snapshot scans), scale (as without --scale-rows)")
    parser.add_argument("--profile", action="store_true",
                        help="one extra big-batch run per Spark system with its Spark jobs and driver hot spots")
    parser.add_argument("--warm", action="store_true",
                        help="keep pyhudi's process caches between timed runs (by default its footer caches are "
                             "cleared before each run)")
    parser.add_argument("--quick", action="store_true", help="5000 rows, 1 run, time-ordered keys (smoke test)")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "pyhudi-bench"))
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per system")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--cases", default=",".join(CASES), help=argparse.SUPPRESS)
    return parser


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    if args.quick:
        args.rows, args.runs, args.keys = 5000, 1, "time"
    aliases = _list(parser, args.systems, ALIASES, "systems")
    codecs = _list(parser, args.codec, ("snappy", "gzip"), "codecs")
    skip = set(_list(parser, args.skip, (*CASES, "scale"), "parts to skip"))
    cases = [c for c in CASES if c not in skip]
    target_codec = "gzip" if "gzip" in codecs else codecs[0]
    scale_rows = 0 if "scale" in skip else args.scale_rows
    peers = [a for a in aliases if not SYSTEMS[ALIASES[a]].hudi]
    hudis = [a for a in aliases if SYSTEMS[ALIASES[a]].hudi]
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    work = tempfile.mkdtemp(prefix=f"run-{stamp}-", dir=args.out)
    began = time.perf_counter()
    report = {"started": stamp, "rows": args.rows, "runs": args.runs, "cores": os.cpu_count(),
              "codec": args.codec, "codecs": codecs, "target_codec": target_codec, "cases": cases,
              "small_batch": args.small_batch, "scale_rows": scale_rows, "warm": args.warm, "results": {}}
    sections, summaries = [], []

    def run(alias, codec, data, cases=cases, profile=args.profile):
        return run_in_subprocess(alias, data, work, args.runs, profile, args.timeout, codec, cases, args.small_batch,
                                 args.warm)

    for keys in (["time", "uuid"] if args.keys == "both" else [args.keys]):
        folder = bench_data.generate(args.out, args.rows, args.rows, keys)
        info = bench_data.info(folder)
        small_info = None
        line = f"{keys} keys: {info['rows']:,} rows, batch {info['updates']:,} updates + {info['inserts']:,} inserts"
        if "small" in cases:
            bench_data.small_batch(folder, args.small_batch)
            updates, inserts = bench_data.small_shape(args.small_batch)
            small_info = {"rows": args.small_batch, "updates": updates, "inserts": inserts}
            line += f"; small batch {updates:,} updates + {inserts:,} inserts"
        print(line)
        results = [run(a, target_codec, folder) for a in peers]
        by_codec = {codec: [run(a, codec, folder) for a in hudis] for codec in codecs}
        for r in results + [r for rs in by_codec.values() for r in rs]:
            r["rows"] = args.rows
        scale = []
        if scale_rows and keys == "time" and "big" in cases:
            big = bench_data.generate(args.out, scale_rows, args.rows, keys)
            print(f"{keys} keys: {scale_rows:,} rows, same batch ({target_codec})")
            for alias in hudis:
                if SYSTEMS[ALIASES[alias]].scale:
                    r = run(alias, target_codec, big, cases=["big"], profile=False)
                    r["rows"] = scale_rows
                    scale.append(r)
        summary = {}
        for codec in codecs:
            rows = results + by_codec[codec]
            shown = (f"{keys} keys, {args.rows:,} rows, pyhudi {codec}{' (warm caches)' if args.warm else ''}, "
                     f"median of {args.runs}")
            if "big" in cases:
                sections.append(report_tables.upsert_table(
                    rows, f"Upsert, batch {info['updates']:,} updates + {info['inserts']:,} inserts; {shown}"))
            if small_info:
                sections.append(report_tables.upsert_table(
                    rows, f"Upsert, {args.small_batch}-row batch ({small_info['updates']} updates + "
                          f"{small_info['inserts']} inserts); {shown}", case="small"))
            if "scan" in cases:
                sections.append(report_tables.scan_table(
                    rows, f"Snapshot scan, sum(fare), after the {info['updates']:,}-update batch; {shown}"))
            summary[codec] = report_tables.summary_rows(rows, scale if codec == target_codec else [], info,
                                                        small_info)
            summaries.append(report_tables.summary_table(
                summary[codec], f"Summary: {keys} keys, {args.rows:,} rows, pyhudi {codec}"
                + (" (the targets' codec)" if codec == target_codec and len(codecs) > 1 else "")
                + f", median of {args.runs}"))
        if scale:
            sections.append(report_tables.upsert_table(scale, f"Same batch on {scale_rows:,} rows ({target_codec})"))
        report["results"][keys] = {"data": info, "small_batch": small_info,
                                   "systems": results + [r for rs in by_codec.values() for r in rs],
                                   "scale": scale, "summary": summary}
    report["wall_seconds"] = round(time.perf_counter() - began, 1)
    result_path = os.path.join(args.out, f"results-{stamp}.json")
    with open(result_path, "w") as f:
        json.dump(report, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)
    print()
    print("\n\n".join(sections))
    if args.profile:
        _print_profiles(report)
    print()
    print("\n\n".join(summaries))
    print(f"\nresults: {result_path} (whole benchmark {report['wall_seconds']:.0f}s)")
    everything = [r for s in report["results"].values() for r in s["systems"] + s["scale"]]
    failed = [r for r in everything if "error" in r]
    return 1 if failed and len(failed) == len(everything) else 0


if __name__ == "__main__":
    sys.exit(main())
