"""The `pyhudi` command.

    pyhudi sql [-e "SQL" | -f file.sql] [--master local[*]] [--warehouse DIR]   # shell with history when neither
    pyhudi timeline PATH                                                       # instants of a table
    pyhudi show PATH                                                           # partitions, file groups, slices
`timeline` and `show` read metadata only (no Spark).
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pyhudi", description="Apache Hudi tables on PySpark")
    commands = parser.add_subparsers(dest="command", required=True)
    sql = commands.add_parser("sql", help="run SQL (Hudi statements and CALL procedures)")
    sql.add_argument("-e", dest="execute", help="statements to run")
    sql.add_argument("-f", dest="file", help="SQL script to run")
    sql.add_argument("--master", default="local[*]")
    sql.add_argument("--warehouse", default=None, help="Spark SQL warehouse and metastore folder")
    timeline = commands.add_parser("timeline", help="list a table's instants")
    timeline.add_argument("path")
    show = commands.add_parser("show", help="list a table's partitions, file groups and slices")
    show.add_argument("path")
    args = parser.parse_args(argv)
    from pyhudi.errors import PyHudiError
    try:
        if args.command == "timeline":
            return _timeline(args.path)
        if args.command == "show":
            return _show(args.path)
        return _sql(args)
    except PyHudiError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


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
                logs = sum(log.size for log in s.log_files)
                print(f"  {group.file_id} @ {s.base_instant}: {base}, {len(s.log_files)} log file(s) {logs} B")
    return 0


def _sql(args) -> int:
    import pyhudi
    spark = pyhudi.session(master=args.master, warehouse_dir=args.warehouse,
                         **{"spark.ui.showConsoleProgress": "true"})
    if args.execute or args.file:
        text = args.execute if args.execute else open(args.file, encoding="utf-8").read()
        _print(pyhudi.sql(spark, text))
        return 0
    return _shell(spark)


def _print(df) -> None:
    if df is not None and df.columns:
        df.show(1000, truncate=False)


def _shell(spark) -> int:
    """Interactive shell: statements end with `;`; history in ~/.pyhudi_history."""
    import pyhudi
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
            _print(pyhudi.sql(spark, text))
        except PyHudiError as exc:
            print(f"error: {exc}")
        except Exception as exc:  # noqa: BLE001 - Spark's errors are shown, the shell goes on
            print(f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else exc}")
    if readline is not None and history:
        readline.write_history_file(history)
    return 0


if __name__ == "__main__":
    sys.exit(main())
