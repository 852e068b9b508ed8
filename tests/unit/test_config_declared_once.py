"""Options read by the lock, compaction and clustering are declared once in config.py (Hudi's key, default, doc)
and parsed by its one parser: a bad value is a ConfigError naming the key, a missing one takes Hudi's default."""

from __future__ import annotations

import pytest

from pyhudi import config as C
from pyhudi.errors import ConfigError
from pyhudi.transaction.lock import FileSystemLock
from pyhudi.storage import Storage


def test_lock_keys_are_declared_with_hudi_defaults():
    assert C.LOCK_WAIT_TIME_MS.default == 60000 and C.LOCK_RETRY_WAIT_TIME_MS.default == 1000
    assert C.LOCK_NUM_RETRIES.default == 15 and C.LOCK_FILESYSTEM_EXPIRE.default == 0
    for prop in (C.LOCK_PROVIDER, C.LOCK_FILESYSTEM_PATH, C.LOCK_FILESYSTEM_EXPIRE, C.LOCK_WAIT_TIME_MS,
                 C.LOCK_RETRY_WAIT_TIME_MS, C.LOCK_NUM_RETRIES):
        assert prop.key.startswith("hoodie.write.lock.") and prop.doc and C.known_key(prop.key)


def test_lock_reads_the_typed_config(tmp_path):
    lock = FileSystemLock(Storage(str(tmp_path)), {"hoodie.write.lock.filesystem.expire": " 2 ",
                                                   "hoodie.write.lock.wait_time_ms": "500",
                                                   "hoodie.write.lock.wait_time_ms_between_retry": ""})
    assert (lock.expire_ms, lock.wait_ms, lock.retry_wait_ms, lock.retries) == (120000, 500, 1000, 15)
    with pytest.raises(ConfigError, match="hoodie.write.lock.num_retries"):
        FileSystemLock(Storage(str(tmp_path)), {"hoodie.write.lock.num_retries": "many"})
    with pytest.raises(ConfigError, match="hoodie.write.lock.provider"):
        FileSystemLock(Storage(str(tmp_path)), {"hoodie.write.lock.provider": "org.example.ZkLock"})


def test_one_parser_for_layer_declared_options():
    from pyhudi.services.clustering import strategy as clustering_strategy
    from pyhudi.services.compaction import plan as compaction_plan
    assert compaction_plan.int_option is C.int_option and compaction_plan.bool_option is C.bool_option
    assert C.int_option({"k": " 7"}, "k", 1) == 7 and C.int_option({}, "k", 1) == 1
    assert C.bool_option({"k": "TRUE"}, "k", False) is True and C.bool_option({}, "k", False) is False
    with pytest.raises(ConfigError, match="hoodie.clustering.plan.strategy.max.num.groups"):
        clustering_strategy.ClusteringOptions.of({"hoodie.clustering.plan.strategy.max.num.groups": "x"})
    with pytest.raises(ConfigError, match="hoodie.clustering.plan.strategy.single.group.clustering.enabled"):
        clustering_strategy.ClusteringOptions.of(
            {"hoodie.clustering.plan.strategy.single.group.clustering.enabled": "maybe"})


def test_compaction_keys_are_declared_and_typed():
    cfg = C.HoodieConfig({"hoodie.compaction.target.io": "100", "hoodie.compaction.logfile.num.threshold": "3"})
    assert cfg.get(C.COMPACTION_TARGET_IO) == 100 and cfg.get(C.COMPACTION_LOG_NUM_THRESHOLD) == 3
    assert C.COMPACTION_TARGET_IO.default == 500 * 1024
    with pytest.raises(ConfigError, match="hoodie.compaction.target.io"):
        C.HoodieConfig({"hoodie.compaction.target.io": "lots"})
