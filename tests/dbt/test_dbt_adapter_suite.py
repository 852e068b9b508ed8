"""dbt-tests-adapter conformance classes on `type: pyhudi` (every table they build is a Hudi table).

The suite's seeds all have a unique `id` column; Hudi tables need a record key (pyhudi does not generate keys for
pk-less tables yet), so each class's project declares it the dbt-spark way: `+options: {primaryKey: id}`.
"""

from __future__ import annotations

from typing import List

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental, BaseIncrementalNotSchemaChange
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import BaseMergeExcludeColumns
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import BaseIncrementalOnSchemaChange
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.adapter.simple_seed import seeds
from dbt.tests.adapter.simple_seed.test_seed import (BaseBasicSeedTests, BaseSeedConfigFullRefreshOff,
                                                     BaseSeedConfigFullRefreshOn, BaseSeedWithUniqueDelimiter,
                                                     BaseSimpleSeedEnabledViaConfig, BaseTestEmptySeed)
from dbt.tests.adapter.simple_seed.test_seed_type_override import BaseSimpleSeedColumnOverride

pytestmark = pytest.mark.spark


def keyed_seeds(name: str, key: str = "id") -> dict:
    """Seeds keyed by `id`: for tests that UPDATE seed rows (an upsert needs a record key to find the rows)."""
    return {"name": name, "seeds": {"+options": {"primaryKey": key}}}


class TestSimpleMaterializationsPyhudi(BaseSimpleMaterializations):
    pass


class TestSingularTestsPyhudi(BaseSingularTests):
    pass


class TestEmptyPyhudi(BaseEmpty):
    pass


class TestEphemeralPyhudi(BaseEphemeral):
    pass


class TestIncrementalPyhudi(BaseIncremental):
    pass


class TestIncrementalNotSchemaChangePyhudi(BaseIncrementalNotSchemaChange):
    pass    # the model has its own unique_key


class TestGenericTestsPyhudi(BaseGenericTests):
    pass


class TestSnapshotCheckColsPyhudi(BaseSnapshotCheckCols):
    # the test UPDATEs rows of its seed between snapshots: a pk-less Hudi table cannot be updated
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return keyed_seeds("snapshot_strategy_check_cols")


class TestSnapshotTimestampPyhudi(BaseSnapshotTimestamp):
    # the test UPDATEs rows of its seed between snapshots: a pk-less Hudi table cannot be updated
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return keyed_seeds("snapshot_strategy_timestamp")


class TestAdapterMethodPyhudi(BaseAdapterMethod):
    pass


class TestValidateConnectionPyhudi(BaseValidateConnection):
    pass


# ---------------------------------------------------------------- incremental

class TestIncrementalUniqueKeyPyhudi(BaseIncrementalUniqueKey):
    pass    # models with a unique_key merge (upsert on that record key); without one they append


class TestIncrementalOnSchemaChangePyhudi(BaseIncrementalOnSchemaChange):
    pass


class TestMergeExcludeColumnsPyhudi(BaseMergeExcludeColumns):
    pass


class TestIncrementalPredicatesMergePyhudi(BaseIncrementalPredicates):
    # dbt-spark runs this class with the merge strategy and a predicate on the target
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_predicates": ["dbt_internal_dest.id != 2"],
                           "+incremental_strategy": "merge"}}


# ---------------------------------------------------------------- seeds

def _spark_seed_expected_sql() -> List[str]:
    """The suite's `seed_expected` setup is Postgres DDL/DML; the same table and rows in Spark SQL (a Hudi table)."""
    sql = seeds.seeds__expected_sql.replace("TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP").replace("TEXT", "STRING")
    sql = sql.replace('("seed_id","first_name","email","ip_address","birthday")', "")
    create, insert = [part.strip() for part in sql.split(";") if part.strip()]
    return [create + " using hudi", insert]


class SparkSeedExpected:
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        for statement in _spark_seed_expected_sql():
            project.run_sql(statement)


class TestBasicSeedTestsPyhudi(SparkSeedExpected, BaseBasicSeedTests):
    pass


class TestSeedConfigFullRefreshOnPyhudi(SparkSeedExpected, BaseSeedConfigFullRefreshOn):
    pass


class TestSeedConfigFullRefreshOffPyhudi(SparkSeedExpected, BaseSeedConfigFullRefreshOff):
    pass


class TestSeedWithUniqueDelimiterPyhudi(SparkSeedExpected, BaseSeedWithUniqueDelimiter):
    pass


class TestSimpleSeedEnabledViaConfigPyhudi(BaseSimpleSeedEnabledViaConfig):
    pass


class TestEmptySeedPyhudi(BaseTestEmptySeed):
    pass


class TestSimpleSeedColumnOverridePyhudi(BaseSimpleSeedColumnOverride):
    # the suite's override types are Postgres names; Spark spells `text` as `string`
    @staticmethod
    def seed_enabled_types():
        return {"seed_id": "string", "birthday": "date"}

    @staticmethod
    def seed_tricky_types():
        return {"seed_id_str": "string", "looks_like_a_bool": "string", "looks_like_a_date": "string"}
