"""dbt-tests-adapter conformance classes on `type: pyhudi` (every table they build is a Hudi table).

The suite's seeds all have a unique `id` column; Hudi tables need a record key (pyhudi does not generate keys for
pk-less tables yet), so each class's project declares it the dbt-spark way: `+options: {primaryKey: id}`.
"""

from __future__ import annotations

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

pytestmark = pytest.mark.spark


def keyed(name: str, key: str = "id") -> dict:
    return {"name": name,
            "seeds": {"+options": {"primaryKey": key}},
            "models": {"+options": {"primaryKey": key}}}


class TestSimpleMaterializationsPyhudi(BaseSimpleMaterializations):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return keyed("base")


class TestSingularTestsPyhudi(BaseSingularTests):
    pass


class TestEmptyPyhudi(BaseEmpty):
    pass


class TestEphemeralPyhudi(BaseEphemeral):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return keyed("ephemeral")


class TestIncrementalPyhudi(BaseIncremental):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return keyed("incremental")


class TestIncrementalNotSchemaChangePyhudi(BaseIncrementalNotSchemaChange):
    pass    # the model has its own unique_key


class TestGenericTestsPyhudi(BaseGenericTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return keyed("generic_tests")


class TestSnapshotCheckColsPyhudi(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return keyed("snapshot_strategy_check_cols")


class TestSnapshotTimestampPyhudi(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return keyed("snapshot_strategy_timestamp")


class TestAdapterMethodPyhudi(BaseAdapterMethod):
    pass


class TestValidateConnectionPyhudi(BaseValidateConnection):
    pass
