"""A writer process for crash and concurrency tests (run as a subprocess; each starts its own local[1] JVM).

    python crash_worker.py '{"path": ..., "options": {...}, "actions": [["write", {"1": "a"}], ["compact"], ...]}'

Actions: write {id: name} (upsert, ts = a counter; with "sized": true the batch comes from pandas, a batch Spark
sizes, so the write runs as one Python task), compact, savepoint, rollback_latest, restore (to the newest
savepoint), and for concurrency: writes N (N upserts of the given ids, each tagged with the worker and commit
number; prints one line per commit or conflict). With PYHUDI_CRASH_AT set, pyhudi.testing.crash_point ends the
process at that point; with PYHUDI_FAIL_FIRST_ATTEMPT set, pyhudi.testing.task_failure_point fails the first
attempt of every Spark task there (give a master with retries, "master": "local[2,3]"). Every finished action
prints one JSON line (flushed), so the parent sees how far it got.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time


def main() -> None:
    spec = json.loads(sys.argv[1])
    import pyhudi
    from pyhudi.errors import WriteConflictError

    warehouse = tempfile.mkdtemp(prefix="pyhudi-worker-")
    spark = pyhudi.session(master=spec.get("master", "local[1]"), warehouse_dir=warehouse, hive=False,
                           **{"spark.sql.shuffle.partitions": "1", "spark.default.parallelism": "1",
                              "spark.sql.adaptive.enabled": "false"})
    spark.sparkContext.setLogLevel("OFF")
    path, options = spec["path"], spec["options"]

    def report(**fields):
        print(json.dumps(fields), flush=True)

    def upsert(records: dict, ts: int):
        rows = [(int(k), v, ts, "eu" if int(k) % 2 else "us") for k, v in records.items()]
        if spec.get("sized"):   # a batch Spark sizes (pandas: a local relation): the one-task write
            import pandas as pd
            rows = pd.DataFrame(rows, columns=["id", "name", "ts", "region"])
        df = spark.createDataFrame(rows, "id long, name string, ts long, region string")
        return pyhudi.write(df, path, options)

    for action in spec["actions"]:
        kind = action[0]
        if kind == "write":
            instant = upsert(action[1], int(time.time() * 1000))
            report(action="write", instant=str(instant))
        elif kind == "compact":
            report(action="compact", instants=[i.time for i in pyhudi.compact(spark, path, options=options)])
        elif kind == "savepoint":
            report(action="savepoint", instant=pyhudi.create_savepoint(spark, path).time)
        elif kind == "rollback_latest":
            from pyhudi.table import HudiTable
            latest = HudiTable.load(path).timeline().latest_completed_write().time
            report(action="rollback_started", instant=latest)
            pyhudi.rollback_to_instant(spark, path, latest)
            report(action="rollback", instant=latest)
        elif kind == "restore":
            target = pyhudi.show_savepoints(spark, path)[0].time
            pyhudi.restore_to_savepoint(spark, path, target)
            report(action="restore", instant=target)
        elif kind == "writes":
            worker, count, ids = action[1], action[2], action[3]
            for n in range(count):
                tag = f"{worker}-{n}"
                try:
                    instant = upsert({str(i): tag for i in (ids if n % 2 == 0 else ids[1:])},
                                     int(time.time() * 1000))
                    report(action="commit", tag=tag, instant=str(instant))
                except WriteConflictError as exc:
                    report(action="conflict", tag=tag, error=str(exc)[:200])
        else:
            raise SystemExit(f"unknown action {kind}")
    spark.stop()
    os._exit(0)


if __name__ == "__main__":
    main()
