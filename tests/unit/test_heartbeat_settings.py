"""Heartbeat settings come from the typed config (config.HEARTBEAT_*): Hudi's defaults, and a bad value is a
ConfigError naming the key (a 0 ms interval would make every live writer look dead)."""

import pytest

from pyhudi import config as C
from pyhudi.errors import ConfigError
from pyhudi.transaction.heartbeat import heartbeat_settings

INTERVAL, MISSES = "hoodie.client.heartbeat.interval_in_ms", "hoodie.client.heartbeat.tolerable.misses"


def test_defaults_are_hudis():
    assert heartbeat_settings(None) == heartbeat_settings({}) == (60000, 2)
    assert heartbeat_settings({INTERVAL: "", MISSES: " "}) == (60000, 2)
    assert (C.HEARTBEAT_INTERVAL_MS.key, C.HEARTBEAT_INTERVAL_MS.default) == (INTERVAL, 60000)
    assert (C.HEARTBEAT_TOLERABLE_MISSES.key, C.HEARTBEAT_TOLERABLE_MISSES.default) == (MISSES, 2)


def test_values_are_parsed_once_by_the_typed_config():
    assert heartbeat_settings({INTERVAL: "1500", MISSES: "4"}) == (1500, 4)
    assert heartbeat_settings(C.HoodieConfig({INTERVAL: "250"})) == (250, 2)


@pytest.mark.parametrize("key,value", [(INTERVAL, "0"), (INTERVAL, "-5"), (INTERVAL, "fast"), (MISSES, "0"),
                                       (MISSES, "two")])
def test_bad_values_name_the_key(key, value):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        heartbeat_settings({key: value})
