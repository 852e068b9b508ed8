"""Another process acting on a table, for tests/component/test_meta_cache.py: `write <path> <table type> <json
rows>`, `rollback <path> <instant>`, `clean <path>` (one version per file group kept). Prints the instant it made."""

from __future__ import annotations

import json
import sys
import tempfile

import pyhudi

SCHEMA = "id long, region string, ts long, v string"


def options(table_type: str) -> dict:
    return {"hoodie.table.name": "cache", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": table_type, "hoodie.clean.automatic": "false"}


def main(argv: list[str]) -> None:
    op, path = argv[0], argv[1]
    if op == "write":
        # a warehouse of its own, not ./spark-warehouse: its Derby catalog serves one process, and another pytest
        # worker (pytest -n) may run this script at the same time
        spark = pyhudi.session("local[1]", warehouse_dir=tempfile.mkdtemp(prefix="pyhudi-cache-"))
        rows = [tuple(r) for r in json.loads(argv[3])]
        print(pyhudi.write(spark.createDataFrame(rows, SCHEMA), path, options(argv[2])))
    elif op == "rollback":
        print(bool(pyhudi.rollback_to_instant(None, path, argv[2])))
    elif op == "clean":
        print(pyhudi.clean(None, path, {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
                                        "hoodie.cleaner.fileversions.retained": "1"}))
    else:
        raise SystemExit(f"unknown op {op}")


if __name__ == "__main__":
    main(sys.argv[1:])
