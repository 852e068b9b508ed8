"""Run the example dbt project (integration/example) on the pyhudi adapter and print the Hudi tables it builds.

    python integration/run_example.py [--project-dir DIR] [--keep]

Steps: dbt seed -> dbt run (batch 1) -> dbt snapshot -> dbt run (batch 2: incremental upserts / partition
overwrites) -> dbt snapshot -> dbt run-operation compact / clean / show_commits -> print the tables.
All dbt commands run in this process (dbt's programmatic runner), so they share one Spark session.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "example")
TABLES = ["raw_orders_batch_1", "stg_orders", "fct_orders", "daily_revenue", "dim_customers", "customers_snapshot"]


def dbt(project_dir: str, *args: str):
    """One dbt command, in-process; raises when dbt reports a failure."""
    from dbt.cli.main import dbtRunner

    argv = [*args, "--project-dir", project_dir, "--profiles-dir", project_dir]
    print(f"\n$ dbt {' '.join(args)}", flush=True)
    result = dbtRunner().invoke(argv)
    if not result.success:
        raise SystemExit(f"dbt {' '.join(args)} failed: {result.exception or 'see the log above'}")
    return result


def run(project_dir: str = EXAMPLE, fresh: bool = True) -> str:
    """Runs the whole example; returns the schema it built (env PYHUDI_EXAMPLE_SCHEMA, default analytics)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if fresh:
        shutil.rmtree(os.path.join(project_dir, "target"), ignore_errors=True)
        shutil.rmtree(os.path.join(project_dir, "logs"), ignore_errors=True)
    dbt(project_dir, "seed")
    dbt(project_dir, "run", "--vars", "{batch: 1}")
    dbt(project_dir, "snapshot", "--vars", "{batch: 1}")
    dbt(project_dir, "run", "--vars", "{batch: 2}")
    dbt(project_dir, "snapshot", "--vars", "{batch: 2}")
    dbt(project_dir, "run-operation", "compact", "--args", "{table: fct_orders}")
    dbt(project_dir, "run-operation", "clean",
        "--args", "{table: fct_orders, clean_policy: KEEP_LATEST_COMMITS, retain_commits: 1}")
    dbt(project_dir, "run-operation", "show_commits", "--args", "{table: fct_orders, limit: 10}")
    return os.environ.get("PYHUDI_EXAMPLE_SCHEMA", "analytics")


def print_tables(schema: str) -> None:
    import pyhudi
    from pyspark.sql import SparkSession

    remote = os.environ.get("PYHUDI_EXAMPLE_REMOTE")   # the profile's `remote:` (a Spark Connect server)
    spark = (SparkSession.builder.remote(remote) if remote else SparkSession.builder).getOrCreate()
    for table in TABLES:
        print(f"\n== {schema}.{table}")
        df = pyhudi.sql(spark, f"select * from {schema}.{table}")
        data = [c for c in df.columns if not c.startswith("_hoodie_")]
        df.select(data).orderBy(data[0]).show(50, False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project-dir", default=EXAMPLE)
    parser.add_argument("--keep", action="store_true", help="keep target/ from an earlier run")
    args = parser.parse_args()
    schema = run(os.path.abspath(args.project_dir), fresh=not args.keep)
    print_tables(schema)


if __name__ == "__main__":
    main()
