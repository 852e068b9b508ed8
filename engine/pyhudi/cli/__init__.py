"""The `pyhudi` command.

    pyhudi sql [-e "SQL" | -f file.sql] [--master local[*]] [--warehouse DIR] [--verbose]   # shell when neither
    pyhudi timeline PATH                                      # instants of a table
    pyhudi report PATH [--html report.html] [--check-keys [--index-type T]]   # table health: summary, findings
    pyhudi show PATH                                          # partitions, file groups, slices
    pyhudi commits show --path P [--limit N]                  # as hudi-cli; each runs the SQL procedure of the
    pyhudi compaction schedule|run|show --path P              #   same name (CALL show_commits, run_compaction,
    pyhudi clean --path P                                     #   run_clean, create_savepoint, ...) and prints
    pyhudi savepoint create|rollback|delete --path P --commit I   # its table
    pyhudi savepoint show --path P
    pyhudi rollback --path P --commit I
    pyhudi services --base-path P [--base-path Q ...] [--enable-compaction] [--enable-clustering] [--enable-clean]
                    [--enable-archive] [--compaction-mode M] [--clustering-mode M] [--hoodie-conf k=v ...]
                    [--continuous [--schedule-delay MS] [--rounds N]]   # Hudi's HoodieMultiTableServicesMain

`timeline`, `show` and `report` read metadata only (no Spark; `report --check-keys` starts Spark to look for keys
stored twice under a global index). Spark's start-up and log output stay off the terminal (only
errors are logged) unless --verbose is given.
"""

from __future__ import annotations

import argparse
import os
import sys

