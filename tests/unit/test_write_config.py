"""WriteConfig (pyhudi.config.write_config): the write's hoodie.* options parsed once into a frozen typed object.
Hudi's defaults, SQL aliases, errors naming the key, immutability, and that the writer modules read its fields
instead of parsing keys themselves. No Spark."""

from __future__ import annotations

import dataclasses
import pathlib
import re

import pytest

from pyhudi import config as C
from pyhudi.errors import ConfigError, PyHudiError

# Apache Hudi 0.14/0.15 defaults (https://hudi.apache.org/docs/configurations), by WriteConfig field
HUDI_DEFAULTS = {
    "operation": "upsert", "table_type": "COPY_ON_WRITE", "timeline_timezone": "LOCAL", "record_key_field": None,
    "partition_path_field": "", "precombine_field": None,
    "payload_class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload", "event_time_field": "ts",
    "combine_before_insert": False, "combine_before_upsert": True, "combine_before_delete": True,
    "max_file_size": 125829120, "small_file_limit": 104857600, "record_size_estimate": 1024,
    "insert_split_size": 500000, "auto_split_inserts": True, "parquet_compression": "gzip",
    "bloom_filter_type": "DYNAMIC_V0", "bloom_num_entries": 60000, "bloom_fpp": 1e-9,
    "bloom_dynamic_max_entries": 100000, "bulk_insert_sort_mode": "NONE", "log_max_size": 1073741824,
    "log_block_max_size": 268435456,
    "clustering_updates_strategy": "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
}
SETTINGS = {f.name: f.metadata["setting"] for f in dataclasses.fields(C.WriteConfig) if "setting" in f.metadata}
WRITER = pathlib.Path(C.__file__).parents[1]


def test_defaults_are_hudis_and_the_declared_ones():
    wc = C.WriteConfig.from_options({})
    for name, default in HUDI_DEFAULTS.items():
        assert getattr(wc, name) == default, name
    for name, prop in SETTINGS.items():   # every field reads its own key's default
        assert getattr(wc, name) == prop.default, name
    assert dict(wc.options) == {}
    assert not any(wc.given(name) for name in SETTINGS)


def test_values_are_parsed_into_their_types():
    wc = C.WriteConfig.from_options({
        "hoodie.datasource.write.operation": " Bulk_Insert ", "hoodie.parquet.max.file.size": "2048",
        "hoodie.combine.before.insert": "TRUE", "hoodie.bulkinsert.sort.mode": "global_sort",
        "hoodie.index.bloom.fpp": "0.01", "hoodie.parquet.compression.codec": "SNAPPY",
        "hoodie.copyonwrite.insert.auto.split": "false", "hoodie.copyonwrite.insert.split.size": "7"})
    assert (wc.operation, wc.max_file_size, wc.combine_before_insert) == ("bulk_insert", 2048, True)
    assert (wc.bulk_insert_sort_mode, wc.bloom_fpp, wc.parquet_compression) == ("GLOBAL_SORT", 0.01, "snappy")
    assert wc.records_per_new_file(100) == 7   # auto split off: hoodie.copyonwrite.insert.split.size
    assert dataclasses.replace(wc, auto_split_inserts=True).records_per_new_file(100) == 20   # 2048 // 100
    assert dataclasses.replace(wc, auto_split_inserts=True).records_per_new_file(4096) == 1


@pytest.mark.parametrize("options, field, value", [
    ({"primaryKey": "id"}, "record_key_field", "id"),
    ({"PRIMARYKEY": "a,b"}, "record_key_field", "a,b"),
    ({"preCombineField": "ts"}, "precombine_field", "ts"),
    ({"precombineKey": "seq"}, "precombine_field", "seq"),
    ({"type": "mor"}, "table_type", "MERGE_ON_READ"),
    ({"type": "COW"}, "table_type", "COPY_ON_WRITE"),
    ({"hoodie.datasource.write.table.type": "mor"}, "table_type", "MERGE_ON_READ"),
])
def test_sql_aliases_and_short_spellings_resolve(options, field, value):
    wc = C.WriteConfig.from_options(options)
    assert getattr(wc, field) == value
    assert wc.given(field)
    assert wc.options[SETTINGS[field].key] == value   # the text other layers read is resolved too


