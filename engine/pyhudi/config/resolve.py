"""Options resolved against the declarations: aliases applied, each declared key parsed once (a bad value is a
ConfigError naming the key), cross-key rules checked, unknown `hoodie.*` keys warned about so a typo is visible."""

from __future__ import annotations

import warnings
from dataclasses import field, fields
from typing import TYPE_CHECKING, Any, Mapping, TypeVar

from pyhudi.config.aliases import normalize_options
from pyhudi.config.core import PROPERTIES, VALIDATORS, ConfigProperty, bool_value, parse_value, whole_number

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Settings = TypeVar("_Settings", bound="DataclassInstance")   # a frozen group config of `setting(...)` fields

# Hudi keys pyhudi accepts without effect that a user may expect to change something: key -> why (the client warns
# once per process, pyhudi.client.ignored_options).
IGNORED_OPTIONS = {
    "hoodie.embed.timeline.server": "pyhudi has no timeline server; each process reads the timeline itself",
    "hoodie.bloom.index.use.caching": "index lookups run in one Spark job",
    "hoodie.bloom.index.bucketized.checking": "index lookups run in one Spark job",
    "hoodie.bloom.index.use.treebased.filter": "the key ranges of every file are checked",
    "hoodie.simple.index.use.caching": "index lookups run in one Spark job",
    "hoodie.datasource.write.row.writer.enable": "bulk_insert always writes rows through Arrow",
    "hoodie.file.group.reader.enabled": "pyhudi has one file-slice reader",
}
# Keys Hudi defines that pyhudi accepts but has no behaviour for (no warning: they are legitimate Hudi keys).
ACCEPTED_WITHOUT_EFFECT = frozenset(IGNORED_OPTIONS) | frozenset({
    "hoodie.bloom.index.parallelism",
    "hoodie.simple.index.parallelism",
    "hoodie.global.simple.index.parallelism",
    "hoodie.insert.shuffle.parallelism",
    "hoodie.delete.shuffle.parallelism",
    "hoodie.datasource.write.reconcile.schema",
    "hoodie.datasource.hive_sync.enable",
    "hoodie.schema.on.read.enable",
    "hoodie.datasource.write.record.merger.impls",     # SQL-layer keys (pyhudi.sqlext) kept in TBLPROPERTIES
    "hoodie.datasource.write.record.merger.strategy",
    "hoodie.spark.sql.insert.into.operation",
    "hoodie.datasource.overwrite.mode",
    "hoodie.sql.insert.mode",
    "hoodie.sql.bulk.insert.enable",
    "hoodie.datasource.insert.dup.policy",
})
# Key families validated by their own layer.
ACCEPTED_PREFIXES = ("hoodie.keygen.", "hoodie.write.lock.", "hoodie.datasource.hive_sync.",
                     "hoodie.bucket.index.", "hoodie.compaction.", "hoodie.clustering.", "hoodie.table.")


def known_key(key: str) -> bool:
    return key in PROPERTIES or key in ACCEPTED_WITHOUT_EFFECT or key.startswith(ACCEPTED_PREFIXES)


class HoodieConfig:
    """Resolved options: `config.get(PROPERTY)` returns the typed value or Hudi's default."""

    def __init__(self, options: Mapping[str, Any] | None = None, *, warn_unknown: bool = True):
        self.raw = normalize_options(options)
        self._values: dict[str, Any] = {}
        for key, text in self.raw.items():
            prop = PROPERTIES.get(key)
            if prop is None:
                if warn_unknown and key.startswith("hoodie.") and not known_key(key):
                    warnings.warn(f"unknown Hudi option {key!r} is ignored; check its spelling against "
                                  "https://hudi.apache.org/docs/configurations", stacklevel=3)
                continue
            self._values[key] = parse_value(prop, text)
        for keys, check in VALIDATORS:   # Hudi validates these when the write config is built
            if not keys.isdisjoint(self._values):
                check(self)

    def get(self, prop: ConfigProperty) -> Any:
        return self._values.get(prop.key, prop.default)

    def is_set(self, prop: ConfigProperty) -> bool:
        return prop.key in self._values

    def string_options(self) -> dict[str, str]:
        """The raw string options (for layers such as keygen that read their own keys)."""
        return dict(self.raw)


def config_of(options: Mapping[str, Any] | HoodieConfig | None, warn_unknown: bool = False) -> HoodieConfig:
    """`options` as a HoodieConfig (itself when it already is one)."""
    return options if isinstance(options, HoodieConfig) else HoodieConfig(options or {}, warn_unknown=warn_unknown)


def option(options: Mapping[str, Any] | HoodieConfig | None, prop: ConfigProperty) -> Any:
    """One typed option (aliases resolved; Hudi's default when absent or empty; ConfigError naming the key when
    bad) without parsing the others: for services that read a few keys of options validated elsewhere."""
    if isinstance(options, HoodieConfig):
        return options.get(prop)
    text = normalize_options(options).get(prop.key)
    if text is None or not str(text).strip():
        return prop.default
    return parse_value(prop, text)


def int_option(options: Mapping[str, Any], key: str, default: int) -> int:
    """A whole-number option a layer declares itself (clustering plan keys): the one parser, same errors."""
    return option(options, ConfigProperty(key, default, whole_number))


def bool_option(options: Mapping[str, Any], key: str, default: bool) -> bool:
    """A true/false option a layer declares itself: the one parser, same errors."""
    return option(options, ConfigProperty(key, default, bool_value))


def setting(prop: ConfigProperty) -> Any:
    """A field of a frozen group config read from `prop` (see read_settings)."""
    return field(metadata={"setting": prop})


def read_settings(cls: type[_Settings], options: Mapping[str, Any] | HoodieConfig | None, /,
                  **others: Any) -> _Settings:
    """The group config `cls` from `options`: each field names its key with `setting(...)` and is parsed once
    (Hudi's default when absent), so a field can never be paired with another field's key. Fields that are not
    settings are given in `others`."""
    return cls(**{f.name: option(options, f.metadata["setting"]) for f in fields(cls) if "setting" in f.metadata},
               **others)
