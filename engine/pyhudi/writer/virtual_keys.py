"""Virtual keys (`hoodie.populate.meta.fields=false`), as Hudi 0.14/0.15 writes them.

Base files keep the five `_hoodie_*` columns in their schema, but only `_hoodie_file_name` holds a value: the
commit time, sequence number, record key and partition path are null (what Hudi's avro write handles leave when
meta fields are off; see the Java-written fixture cow_v6_simplekeygen_hivestyle_no_metafields). No bloom filter
and no min/max record key go into the footer (Hudi's file writer factory enables the bloom filter only with meta
fields). Wherever a stored record's key is needed (the index, the copy-on-write merge) it is computed from the
data columns with the table's key generator.

Hudi's rules, checked before anything is written:
- key generator: only SimpleKeyGenerator, ComplexKeyGenerator or NonpartitionedKeyGenerator
  (HoodieTableMetaClient.validateTableProperties);
- index: SIMPLE or GLOBAL_SIMPLE (the index types Hudi supports for virtual keys; BLOOM needs the footer bloom
  filters Hudi does not write for them);
- copy-on-write only in pyhudi: Hudi's merge-on-read virtual keys (SimpleKeyGenerator only) need the log records
  keyed from data fields, which pyhudi's log writer and reader do not do;
- a record key is required (generated keys cannot be recomputed from the data).
The base files' meta columns are `pyhudi.file_group.base_file.blank_meta`'s (clustering writes them too).
"""

from __future__ import annotations

from pyhudi import config as C
from pyhudi.errors import ConfigError
from pyhudi.keygen import COMPLEX, NON_PARTITION, SIMPLE, TYPE_TO_CLASS

ALLOWED_KEYGENS = tuple(TYPE_TO_CLASS[t] for t in (SIMPLE, COMPLEX, NON_PARTITION))
ALLOWED_INDEXES = ("SIMPLE", "GLOBAL_SIMPLE")
FIX = f"set {C.POPULATE_META_FIELDS.key}=true (the default) to keep Hudi's meta columns"


def wanted(options: dict) -> bool:
    """Whether options (write options or TBLPROPERTIES, normalized) ask for virtual keys."""
    return str(options.get(C.POPULATE_META_FIELDS.key, "true")).strip().lower() == "false"


def check(table_name: str, keygen, table_type: str, index_type: str) -> None:
    """Refuse what Hudi (or pyhudi) cannot do with virtual keys, naming the option and the fix."""
    where = f"table {table_name} uses {C.POPULATE_META_FIELDS.key}=false (virtual keys)"
    if not keygen.record_key_fields:
        raise ConfigError(f"{where}, which computes each record's key from its record key fields, but no "
                          f"{C.RECORD_KEY.key} (SQL: primaryKey) is set; set it, or {FIX}")
    if keygen.java_class not in ALLOWED_KEYGENS:
        raise ConfigError(f"{where}: Hudi allows only SimpleKeyGenerator, ComplexKeyGenerator or "
                          f"NonpartitionedKeyGenerator with virtual keys, not {keygen.java_class}; change "
                          f"{C.KEYGEN_CLASS.key}, or {FIX}")
    if str(table_type).upper() in ("MERGE_ON_READ", "MOR"):
        raise ConfigError(f"{where}, which pyhudi supports for COPY_ON_WRITE tables only (merge-on-read log "
                          f"records would need keys computed from data fields); use type='cow' "
                          f"({C.TABLE_TYPE.key}=COPY_ON_WRITE), or {FIX}")
    if str(index_type).upper() not in ALLOWED_INDEXES:
        raise ConfigError(f"{where}: {C.INDEX_TYPE.key}={index_type} is not supported with virtual keys (Hudi "
                          f"writes no bloom filter or key range into their base files); use "
                          f"{C.INDEX_TYPE.key}=SIMPLE or GLOBAL_SIMPLE, or {FIX}")

