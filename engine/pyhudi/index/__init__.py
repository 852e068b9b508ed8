"""Indexes: tag each incoming record with the file group holding its key (update) or none (insert).

`hoodie.index.type` picks the lookup:
  SIMPLE / GLOBAL_SIMPLE  join incoming keys with the keys stored in the latest base files   (lookup.py)
  BLOOM / GLOBAL_BLOOM    key ranges + bloom filters from base-file footers pick candidate files, whose keys
                          are then read to confirm                                            (bloom.py)
  BUCKET                  the key's hash picks the file group; nothing is read                (bucket.py)
  INMEMORY                Hudi's in-memory hash index knows the keys its JVM wrote; pyhudi has no long-lived
                          process, so it looks them up as GLOBAL_SIMPLE (same rows within one session)
GLOBAL_* keep a key unique across partitions (hoodie.{bloom,simple}.index.update.partition.path decides whether
a key arriving in a new partition moves there). Every write reports IndexStats (stats.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyhudi import config as C
from pyhudi.errors import ConfigError

GLOBAL_TYPES = C.GLOBAL_INDEX_TYPES
SUPPORTED_TYPES = ("SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET")
# Index settings a BUCKET table keeps in hoodie.properties, so every later writer hashes keys the same way.
BUCKET_TABLE_KEYS = (C.INDEX_TYPE.key, C.BUCKET_ENGINE.key, C.BUCKET_NUM_BUCKETS.key, C.BUCKET_HASH_FIELD.key)


@dataclass(frozen=True)
class IndexSpec:
    type: str
    update_partition_path: bool = True
    prune_by_ranges: bool = True
    num_buckets: int = 256
    hash_fields: tuple[str, ...] = ()

    @property
    def is_global(self) -> bool:
        return self.type in GLOBAL_TYPES

    @property
    def is_bucket(self) -> bool:
        return self.type == "BUCKET"

    @property
    def is_bloom(self) -> bool:
        return self.type in ("BLOOM", "GLOBAL_BLOOM")


def index_spec(config: C.HoodieConfig, record_key_fields: list[str], table_name: str = "") -> IndexSpec:
    """The index a write uses, validated (unsupported choices raise ConfigError naming the option)."""
    cfg = C.IndexConfig.from_options(config)
    kind = cfg.index_type
    if kind == "INMEMORY":   # see the module docstring
        kind = "GLOBAL_SIMPLE"
    if kind not in SUPPORTED_TYPES:
        raise ConfigError(f"{C.INDEX_TYPE.key}={kind} is not supported by pyhudi (table {table_name}); use one of "
                          f"{', '.join(SUPPORTED_TYPES)}")
    if kind != "BUCKET":
        return IndexSpec(kind, cfg.update_partition_path, cfg.bloom_prune_by_ranges)
    if cfg.bucket_engine != "SIMPLE":
        raise ConfigError(f"{C.BUCKET_ENGINE.key}={cfg.bucket_engine} is not supported by pyhudi yet "
                          f"(table {table_name}); use SIMPLE")
    buckets = cfg.num_buckets
    if buckets <= 0:
        raise ConfigError(f"{C.BUCKET_NUM_BUCKETS.key}={buckets} must be a positive number of buckets")
    fields = [f.strip() for f in (cfg.bucket_hash_field or "").split(",") if f.strip()] \
        or list(record_key_fields)
    missing = [f for f in fields if f not in record_key_fields]
    if missing:
        raise ConfigError(f"{C.BUCKET_HASH_FIELD.key}={','.join(fields)} must be a subset of the record key fields "
                          f"{','.join(record_key_fields)} of table {table_name}")
    return IndexSpec(kind, num_buckets=buckets, hash_fields=tuple(fields))


def table_properties(spec: IndexSpec) -> dict[str, str]:
    """hoodie.properties entries for a new table (only a BUCKET table's layout must persist)."""
    if not spec.is_bucket:
        return {}
    return {C.INDEX_TYPE.key: "BUCKET", C.BUCKET_ENGINE.key: "SIMPLE",
            C.BUCKET_NUM_BUCKETS.key: str(spec.num_buckets), C.BUCKET_HASH_FIELD.key: ",".join(spec.hash_fields)}


def check_table_index(table, options: dict) -> None:
    """Before anything is written: the write's index options must fit the table's layout (a BUCKET table keeps
    its bucket count, hash fields and index type; an existing table only becomes BUCKET if its file groups are
    bucket file groups)."""
    props = table.properties
    stored = {k: props.get(k) for k in BUCKET_TABLE_KEYS if props.get(k) is not None}
    where = f"table {props.name} at {table.storage.base_uri}"
    if (stored.get(C.INDEX_TYPE.key) or "").upper() == "BUCKET":
        for key, value in stored.items():
            given = options.get(key)
            if given is not None and str(given).strip().upper() != str(value).strip().upper():
                raise ConfigError(f"{where} uses {key}={value} but the write passes {given!r}; a BUCKET table's "
                                  "index settings cannot change: drop the option or recreate the table with "
                                  "mode='overwrite'")
        return
    if str(options.get(C.INDEX_TYPE.key, "")).strip().upper() == "BUCKET":
        from pyhudi.index.bucket import existing_buckets
        existing_buckets(table.view(), table=props.name,
                         num_buckets=C.IndexConfig.from_options(C.config_of(options)).num_buckets)


def is_simple_bucket_table(table, options: dict | None = None) -> bool:
    """Whether the table uses the simple BUCKET index (kept in its hoodie.properties, or given by the options):
    its file groups are its buckets, so a table service must not regroup them."""
    props = table.properties
    given = C.normalize_options(options or {})
    kind = str(props.get(C.INDEX_TYPE.key) or given.get(C.INDEX_TYPE.key) or "").strip().upper()
    engine = str(props.get(C.BUCKET_ENGINE.key) or given.get(C.BUCKET_ENGINE.key) or "SIMPLE").strip().upper()
    return kind == "BUCKET" and engine == "SIMPLE"
