"""Which write an INSERT INTO makes (sqlext/insert_config.py), per table version: the Java-written Hudi 1.x fixtures
are the judge (v8 fixtures re-inserting a key hold it once, v9 fixtures hold it twice)."""

import pytest

from pyhudi.sqlext.insert_config import insert_into_settings

KEYED = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts"}


@pytest.mark.parametrize("version, operation", [("6", "upsert"), ("8", "upsert"), ("9", "insert")])
def test_a_keyed_table_with_an_ordering_field(version, operation):
    chosen, extra = insert_into_settings(dict(KEYED), "t", version)
    assert chosen == operation
    # an insert keeps a stored key twice (HoodieSparkSqlWriter's allow-duplicates for inserts)
    assert (extra.get("hoodie.merge.allow.duplicate.on.inserts") == "true") == (operation == "insert")


@pytest.mark.parametrize("version", ["6", "8", "9"])
def test_the_operation_option_wins_on_every_version(version):
    options = dict(KEYED, **{"hoodie.spark.sql.insert.into.operation": "upsert"})
    assert insert_into_settings(options, "t", version)[0] == "upsert"
    options = dict(KEYED, **{"hoodie.spark.sql.insert.into.operation": "insert"})
    assert insert_into_settings(options, "t", version)[0] == "insert"


def test_the_legacy_insert_mode_still_upserts_on_version_9():
    # the legacy flow deduces from the catalog table's ordering fields, which Hudi 1.1 reads on version 9 too
    options = dict(KEYED, **{"hoodie.sql.insert.mode": "upsert"})
    assert insert_into_settings(options, "t", "9")[0] == "upsert"