def _bad_value(prop) -> str | None:
    if prop.choices is not None:
        return "not-a-choice"
    if prop.parse in (str, C.upper, C.lower):
        return None
    return "not-a-value"


@pytest.mark.parametrize("name", sorted(n for n, p in SETTINGS.items() if _bad_value(p) is not None))
def test_a_bad_value_raises_a_pyhudi_error_naming_the_key(name):
    key = SETTINGS[name].key
    with pytest.raises(PyHudiError, match=re.escape(key)) as raised:
        C.WriteConfig.from_options({key: _bad_value(SETTINGS[name])})
    assert isinstance(raised.value, ConfigError)


@pytest.mark.parametrize("key, value", [("hoodie.parquet.max.file.size", "0"),
                                        ("hoodie.parquet.small.file.limit", "-1"),
                                        ("hoodie.logfile.max.size", "1.5")])
def test_out_of_range_sizes_are_refused_with_the_key(key, value):
    with pytest.raises(ConfigError, match=re.escape(key)):
        C.WriteConfig.from_options({key: value})


def test_it_is_frozen_and_its_options_are_read_only():
    wc = C.WriteConfig.from_options({"hoodie.table.name": "t"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        wc.precombine_field = "ts"
    with pytest.raises(TypeError):
        wc.options["hoodie.table.name"] = "u"
    assert hash(wc) == hash(C.WriteConfig.from_options({"hoodie.table.name": "t"}))


def test_the_same_from_a_hoodie_config_as_from_the_options():
    options = {"primaryKey": "id", "hoodie.parquet.small.file.limit": "0", "hoodie.logfile.max.size": "4096"}
    assert C.WriteConfig.from_options(C.HoodieConfig(options)) == C.WriteConfig.from_options(options)


def test_resolved_values_reach_fields_and_text_alike():
    wc = C.WriteConfig.from_options({"hoodie.table.name": "t"})
    resolved = wc.with_values(precombine_field="ts", payload_class=C.PAYLOAD_CLASS.default)
    assert resolved.precombine_field == "ts" and resolved.given("precombine_field")
    assert resolved.options[C.PRECOMBINE.key] == "ts" and resolved.options[C.TABLE_NAME.key] == "t"
    assert wc.precombine_field is None and C.PRECOMBINE.key not in wc.options   # the original is unchanged
    extended = resolved.with_options({"hoodie.clean.async": "true"})
    assert extended == resolved and extended.options["hoodie.clean.async"] == "true"


@pytest.mark.parametrize("operation, combines", [
    ("upsert", False), ("delete", True), ("insert", True), ("bulk_insert", True), ("insert_overwrite", True),
    ("insert_overwrite_table", True)])
def test_combine_before_follows_the_operations_key(operation, combines):
    wc = C.WriteConfig.from_options({"hoodie.combine.before.upsert": "false", "hoodie.combine.before.insert": "true"})
    assert wc.combine_before(operation) is combines


def test_writer_modules_read_fields_not_keys():
    """No writer module parses a hoodie.* option itself: they read WriteConfig fields."""
    modules = [*sorted((WRITER / "writer").glob("*.py")),
               *(WRITER / "client" / name for name in ("write.py", "explain.py", "dry_run.py"))]
    parsing = re.compile(r"\.get\(C\.[A-Z_]+\)|C\.option\(|\.raw\b")
    offenders = [f"{path.name}: {line.strip()}" for path in modules
                 for line in path.read_text().splitlines() if parsing.search(line)]
    assert not offenders, offenders
