"""Partition columns in any position and several of them, in every dbt materialization (table, incremental with
merge / append / insert_overwrite, seed, snapshot), with `threads: 4`: models that overwrite partitions (dynamic)
run next to models that overwrite whole tables (static), each with its own statement options. hudi-rs reads
every table; Hudi's layout puts the partition columns last, in partition_by order.
"""

from __future__ import annotations

import os

import pytest
from dbt.tests.util import run_dbt

from support import hudi_rs_read, rows

pytestmark = pytest.mark.spark

EVENTS_1 = """id,ts,dt,amount,region
1,1,2024-01-01,10,eu
2,1,2024-01-01,20,us
3,1,2024-01-02,30,eu
"""
EVENTS_2 = """id,ts,dt,amount,region
2,2,2024-01-01,21,us
4,2,2024-01-03,40,eu
"""
# a seed partitioned by a column in the middle of its CSV header
PLACES = """id,dt,region,amount
1,2024-01-01,eu,1.5
2,2024-01-02,us,2.5
"""

BATCH = "{{ ref('events_' ~ var('batch', 1)) }}"

# issue 12's first report: failed on its first run (partition column not last)
MOR_MERGE = """
{{ config(materialized='incremental', unique_key='id', incremental_strategy='merge', file_format='hudi',
          options={'type': 'mor', 'preCombineField': 'ts'}, partition_by=['dt']) }}
select id, ts, dt, amount from %s
""" % BATCH

APPEND_TWO = """
{{ config(materialized='incremental', incremental_strategy='append', partition_by=['region', 'dt']) }}
select id, dt, region, amount from %s
""" % BATCH

