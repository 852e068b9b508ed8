"""One action of the fault matrix, run in a process of its own (own local JVM) so a crash point can kill it.

    python fault_worker.py '{"path": ..., "options": {...}, "action": ["write", {...}], "master": "local[1]"}'

Actions: write {"operation": ..., "rows": [[id, name, ts, part], ...]}, delete_partition [partitions],
compact, cluster, clean {options}, archive, upgrade version, rollback instant, savepoint instant, restore instant. With PYHUDI_CRASH_AT set,
pyhudi.testing.crash_point ends the process (exit 137) at that point. The result is one JSON line on stdout:
{"done": ...} when the action finished, {"error": ...} (exit 3) when it raised (a crash inside a Spark task
fails the job, and the driver lives on to abort the write).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile


def run(spark, path: str, options: dict, action: list):
    import pyhudi

    kind, arg = action[0], (action[1] if len(action) > 1 else None)
    if kind == "write":
        df = spark.createDataFrame([tuple(r) for r in arg["rows"]], "id long, name string, ts long, part string")
        return str(pyhudi.write(df, path, {**options, "hoodie.datasource.write.operation": arg["operation"]}))
    if kind == "delete_partition":
        return str(pyhudi.delete_partitions(spark, path, arg, options))
    if kind == "compact":
        return [i.time for i in pyhudi.compact(spark, path, options=options)]
    if kind == "cluster":
        return [i.time for i in pyhudi.cluster(spark, path, options=options)]
    if kind == "clean":
        return bool(pyhudi.clean(spark, path, {**options, **(arg or {})}))
    if kind == "archive":
        return [i.time for i in pyhudi.archive(spark, path, options)]
    if kind == "upgrade":
        return pyhudi.upgrade_table(spark, path, arg, options)
    if kind == "rollback":
        return bool(pyhudi.rollback_to_instant(spark, path, arg))
    if kind == "savepoint":
        return pyhudi.create_savepoint(spark, path, arg).time
    if kind == "restore":
        return bool(pyhudi.restore_to_savepoint(spark, path, arg))
    raise SystemExit(f"unknown action {kind}")


def main() -> None:
    spec = json.loads(sys.argv[1])
    import pyhudi

    warehouse = tempfile.mkdtemp(prefix="pyhudi-fault-")
    spark = pyhudi.session(master=spec.get("master", "local[1]"), warehouse_dir=warehouse, hive=False,
                           **{"spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "1",
                              "spark.sql.adaptive.enabled": "false", "spark.ui.enabled": "false"})
    spark.sparkContext.setLogLevel("OFF")
    try:
        result = run(spark, spec["path"], spec["options"], spec["action"])
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which judges it
        print(json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:500]}"}), flush=True)
        spark.stop()
        os._exit(3)
    print(json.dumps({"done": result}), flush=True)
    spark.stop()
    os._exit(0)


if __name__ == "__main__":
    main()
