"""pyhudi.config groups: each key declared once, in its group, with Hudi's default; bad values are ConfigErrors
naming the key; the frozen typed configs of the services parse once; SQL/dbt aliases resolve; unknown hoodie.*
keys warn. No Spark."""

from __future__ import annotations

import dataclasses
import importlib
import warnings

import pytest

from pyhudi import config as C
from pyhudi.config.core import ConfigProperty, declare, lower, upper
from pyhudi.errors import ConfigError

GROUPS = ("table", "write", "keygen", "index", "read", "cdc", "clean", "archive", "compaction", "clustering", "lock")

# Apache Hudi 0.14/0.15 defaults (https://hudi.apache.org/docs/configurations), by the group that owns the key
HUDI_DEFAULTS = {
    "table": {"hoodie.table.version": "6", "hoodie.timeline.layout.version": "1", "hoodie.archivelog.folder": "archived",
              "hoodie.table.type": "COPY_ON_WRITE", "hoodie.table.base.file.format": "PARQUET",
              "hoodie.populate.meta.fields": True, "hoodie.table.timeline.timezone": "LOCAL",
              "hoodie.database.name": "default"},
    "write": {"hoodie.datasource.write.operation": "upsert", "hoodie.parquet.max.file.size": 125829120,
              "hoodie.parquet.small.file.limit": 104857600, "hoodie.copyonwrite.record.size.estimate": 1024,
              "hoodie.copyonwrite.insert.split.size": 500000, "hoodie.copyonwrite.insert.auto.split": True,
              "hoodie.parquet.compression.codec": "gzip", "hoodie.bulkinsert.sort.mode": "NONE",
              "hoodie.combine.before.insert": False, "hoodie.combine.before.upsert": True,
              "hoodie.combine.before.delete": True, "hoodie.logfile.max.size": 1073741824,
              "hoodie.datasource.write.hive_style_partitioning": False,
              "hoodie.datasource.write.partitionpath.urlencode": False,
              "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
              "hoodie.metadata.enable": True},
    "keygen": {"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": False},
    "index": {"hoodie.index.type": "SIMPLE", "hoodie.index.bloom.num_entries": 60000, "hoodie.index.bloom.fpp": 1e-9,
              "hoodie.bloom.index.filter.type": "DYNAMIC_V0", "hoodie.bloom.index.filter.dynamic.max.entries": 100000,
              "hoodie.bloom.index.prune.by.ranges": True, "hoodie.bloom.index.update.partition.path": True,
              "hoodie.simple.index.update.partition.path": True, "hoodie.index.bucket.engine": "SIMPLE",
              "hoodie.bucket.index.num.buckets": 256},
    "read": {"hoodie.datasource.query.type": "snapshot", "hoodie.datasource.query.incremental.format": "latest_state",
             "hoodie.datasource.read.incr.fallback.fulltablescan.enable": False},
    "cdc": {"hoodie.table.cdc.enabled": False, "hoodie.table.cdc.supplemental.logging.mode": "DATA_BEFORE_AFTER"},
    "clean": {"hoodie.clean.automatic": True, "hoodie.cleaner.policy": "KEEP_LATEST_COMMITS",
              "hoodie.cleaner.commits.retained": 10, "hoodie.cleaner.fileversions.retained": 3,
              "hoodie.cleaner.hours.retained": 24, "hoodie.cleaner.incremental.mode": True, "hoodie.clean.async": False,
              "hoodie.clean.trigger.strategy": "NUM_COMMITS", "hoodie.clean.max.commits": 1,
              "hoodie.cleaner.policy.failed.writes": "EAGER"},
    "archive": {"hoodie.archive.automatic": True, "hoodie.keep.min.commits": 20, "hoodie.keep.max.commits": 30},
    "compaction": {"hoodie.compact.inline": False, "hoodie.compact.schedule.inline": False,
                   "hoodie.compact.inline.max.delta.commits": 5, "hoodie.compact.inline.max.delta.seconds": 3600,
                   "hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
                   "hoodie.compaction.strategy":
                       "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",
                   "hoodie.compaction.target.io": 512000, "hoodie.compaction.logfile.size.threshold": 0,
                   "hoodie.compaction.logfile.num.threshold": 0},
    "clustering": {"hoodie.clustering.inline": False, "hoodie.clustering.schedule.inline": False,
                   "hoodie.clustering.inline.max.commits": 4,
                   "hoodie.clustering.plan.strategy.small.file.limit": 314572800,
                   "hoodie.clustering.plan.strategy.max.bytes.per.group": 2147483648,
                   "hoodie.clustering.plan.strategy.max.num.groups": 30,
                   "hoodie.clustering.plan.strategy.target.file.max.bytes": 1073741824,
                   "hoodie.clustering.plan.strategy.single.group.clustering.enabled": True,
                   "hoodie.clustering.plan.strategy.daybased.lookback.partitions": 2,
                   "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions": 0,
                   "hoodie.clustering.plan.partition.filter.mode": "NONE", "hoodie.layout.optimize.strategy": "linear",
                   "hoodie.clustering.updates.strategy":
                       "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy"},
    "lock": {"hoodie.write.lock.wait_time_ms": 60000, "hoodie.write.lock.wait_time_ms_between_retry": 1000,
             "hoodie.write.lock.num_retries": 15, "hoodie.write.lock.filesystem.expire": 0,
             "hoodie.client.heartbeat.interval_in_ms": 60000, "hoodie.client.heartbeat.tolerable.misses": 2},
}