# hudi-cli's commands -> (procedure, its arguments from our options)
_HUDI_CLI = {
    ("commits", "show"): ("show_commits", lambda a: {"limit": a.limit}),
    ("compaction", "schedule"): ("run_compaction", lambda a: {"op": "schedule"}),
    ("compaction", "run"): ("run_compaction", lambda a: {"op": "run"}),
    ("compaction", "show"): ("show_compaction", lambda a: {"limit": a.limit}),
    ("clean", None): ("run_clean", lambda a: {}),
    ("savepoint", "create"): ("create_savepoint", lambda a: {"commit_time": a.commit}),
    ("savepoint", "rollback"): ("rollback_to_savepoint", lambda a: {"instant_time": a.commit}),
    ("savepoint", "delete"): ("delete_savepoint", lambda a: {"instant_time": a.commit}),
    ("savepoint", "show"): ("show_savepoints", lambda a: {}),
    ("rollback", None): ("rollback_to_instant", lambda a: {"instant_time": a.commit}),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pyhudi", description="Apache Hudi tables on PySpark")
    commands = parser.add_subparsers(dest="command", required=True)
    sql = commands.add_parser("sql", help="run SQL (Hudi statements and CALL procedures)")
    sql.add_argument("-e", dest="execute", help="statements to run")
    sql.add_argument("-f", dest="file", help="SQL script to run")
    _spark_arguments(sql)
    timeline = commands.add_parser("timeline", help="list a table's instants")
    timeline.add_argument("path")
    show = commands.add_parser("show", help="list a table's partitions, file groups and slices")
    show.add_argument("path")
    report = commands.add_parser("report", help="a table's health: summary, findings with fixes, HTML charts")
    report.add_argument("path")
    report.add_argument("--html", help="also write the self-contained HTML report (charts) to this file")
    report.add_argument("--check-keys", action="store_true",
                        help="also look for record keys stored in several partitions (a Spark job; global indexes)")
    report.add_argument("--index-type", help="the hoodie.index.type the table is written with (default: from "
                                             "hoodie.properties), e.g. GLOBAL_SIMPLE")
    _spark_arguments(report)
    _hudi_cli_commands(commands)
    _services_command(commands)
    args = parser.parse_args(argv)
    from pyhudi.errors import PyHudiError
    if args.command not in ("sql", "timeline", "show", "report"):   # `sql` prints its own line per write
        _print_commit_summaries()
    try:
        if args.command == "timeline":
            return _timeline(args.path)
        if args.command == "show":
            return _show(args.path)
        if args.command == "report":
            return _report(args)
        if args.command == "sql":
            return _sql(args)
        if args.command == "services":
            return _services(args)
        return _procedure(args)
    except PyHudiError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _report(args) -> int:
    from pyhudi import report
    path, html_file = args.path, args.html
    options = {"hoodie.index.type": args.index_type} if args.index_type else {}
    health = report.table_health(path, options, _spark(args) if args.check_keys else None)
    width = max(len(label) for label, _ in report.summary_rows(health))
    for label, value in report.summary_rows(health):
        print(f"{label.ljust(width)}  {value}")
    found = report.findings(health)
    print("\nfindings:" if found else "\nno findings: the table is healthy")
    for finding in found:
        print(f"  [{finding.severity}] {finding.what}\n         fix: {finding.fix}")
    if html_file:
        with open(html_file, "w", encoding="utf-8") as page:
            page.write(report.render_html(health))
        print(f"\nHTML report with charts: {os.path.abspath(html_file)}")
    return 0


def _spark_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--warehouse", default=None, help="Spark SQL warehouse and metastore folder")
    parser.add_argument("--verbose", action="store_true", help="show Spark's log output (start-up, warnings)")


def _hudi_cli_commands(commands) -> None:
    """hudi-cli's table commands, each with `--path`."""
    def command(name: str, help_text: str, actions: list[str] | None = None, commit: bool = False):
        parser = commands.add_parser(name, help=help_text)
        if actions:
            parser.add_argument("action", choices=actions)
        parser.add_argument("--path", required=True, help="the table's base path")
        parser.add_argument("--limit", type=int, default=10, help="rows to show (show commands)")
        if commit:
            parser.add_argument("--commit", help="the instant time")
        _spark_arguments(parser)

    command("commits", "completed commits of a table (hudi-cli: commits show)", ["show"])
    command("compaction", "schedule, run or show merge-on-read compactions", ["schedule", "run", "show"])
    command("clean", "run the cleaner with the table's settings")
    command("savepoint", "create, show, delete a savepoint or restore the table to one",
            ["create", "show", "delete", "rollback"], commit=True)
    command("rollback", "roll back a commit (the latest)", commit=True)


def _services_command(commands) -> None:
    """Hudi's HoodieMultiTableServicesMain flags: tables by --base-path, services by --enable-*, Hudi options by
    --hoodie-conf; once (Hudi's --batch) or, with --continuous, a round every --schedule-delay ms."""
    parser = commands.add_parser("services", help="schedule and run compaction, clustering, clean and archive on "
                                 "one or more tables, once or in rounds, beside live writers")
    parser.add_argument("--base-path", dest="paths", action="append", required=True, help="a table (repeatable)")
    for service in ("compaction", "clustering", "clean", "archive"):
        parser.add_argument(f"--enable-{service}", action="append_const", const=service, dest="services",
                            help=f"run {service} (no --enable-*: all four)")
    modes = ["schedule", "execute", "scheduleAndExecute"]
    parser.add_argument("--compaction-mode", choices=modes, default="scheduleAndExecute")
    parser.add_argument("--clustering-mode", choices=modes, default="scheduleAndExecute")
    parser.add_argument("--hoodie-conf", action="append", default=[], help="a Hudi option key=value (repeatable)")
    parser.add_argument("--batch", action="store_true", help="run one round (the default without --continuous)")
    parser.add_argument("--continuous", action="store_true", help="run rounds until --rounds (0: until stopped)")
    parser.add_argument("--schedule-delay", type=int, default=2000, help="milliseconds between rounds")
    parser.add_argument("--rounds", type=int, default=0, help="rounds with --continuous (0: until interrupted)")
    _spark_arguments(parser)


def _services(args) -> int:
    """Run the table services; one line per service and table; exit 1 when any failed."""
    from pyhudi.client.table_services import run_table_services
    from pyhudi.errors import ConfigError
    options = {}
    for item in args.hoodie_conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--hoodie-conf {item!r} is not key=value (e.g. hoodie.cleaner.commits.retained=5)")
        options[key.strip()] = value.strip()
    rounds = args.rounds if args.continuous else 1

    def show(run):
        outcome = f"failed: {run.error}" if run.error else (run.result if run.result not in (None, []) else "nothing to do")
        print(f"round {run.round} {run.path} {run.service}: {outcome}", flush=True)

    spark = _spark(args)
    try:
        report = run_table_services(spark, args.paths, args.services, options, args.compaction_mode,
                                    args.clustering_mode, rounds, args.schedule_delay / 1000.0, on_run=show)
    except KeyboardInterrupt:
        return 130
    return 1 if report.failed else 0


def _procedure(args) -> int:
    """A hudi-cli command: the SQL procedure of the same work on the table at --path, its table printed."""
    from pyhudi.errors import ConfigError
    from pyhudi.sqlext.call_args import bind
    from pyhudi.sqlext.procedures import PROCEDURES
    name, arguments = _HUDI_CLI[(args.command, getattr(args, "action", None))]
    needs_commit = args.command == "rollback" or (args.command == "savepoint" and args.action != "show")
    if needs_commit and not args.commit:
        raise ConfigError(f"pyhudi {args.command} {getattr(args, 'action', '') or ''}: --commit <instant time> is "
                          f"required (list the instants with: pyhudi timeline {args.path})")
    proc = PROCEDURES[name]
    given = {k: v for k, v in arguments(args).items() if v is not None}
    # a procedure that names its table by `table` only still resolves `path` first (procedure_registry.target)
    takes_path = any(p.name == "path" for p in proc.params)
    values = bind(proc, [], {**given, **({"path": args.path} if takes_path else {"table": args.path})})
    values["path"] = args.path
    spark = _spark(args)
    _print(spark.createDataFrame(proc.run(spark, values), proc.output))
    return 0


def _timeline(path: str) -> int:
    from pyhudi.table import HudiTable
    table = HudiTable.load(path)
    print(f"{'instant':<20} {'action':<16} state")
    for instant in table.timeline().instants:
        print(f"{instant.time:<20} {instant.action:<16} {instant.state.name}")
    return 0


def _show(path: str) -> int:
    from pyhudi.table import HudiTable
    table = HudiTable.load(path)
    props = table.properties
    view = table.view()
    print(f"table {props.name} ({props.table_type}), version {props.version}, "
          f"key {','.join(props.record_key_fields)}, partitions {','.join(props.partition_fields) or '-'}")
    for partition in view.partitions():
        groups = [g for (p, _), g in sorted(view.file_groups.items()) if p == partition]
        print(f"partition {partition or '(none)'}: {len(groups)} file group(s)")
        for group in groups:
            for s in group.slices:
                base = f"{os.path.basename(s.base_file.path)} {s.base_file.size} B" if s.base_file else "no base file"
                print(f"  {group.file_id} @ {s.base_instant}: {base}, {len(s.log_files)} log file(s) {s.log_size} B")
    return 0


def _sql(args) -> int:
    spark = _spark(args, **{"spark.ui.showConsoleProgress": "true"})
    if args.execute or args.file:
        text = args.execute if args.execute else open(args.file, encoding="utf-8").read()
        _run_script(spark, text)
        return 0
    return _shell(spark)


def _print_commit_summaries() -> None:
    """The one-line summary each commit logs (pyhudi.spark.progress) goes to stderr, as the command's progress."""
    import logging
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("pyhudi")
    log.addHandler(handler)
    log.setLevel(logging.INFO)


def _spark(args, **conf):
    """The session, with Spark's log output off the terminal unless --verbose (errors still show)."""
    from pyhudi.cli import console
    from pyhudi.spark_session import session
    warehouse = os.path.abspath(args.warehouse or "spark-warehouse")
    if args.verbose:
        return session(master=args.master, warehouse_dir=warehouse, **conf)
    conf["spark.driver.extraJavaOptions"] = (f"-Dderby.system.home={warehouse} "
                                             f"-Dlog4j2.configurationFile={console.quiet_log_config()}")
    spark = console.start_filtered(lambda: session(master=args.master, warehouse_dir=warehouse, **conf))
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _run_script(spark, text: str) -> None:
    """Run statements in order and print each one's result (as spark-sql and beeline do), and for each Hudi
    write a summary line of its commit."""
    from pyhudi.sqlext.commits import describe, last_commits
    from pyhudi.sqlext.router import sql
    from pyhudi.sqlext.split import split_statements
    for statement in split_statements(text):
        _print(sql(spark, statement.text))
        line = describe(last_commits())
        if line:
            print(line)


def _print(df) -> None:
    if df is not None and df.columns:
        df.show(1000, truncate=False)


def _shell(spark) -> int:
    """Interactive shell: statements end with `;`; history in ~/.pyhudi_history."""
    from pyhudi.errors import PyHudiError
    try:
        import readline
        history = os.path.expanduser("~/.pyhudi_history")
        if os.path.exists(history):
            readline.read_history_file(history)
    except ImportError:  # pragma: no cover - readline is missing on some platforms
        readline, history = None, None
    buffer = ""
    while True:
        try:
            line = input("pyhudi> " if not buffer else "     -> ")
        except EOFError:
            break
        except KeyboardInterrupt:
            buffer = ""
            print()
            continue
        buffer += line + "\n"
        if not line.rstrip().endswith(";"):
            continue
        text, buffer = buffer, ""
        if text.strip().rstrip(";").strip().lower() in ("quit", "exit"):
            break
        try:
            _run_script(spark, text)
        except PyHudiError as exc:
            print(f"error: {exc}")
        except Exception as exc:  # noqa: BLE001 - Spark's errors are shown, the shell goes on
            print(f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else exc}")
    if readline is not None and history:
        readline.write_history_file(history)
    return 0