# dynamic overwrite of (dt, region) partitions; two of them, to run next to the static ones
OVERWRITE_TWO = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['dt', 'region']) }}
select dt, sum(amount) as total, region, count(*) as n from %s group by dt, region
""" % BATCH

# static: the whole table, each run
OVERWRITE_ALL = """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}
select dt, id, amount from %s
""" % BATCH

TABLE_PART = """
{{ config(materialized='table', partition_by='dt', unique_key='id') }}
select dt, id, amount from %s
""" % BATCH

SNAPSHOT = """
{% snapshot snap %}
{{ config(target_schema=schema, unique_key='id', strategy='check', check_cols='all', partition_by=['dt']) }}
select id, dt, amount from {{ ref('events_' ~ var('batch', 1)) }}
{% endsnapshot %}
"""


def location(spark, schema: str, table: str) -> str:
    from pyhudi.sqlext import catalog
    return catalog.lookup(spark, None, schema, table).location


def partitions(spark, schema: str, table: str) -> list:
    from pyhudi.sqlext import catalog
    return catalog.lookup(spark, None, schema, table).partition_columns


def data(spark, schema, table, columns):
    return rows(hudi_rs_read(location(spark, schema, table)), columns)


def columns(spark, schema, table) -> list:
    return [c for c in spark.table(f"{schema}.{table}").columns if not c.startswith("_hoodie_")]


class TestPartitionsAnywhere:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, spark):
        return {"type": "pyhudi", "master": "local[2]", "threads": 4}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"events_1.csv": EVENTS_1, "events_2.csv": EVENTS_2, "places.csv": PLACES}

    @pytest.fixture(scope="class")
    def models(self):
        return {"mor_merge.sql": MOR_MERGE, "append_two.sql": APPEND_TWO, "overwrite_two.sql": OVERWRITE_TWO,
                "overwrite_two_b.sql": OVERWRITE_TWO, "overwrite_all.sql": OVERWRITE_ALL,
                "table_part.sql": TABLE_PART, "table_part_b.sql": TABLE_PART}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return {"snap.sql": SNAPSHOT}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "partitions_anywhere",
                "seeds": {"+column_types": {"dt": "date"},
                          "partitions_anywhere": {"places": {"+partition_by": ["dt"],
                                                             "+options": {"primaryKey": "id"}}}}}

    def test_partition_columns_anywhere(self, project, spark):
        schema = project.test_schema
        run_dbt(["seed"])
        run_dbt(["run", "--vars", "{batch: 1}"])
        run_dbt(["snapshot", "--vars", "{batch: 1}"])
        run_dbt(["run", "--vars", "{batch: 2}"])
        run_dbt(["snapshot", "--vars", "{batch: 2}"])

        # seed: declared partition column last, rows in their columns
        assert columns(spark, schema, "places") == ["id", "region", "amount", "dt"]
        assert partitions(spark, schema, "places") == ["dt"]
        assert [(i, str(d), r, float(a)) for i, d, r, a in data(spark, schema, "places",
                                                                  ["id", "dt", "region", "amount"])] == \
            [(1, "2024-01-01", "eu", 1.5), (2, "2024-01-02", "us", 2.5)]

        # the reported model: MOR, upserted by id, partitioned by dt
        props = open(os.path.join(location(spark, schema, "mor_merge"), ".hoodie", "hoodie.properties")).read()
        assert "hoodie.table.type=MERGE_ON_READ" in props and "hoodie.table.partition.fields=dt" in props
        assert columns(spark, schema, "mor_merge") == ["id", "ts", "amount", "dt"]
        assert [(i, str(d), a) for i, d, a in data(spark, schema, "mor_merge", ["id", "dt", "amount"])] == \
            [(1, "2024-01-01", 10), (2, "2024-01-01", 21), (3, "2024-01-02", 30), (4, "2024-01-03", 40)]

        # two partition columns in partition_by order, appended
        assert columns(spark, schema, "append_two") == ["id", "amount", "region", "dt"]
        assert partitions(spark, schema, "append_two") == ["region", "dt"]
        assert sorted((i, a) for i, a in data(spark, schema, "append_two", ["id", "amount"])) == \
            [(1, 10), (2, 20), (2, 21), (3, 30), (4, 40)]

        # dynamic overwrite: batch 2 replaced (01, us) and wrote (03, eu); the other partitions stay
        for name in ("overwrite_two", "overwrite_two_b"):
            assert columns(spark, schema, name) == ["total", "n", "dt", "region"]
            got = {(str(d), r): (t, n) for d, r, t, n in data(spark, schema, name, ["dt", "region", "total", "n"])}
            assert got == {("2024-01-01", "eu"): (10, 1), ("2024-01-01", "us"): (21, 1),
                           ("2024-01-02", "eu"): (30, 1), ("2024-01-03", "eu"): (40, 1)}, name

        # static: batch 2 only
        assert sorted(data(spark, schema, "overwrite_all", ["id", "amount"])) == [(2, 21), (4, 40)]
        for name in ("table_part", "table_part_b"):
            assert columns(spark, schema, name) == ["id", "amount", "dt"]
            assert partitions(spark, schema, name) == ["dt"]
            assert sorted(data(spark, schema, name, ["id", "amount"])) == [(2, 21), (4, 40)], name
            hoodie = os.listdir(os.path.join(location(spark, schema, name), ".hoodie"))
            assert any(f.endswith(".replacecommit") for f in hoodie), name    # rerun kept its timeline

        # snapshot partitioned by dt: id 2 has two versions, the old one closed
        assert partitions(spark, schema, "snap") == ["dt"] and columns(spark, schema, "snap")[-1] == "dt"
        history = sorted((i, a, closed is not None) for i, a, closed in
                         data(spark, schema, "snap", ["id", "amount", "dbt_valid_to"]))
        assert history == [(1, 10, False), (2, 20, True), (2, 21, False), (3, 30, False), (4, 40, False)]


MB_EVENTS = """id,event_time,dt,amount
1,2024-01-01 10:00:00,2024-01-01,10
2,2024-01-02 10:00:00,2024-01-02,20
"""

MICROBATCH = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_time',
          begin='2024-01-01', batch_size='day', partition_by=['dt']) }}
select id, event_time, dt, amount + {{ var('plus', 0) }} as amount from {{ ref('mb_events') }}
"""


class TestMicrobatchPartitions:
    """microbatch: each day's batch replaces its own partition (dynamic), never the table."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"mb_events.csv": MB_EVENTS}

    @pytest.fixture(scope="class")
    def models(self):
        return {"by_batch.sql": MICROBATCH}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"name": "microbatch_partitions",
                "seeds": {"+column_types": {"event_time": "timestamp", "dt": "date"}, "+event_time": "event_time"}}

    def test_each_batch_overwrites_its_partition(self, project, spark):
        schema = project.test_schema
        run_dbt(["seed"])
        run_dbt(["run", "--event-time-start", "2024-01-01", "--event-time-end", "2024-01-03"])
        run_dbt(["run", "--event-time-start", "2024-01-01", "--event-time-end", "2024-01-02", "--vars", "{plus: 1}"])
        assert columns(spark, schema, "by_batch") == ["id", "event_time", "amount", "dt"]
        assert [(i, str(d), a) for i, d, a in data(spark, schema, "by_batch", ["id", "dt", "amount"])] == \
            [(1, "2024-01-01", 11), (2, "2024-01-02", 20)]