def _declared_in(group: str) -> dict[str, ConfigProperty]:
    """The properties the group module declares (not those it imports from another group)."""
    module = importlib.import_module(f"pyhudi.config.{group}")
    return {v.key: v for v in vars(module).values() if isinstance(v, ConfigProperty) and v.group == group}


@pytest.mark.parametrize("group", sorted(HUDI_DEFAULTS))
def test_each_group_declares_its_keys_with_hudi_defaults(group):
    declared = _declared_in(group)
    for key, default in HUDI_DEFAULTS[group].items():
        assert key in declared, f"{key} is not declared in pyhudi.config.{group}"
        assert declared[key].default == default, key


def test_every_key_is_declared_once_in_one_group():
    seen: dict[str, str] = {}
    for group in GROUPS:
        for key in _declared_in(group):
            assert key not in seen, f"{key} declared in {seen[key]} and {group}"
            seen[key] = group
    assert set(seen) == set(C.PROPERTIES)   # no key outside a group
    with pytest.raises(RuntimeError, match="declared twice"):
        declare("hoodie.table.name", None)


def _bad_value(prop: ConfigProperty) -> str | None:
    if prop.choices is not None:
        return "not-a-choice"
    if prop.parse in (str, upper, lower):   # free text (checked by the layer that reads it)
        return None
    return "not-a-value"


@pytest.mark.parametrize("key", sorted(k for k, p in C.PROPERTIES.items() if _bad_value(p) is not None))
def test_a_bad_value_is_a_config_error_naming_the_key(key):
    prop = C.PROPERTIES[key]
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        C.HoodieConfig({key: _bad_value(prop)}, warn_unknown=False)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        C.option({key: _bad_value(prop)}, prop)


def test_typed_group_configs_parse_once_and_are_frozen():
    options = {"hoodie.cleaner.policy": "keep_latest_file_versions", "hoodie.cleaner.fileversions.retained": "2",
               "hoodie.keep.min.commits": "12", "hoodie.keep.max.commits": "14", "hoodie.compact.inline": "true",
               "hoodie.compaction.target.io": "100", "hoodie.write.lock.num_retries": "3",
               "hoodie.client.heartbeat.interval_in_ms": "500", "hoodie.index.type": "global_bloom",
               "hoodie.bloom.index.update.partition.path": "false", "hoodie.clean.max.commits": "4"}
    clean = C.CleanConfig.from_options(options)
    assert (clean.policy, clean.file_versions_retained, clean.commits_retained) == ("KEEP_LATEST_FILE_VERSIONS", 2, 10)
    archive = C.ArchiveConfig.from_options(options)
    assert (archive.automatic, archive.keep_min_commits, archive.keep_max_commits) == (True, 12, 14)
    compaction = C.CompactionConfig.from_options(options)
    assert (compaction.inline, compaction.target_io_mb, compaction.max_delta_commits) == (True, 100, 5)
    assert C.LockConfig.from_options(options).num_retries == 3
    assert C.HeartbeatConfig.from_options(options) == C.HeartbeatConfig(500, 2)
    index = C.IndexConfig.from_options(options)
    assert (index.index_type, index.update_partition_path) == ("GLOBAL_BLOOM", False)
    assert C.CleanTriggerConfig.from_options(options).max_commits == 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        clean.policy = "KEEP_LATEST_COMMITS"
    # the same typed view from a HoodieConfig as from the raw options
    assert C.CompactionConfig.from_options(C.HoodieConfig(options)) == compaction


def test_archive_config_enforces_hudis_retention_rule():
    with pytest.raises(ConfigError, match="hoodie.keep.min.commits"):
        C.ArchiveConfig.from_options({"hoodie.keep.min.commits": "5"})   # <= cleaner.commits.retained (10)
    with pytest.raises(ConfigError, match="hoodie.keep.max.commits"):
        C.HoodieConfig({"hoodie.keep.max.commits": "20"})                  # <= keep.min.commits (20)


def test_sql_and_dbt_aliases_resolve_from_one_place():
    resolved = C.normalize_options({"primaryKey": "id", "PRECOMBINEFIELD": "ts", "type": "mor", "x": True})
    assert resolved == {C.RECORD_KEY.key: "id", C.PRECOMBINE.key: "ts", C.TABLE_TYPE.key: "MERGE_ON_READ",
                        "x": "true"}
    assert C.HoodieConfig({"type": "cow"}).get(C.TABLE_TYPE) == "COPY_ON_WRITE"
    assert {C.SQL_ALIASES[k.lower()] for k in (C.PRIMARY_KEY, C.PRECOMBINE_FIELD, C.TYPE)} == {
        C.RECORD_KEY.key, C.PRECOMBINE.key, C.TABLE_TYPE.key}
    from dbt.adapters.pyhudi import impl
    assert impl.OPTION_ALIASES is C.DBT_OPTION_ALIASES
    assert C.DBT_OPTION_ALIASES["precombine_key"] == C.PRECOMBINE_FIELD


def test_unknown_hoodie_key_warns_and_known_keys_do_not():
    with pytest.warns(UserWarning, match="hoodie.datasource.write.recordky.field"):
        C.HoodieConfig({"hoodie.datasource.write.recordky.field": "id"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C.HoodieConfig({"hoodie.embed.timeline.server": "false", "hoodie.keygen.timebased.timezone": "UTC",
                        "hoodie.table.version": "6", "spark.sql.x": "1", "primaryKey": "id"})
        C.HoodieConfig({"hoodie.datasource.write.recordky.field": "id"}, warn_unknown=False)
