"""The clean planner reads data files from the process's cached table listing (table/listing.py) instead of listing
the table itself: after another process's commit, the listing is synced from the timeline (only the touched
partition is listed again) and the plan sees that commit's files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyhudi
from pyhudi.commit.retention import CleanOptions
from pyhudi.file_group.naming import parse_base_file_name
from pyhudi.services.clean.plan import plan_clean
from pyhudi.timeline.clean_plan import CleanerPlan
from pyhudi.table import HudiTable
from pyhudi.table.listing import table_listing
from support import rows

WORKER = Path(__file__).with_name("meta_cache_worker.py")
SCHEMA = "id long, region string, ts long, v string"
OPTIONS = {"hoodie.table.name": "cache", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
           "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.clean.automatic": "false"}
ONE_VERSION = {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1"}


def _other_process(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, str(WORKER), *args], env=env, capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def _planned(plan: CleanerPlan | None) -> dict[str, list[str]]:
    if plan is None:
        return {}
    return {p: sorted((f.file_path or "").rsplit("/", 1)[-1] for f in files)
            for p, files in (plan.file_paths or {}).items()}


def test_clean_plan_uses_the_cached_listing_and_sees_another_process_commit(spark, tmp_path):
    path = tmp_path / "t"
    first = str(pyhudi.write(spark.createDataFrame([(1, "us", 1, "a"), (2, "eu", 1, "b")], SCHEMA), str(path),
                             OPTIONS))
    table = HudiTable.load(str(path))
    opts = CleanOptions.of(ONE_VERSION)
    assert plan_clean(table, table.timeline(), opts) is None       # one version each: nothing due; listing warm
    listing = table_listing(table.storage)
    full, partial = listing.full_listings, listing.partition_listings

    # another process updates id 1: a second version of the "us" file group
    second = _other_process("write", str(path), "COPY_ON_WRITE", json.dumps([[1, "us", 2, "a2"]]))
    assert second > first
    plan = plan_clean(table, table.timeline(), opts)
    planned = _planned(plan)
    assert list(planned) == ["us"]
    assert [parse_base_file_name(n)[2] for n in planned["us"]] == [first]   # the old version, seen via the new one
    assert listing.full_listings == full                                 # no listing of the whole table
    assert listing.partition_listings == partial + 1                     # only the partition the commit touched

    pyhudi.clean(spark, str(path), ONE_VERSION)
    assert not (path / "us" / planned["us"][0]).exists()
    assert rows(pyhudi.read(spark, str(path)), ["id", "region", "ts", "v"]) == [(1, "us", 2, "a2"), (2, "eu", 1, "b")]
