"""dbt-spark's own Hudi strategy test on `type: pyhudi`.

The models and expected seeds below are data from dbt-labs/dbt-spark, tests/functional/adapter/
incremental_strategies/fixtures.py (append_hudi_sql, hudi_insert_overwrite_no_partitions_sql,
hudi_insert_overwrite_partitions_sql, hudi_merge_no_key_sql, hudi_merge_unique_key_sql, hudi_update_columns_sql)
and seeds.py (expected_*_csv), as written there; the check is that file's class TestHudiStrategies: seed, run,
run, then each model equals its expected seed (dbt-tests-adapter's run_dbt / check_relations_equal). That class
also builds merge_update_columns without checking it; here it is checked against expected_partial_upsert.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import check_relations_equal, run_dbt

pytestmark = pytest.mark.spark


# ---- data from dbt-labs/dbt-spark (fixtures.py and seeds.py named above), verbatim

append_hudi_sql = """
{{ config(
    materialized = 'incremental',
    incremental_strategy = 'append',
    file_format = 'hudi',
) }}

{% if not is_incremental() %}

select cast(1 as bigint) as id, 'hello' as msg
union all
select cast(2 as bigint) as id, 'goodbye' as msg

{% else %}

select cast(2 as bigint) as id, 'yo' as msg
union all
select cast(3 as bigint) as id, 'anyway' as msg

{% endif %}
""".lstrip()

hudi_insert_overwrite_no_partitions_sql = """
{{ config(
    materialized = 'incremental',
    incremental_strategy = 'insert_overwrite',
    file_format = 'hudi',
) }}

{% if not is_incremental() %}

select cast(1 as bigint) as id, 'hello' as msg
union all
select cast(2 as bigint) as id, 'goodbye' as msg

{% else %}

select cast(2 as bigint) as id, 'yo' as msg
union all
select cast(3 as bigint) as id, 'anyway' as msg

{% endif %}
""".lstrip()

hudi_insert_overwrite_partitions_sql = """
{{ config(
    materialized = 'incremental',
    incremental_strategy = 'insert_overwrite',
    partition_by = 'id',
    file_format = 'hudi',
) }}

{% if not is_incremental() %}

select cast(1 as bigint) as id, 'hello' as msg
union all
select cast(2 as bigint) as id, 'goodbye' as msg

{% else %}

select cast(2 as bigint) as id, 'yo' as msg
union all
select cast(3 as bigint) as id, 'anyway' as msg

{% endif %}
""".lstrip()

hudi_merge_no_key_sql = """
{{ config(
    materialized = 'incremental',
    incremental_strategy = 'merge',
    file_format = 'hudi',
) }}

{% if not is_incremental() %}

select cast(1 as bigint) as id, 'hello' as msg
union all
select cast(2 as bigint) as id, 'goodbye' as msg

{% else %}

select cast(2 as bigint) as id, 'yo' as msg
union all
select cast(3 as bigint) as id, 'anyway' as msg

{% endif %}
""".lstrip()

hudi_merge_unique_key_sql = """
{{ config(
    materialized = 'incremental',
    incremental_strategy = 'merge',
    file_format = 'hudi',
    unique_key = 'id',
) }}

{% if not is_incremental() %}

select cast(1 as bigint) as id, 'hello' as msg
union all
select cast(2 as bigint) as id, 'goodbye' as msg

{% else %}

select cast(2 as bigint) as id, 'yo' as msg
union all
select cast(3 as bigint) as id, 'anyway' as msg

{% endif %}
""".lstrip()

hudi_update_columns_sql = """
{{ config(
    materialized = 'incremental',
    incremental_strategy = 'merge',
    file_format = 'hudi',
    unique_key = 'id',
    merge_update_columns = ['msg'],
) }}

{% if not is_incremental() %}

select cast(1 as bigint) as id, 'hello' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'goodbye' as msg, 'red' as color

{% else %}

-- msg will be updated, color will be ignored
select cast(2 as bigint) as id, 'yo' as msg, 'green' as color
union all
select cast(3 as bigint) as id, 'anyway' as msg, 'purple' as color

{% endif %}
""".lstrip()

expected_append_csv = """
id,msg
1,hello
2,goodbye
2,yo
3,anyway
""".lstrip()

expected_overwrite_csv = """
id,msg
2,yo
3,anyway
""".lstrip()

expected_upsert_csv = """
id,msg
1,hello
2,yo
3,anyway
""".lstrip()

expected_partial_upsert_csv = """
id,msg,color
1,hello,blue
2,yo,red
3,anyway,purple
""".lstrip()


class TestHudiStrategies:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"expected_append.csv": expected_append_csv, "expected_overwrite.csv": expected_overwrite_csv,
                "expected_upsert.csv": expected_upsert_csv,
                "expected_partial_upsert.csv": expected_partial_upsert_csv}

    @pytest.fixture(scope="class")
    def models(self):
        return {"append.sql": append_hudi_sql,
                "insert_overwrite_no_partitions.sql": hudi_insert_overwrite_no_partitions_sql,
                "insert_overwrite_partitions.sql": hudi_insert_overwrite_partitions_sql,
                "merge_no_key.sql": hudi_merge_no_key_sql,
                "merge_unique_key.sql": hudi_merge_unique_key_sql,
                "merge_update_columns.sql": hudi_update_columns_sql}

    def test_hudi_strategies(self, project):
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["run"])
        check_relations_equal(project.adapter, ["append", "expected_append"])
        check_relations_equal(project.adapter, ["merge_no_key", "expected_append"])
        check_relations_equal(project.adapter, ["merge_unique_key", "expected_upsert"])
        check_relations_equal(project.adapter, ["insert_overwrite_no_partitions", "expected_overwrite"])
        check_relations_equal(project.adapter, ["insert_overwrite_partitions", "expected_upsert"])
        check_relations_equal(project.adapter, ["merge_update_columns", "expected_partial_upsert"])
