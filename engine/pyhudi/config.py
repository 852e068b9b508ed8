"""Typed Hudi options: every key pyhudi understands, with Apache Hudi's name and default.

Options arrive as Hudi's Spark datasource options (`hoodie.*` strings) or as Hudi's SQL aliases
(`primaryKey`, `preCombineField`, `type`). `WriteConfig.from_options` resolves aliases, applies defaults,
checks values (a wrong value raises ConfigError naming the key) and warns about unknown `hoodie.*` keys,
so a typo is visible instead of silently ignored.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pyhudi.errors import ConfigError


@dataclass(frozen=True)
class ConfigProperty:
    key: str
    default: Any
    parse: Callable[[str], Any] = str
    choices: tuple[str, ...] | None = None
    doc: str = ""


def _bool(value: str) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An integer parser that refuses values no setting can work with (0 ms heartbeats, 0-byte files)."""
    def parse(value: str) -> int:
        number = int(str(value).strip())
        if number < minimum:
            raise ValueError(f"must be {what} (at least {minimum})")
        return number
    return parse


def _fraction(value: str) -> float:
    number = float(str(value).strip())
    if not 0.0 < number < 1.0:
        raise ValueError("must be a probability between 0 and 1 (exclusive)")
    return number


_POSITIVE = _int_at_least(1, "a positive integer")
_NON_NEGATIVE = _int_at_least(0, "zero or a positive integer")


def _whole_number(value: str) -> int:
    return int(str(value).strip())


def _upper(value: str) -> str:
    return str(value).strip().upper()


_PROPERTIES: dict[str, ConfigProperty] = {}


def _prop(key, default, parse=str, choices=None, doc="") -> ConfigProperty:
    prop = ConfigProperty(key, default, parse, choices, doc)
    _PROPERTIES[key] = prop
    return prop


# --- table identity -------------------------------------------------------------------------------------
TABLE_NAME = _prop("hoodie.table.name", None, doc="Table name, stored in hoodie.properties.")
DATABASE_NAME = _prop("hoodie.database.name", "default")
TABLE_TYPE = _prop("hoodie.datasource.write.table.type", "COPY_ON_WRITE", _upper,
                   ("COPY_ON_WRITE", "MERGE_ON_READ"))
OPERATION = _prop("hoodie.datasource.write.operation", "upsert", lambda v: str(v).strip().lower(),
                  ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table",
                   "delete_partition"))
RECORD_KEY = _prop("hoodie.datasource.write.recordkey.field", None)
PARTITION_PATH = _prop("hoodie.datasource.write.partitionpath.field", "")
PRECOMBINE = _prop("hoodie.datasource.write.precombine.field", None)
KEYGEN_CLASS = _prop("hoodie.datasource.write.keygenerator.class", None)
KEYGEN_TYPE = _prop("hoodie.datasource.write.keygenerator.type", None, _upper)
HIVE_STYLE = _prop("hoodie.datasource.write.hive_style_partitioning", False, _bool)
URL_ENCODE = _prop("hoodie.datasource.write.partitionpath.urlencode", False, _bool)
DROP_PARTITION_COLUMNS = _prop("hoodie.datasource.write.drop.partition.columns", False, _bool)
POPULATE_META_FIELDS = _prop("hoodie.populate.meta.fields", True, _bool)
PAYLOAD_CLASS = _prop("hoodie.datasource.write.payload.class",
                      "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload")
PAYLOAD_ORDERING_FIELD = _prop("hoodie.payload.ordering.field", None,
                               doc="Field ordering an incoming record against the stored one (default: precombine).")
PAYLOAD_EVENT_TIME_FIELD = _prop("hoodie.payload.event.time.field", "ts",
                                 doc="DefaultHoodieRecordPayload: field whose epoch seconds/millis give the write "
                                     "stats' minEventTime/maxEventTime.")
COMBINE_BEFORE_INSERT = _prop("hoodie.combine.before.insert", False, _bool)
COMBINE_BEFORE_UPSERT = _prop("hoodie.combine.before.upsert", True, _bool)
COMBINE_BEFORE_DELETE = _prop("hoodie.combine.before.delete", True, _bool)
METADATA_ENABLE = _prop("hoodie.metadata.enable", False, _bool,
                        doc="pyhudi does not write the metadata table; true is accepted and ignored with a warning.")

# --- file sizing ----------------------------------------------------------------------------------------
MAX_FILE_SIZE = _prop("hoodie.parquet.max.file.size", 125829120, _POSITIVE)
SMALL_FILE_LIMIT = _prop("hoodie.parquet.small.file.limit", 104857600, _NON_NEGATIVE)
RECORD_SIZE_ESTIMATE = _prop("hoodie.copyonwrite.record.size.estimate", 1024, _POSITIVE)
INSERT_SPLIT_SIZE = _prop("hoodie.copyonwrite.insert.split.size", 500000, _POSITIVE)
AUTO_SPLIT_INSERTS = _prop("hoodie.copyonwrite.insert.auto.split", True, _bool)
PARQUET_COMPRESSION = _prop("hoodie.parquet.compression.codec", "gzip", lambda v: str(v).strip().lower(),
                            ("gzip", "snappy", "zstd", "uncompressed", "lz4", "brotli"))
BULK_INSERT_SORT_MODE = _prop("hoodie.bulkinsert.sort.mode", "NONE", _upper,
                              ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
                               "PARTITION_PATH_REPARTITION_AND_SORT"),
                              doc="How bulk_insert spreads and orders the batch (pyhudi.writer.bulk_insert).")
BULK_INSERT_PARALLELISM = _prop("hoodie.bulkinsert.shuffle.parallelism", 0, _NON_NEGATIVE)
UPSERT_PARALLELISM = _prop("hoodie.upsert.shuffle.parallelism", 0, _NON_NEGATIVE)

# --- index ----------------------------------------------------------------------------------------------
INDEX_TYPE = _prop("hoodie.index.type", "SIMPLE", _upper,
                   ("SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET", "INMEMORY"))
BLOOM_NUM_ENTRIES = _prop("hoodie.index.bloom.num_entries", 60000, _POSITIVE)
BLOOM_FPP = _prop("hoodie.index.bloom.fpp", 0.000000001, _fraction)
BLOOM_FILTER_TYPE = _prop("hoodie.bloom.index.filter.type", "DYNAMIC_V0", _upper, ("SIMPLE", "DYNAMIC_V0"))
BLOOM_DYNAMIC_MAX_ENTRIES = _prop("hoodie.bloom.index.filter.dynamic.max.entries", 100000, _POSITIVE)
BLOOM_PRUNE_BY_RANGES = _prop("hoodie.bloom.index.prune.by.ranges", True, _bool)
BLOOM_UPDATE_PARTITION_PATH = _prop("hoodie.bloom.index.update.partition.path", True, _bool,
                                    doc="GLOBAL_BLOOM: a key arriving with a new partition moves there.")
SIMPLE_UPDATE_PARTITION_PATH = _prop("hoodie.simple.index.update.partition.path", True, _bool,
                                     doc="GLOBAL_SIMPLE: a key arriving with a new partition moves there.")
BUCKET_ENGINE = _prop("hoodie.index.bucket.engine", "SIMPLE", _upper, ("SIMPLE", "CONSISTENT_HASHING"))
BUCKET_NUM_BUCKETS = _prop("hoodie.bucket.index.num.buckets", 256, _POSITIVE)
BUCKET_HASH_FIELD = _prop("hoodie.bucket.index.hash.field", None,
                          doc="Fields hashed to pick a bucket; default: the record key fields.")

# --- read -----------------------------------------------------------------------------------------------
QUERY_TYPE = _prop("hoodie.datasource.query.type", "snapshot", lambda v: str(v).strip().lower(),
                   ("snapshot", "read_optimized", "incremental"))
BEGIN_INSTANT = _prop("hoodie.datasource.read.begin.instanttime", None)
END_INSTANT = _prop("hoodie.datasource.read.end.instanttime", None)
AS_OF_INSTANT = _prop("as.of.instant", None)
INCR_FALLBACK_FULL_SCAN = _prop("hoodie.datasource.read.incr.fallback.fulltablescan.enable", False, _bool,
                                doc="Incremental query over archived instants or cleaned files: full table scan "
                                    "filtered by commit time instead of an error.")

INCREMENTAL_FORMAT = _prop("hoodie.datasource.query.incremental.format", "latest_state",
                         lambda v: str(v).strip().lower(), ("latest_state", "cdc"),
                         doc="Incremental query output: the latest state of changed rows, or Hudi's change data "
                             "capture rows (op, ts_ms, before, after) of a hoodie.table.cdc.enabled table.")

# --- change data capture (table properties, set when the table is created) -----------------------------
CDC_ENABLED = _prop("hoodie.table.cdc.enabled", False, _bool,
                    doc="Write change data capture (-cdc) log files with every commit, for CDC queries.")
CDC_LOGGING_MODE = _prop("hoodie.table.cdc.supplemental.logging.mode", "DATA_BEFORE_AFTER", _upper,
                         ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"),
                         doc="What the -cdc log records hold besides op and record key: nothing, the before "
                             "image, or the before and after images.")

# --- services (declared so they are known; used by later layers) ----------------------------------------
CLEAN_AUTOMATIC = _prop("hoodie.clean.automatic", True, _bool)
CLEANER_POLICY = _prop("hoodie.cleaner.policy", "KEEP_LATEST_COMMITS", _upper,
                       ("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"))
CLEANER_COMMITS_RETAINED = _prop("hoodie.cleaner.commits.retained", 10, _NON_NEGATIVE)
CLEANER_FILE_VERSIONS_RETAINED = _prop("hoodie.cleaner.fileversions.retained", 3, _POSITIVE,
                                        doc="0 would delete the latest version of every file group.")
CLEANER_HOURS_RETAINED = _prop("hoodie.cleaner.hours.retained", 24, _NON_NEGATIVE)
CLEANER_INCREMENTAL_MODE = _prop("hoodie.cleaner.incremental.mode", True, _bool)
CLEAN_ASYNC = _prop("hoodie.clean.async", False, _bool,
                    doc="Run the automatic clean beside the write (started before it, joined after it).")
CLEAN_TRIGGER_STRATEGY = _prop("hoodie.clean.trigger.strategy", "NUM_COMMITS", _upper, ("NUM_COMMITS",))
CLEAN_MAX_COMMITS = _prop("hoodie.clean.max.commits", 1, _NON_NEGATIVE,
                          doc="Commits after the last clean before a new clean is scheduled (0: whenever due).")
TIMELINE_TIMEZONE = _prop("hoodie.table.timeline.timezone", "LOCAL", _upper, ("LOCAL", "UTC"),
                          doc="Table config: the zone instant times are written in (stored in hoodie.properties).")
ARCHIVE_AUTOMATIC = _prop("hoodie.archive.automatic", True, _bool)
KEEP_MIN_COMMITS = _prop("hoodie.keep.min.commits", 20, _POSITIVE)
KEEP_MAX_COMMITS = _prop("hoodie.keep.max.commits", 30, _POSITIVE)
COMPACT_INLINE = _prop("hoodie.compact.inline", False, _bool)
COMPACT_SCHEDULE_INLINE = _prop("hoodie.compact.schedule.inline", False, _bool)
COMPACT_MAX_DELTA_COMMITS = _prop("hoodie.compact.inline.max.delta.commits", 5, _POSITIVE)
COMPACT_MAX_DELTA_SECONDS = _prop("hoodie.compact.inline.max.delta.seconds", 3600, _NON_NEGATIVE)
COMPACT_TRIGGER = _prop("hoodie.compact.inline.trigger.strategy", "NUM_COMMITS", _upper,
                        ("NUM_COMMITS", "TIME_ELAPSED", "NUM_AND_TIME", "NUM_OR_TIME"))
LOG_BLOCK_FORMAT = _prop("hoodie.logfile.data.block.format", "parquet", lambda v: str(v).strip().lower(),
                         ("parquet", "avro"))
LOG_MAX_SIZE = _prop("hoodie.logfile.max.size", 1073741824, _POSITIVE)
CONCURRENCY_MODE = _prop("hoodie.write.concurrency.mode", "single_writer", lambda v: str(v).strip().lower(),
                         ("single_writer", "optimistic_concurrency_control"))
# --- clustering (the keys the writer and the post-commit hook read; the plan's keys: services/clustering_plan.py)
CLUSTERING_UPDATES_STRATEGY = _prop(
    "hoodie.clustering.updates.strategy",
    "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    doc="What a write does to a file group under pending clustering: SparkRejectUpdateStrategy refuses it, "
        "SparkAllowUpdateStrategy writes it (the clustering then aborts at its commit check).")
CLUSTERING_INLINE = _prop("hoodie.clustering.inline", False, _bool)
CLUSTERING_SCHEDULE_INLINE = _prop("hoodie.clustering.schedule.inline", False, _bool)
LAYOUT_OPTIMIZE_STRATEGY = _prop("hoodie.layout.optimize.strategy", "linear", lambda v: str(v).strip().lower(),
                                 ("linear", "z-order", "hilbert"),
                                 doc="Record order of clustering: pyhudi builds linear (z-order/hilbert refused).")
_CLUSTER_PLAN = "hoodie.clustering.plan.strategy."
CLUSTERING_SMALL_FILE_LIMIT = _prop(_CLUSTER_PLAN + "small.file.limit", 300 * 1024 * 1024, _whole_number,
                                    doc="Bytes: file slices with a smaller base file are clustered.")
CLUSTERING_MAX_BYTES_PER_GROUP = _prop(_CLUSTER_PLAN + "max.bytes.per.group", 2 * 1024 * 1024 * 1024, _whole_number,
                                       doc="Bytes of input one clustering group takes at most.")
CLUSTERING_MAX_NUM_GROUPS = _prop(_CLUSTER_PLAN + "max.num.groups", 30, _whole_number,
                                  doc="Clustering groups one plan holds at most.")
CLUSTERING_TARGET_FILE_MAX_BYTES = _prop(_CLUSTER_PLAN + "target.file.max.bytes", 1024 * 1024 * 1024, _whole_number,
                                         doc="Bytes of each file a clustering group writes.")
CLUSTERING_SINGLE_GROUP = _prop(_CLUSTER_PLAN + "single.group.clustering.enabled", True, _bool,
                                doc="Keep a partition's group of one file slice (always kept with sort columns).")
CLUSTERING_LOOKBACK_PARTITIONS = _prop(_CLUSTER_PLAN + "daybased.lookback.partitions", 2, _whole_number,
                                       doc="RECENT_DAYS filter: how many of the latest partitions are clustered.")
CLUSTERING_SKIP_FROM_LATEST = _prop(_CLUSTER_PLAN + "daybased.skipfromlatest.partitions", 0, _whole_number,
                                    doc="RECENT_DAYS filter: latest partitions left out.")
CLUSTERING_INLINE_MAX_COMMITS = _prop("hoodie.clustering.inline.max.commits", 4, _whole_number,
                                      doc="Commits after which inline clustering schedules a plan.")
# --- replace operations, failed-write rollback, heartbeats (services/rollback.py, writer/transaction.py) ---
STATIC_OVERWRITE_PARTITIONS = _prop(
    "hoodie.static.overwrite.partition.paths", None,
    doc="Comma-separated partition paths an insert_overwrite also replaces when the batch writes none of their "
        "rows (Hudi's internal key for a static INSERT OVERWRITE ... PARTITION).")
PARTITIONS_TO_DELETE = _prop("hoodie.datasource.write.partitions.to.delete", None,
                             doc="Comma-separated partition paths (wildcards allowed) for delete_partition.")
FAILED_WRITES_POLICY = _prop("hoodie.cleaner.policy.failed.writes", "EAGER", _upper, ("EAGER", "LAZY", "NEVER"),
                             doc="EAGER: the next writer rolls back failed writes; LAZY (forced by OCC): only "
                                 "those whose heartbeat expired.")
HEARTBEAT_INTERVAL_MS = _prop("hoodie.client.heartbeat.interval_in_ms", 60000, _POSITIVE,
                              doc="Milliseconds between heartbeats; 0 would make every live writer look dead.")
HEARTBEAT_TOLERABLE_MISSES = _prop("hoodie.client.heartbeat.tolerable.misses", 2, _POSITIVE,
                                   doc="Missed heartbeats after which a pending write counts as failed (LAZY).")

# --- compaction plan (services/compaction_plan.py; strategy short names resolved there) ------------------
COMPACTION_STRATEGY = _prop("hoodie.compaction.strategy",
                            "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",
                            doc="Which file slices a compaction plan takes and in which order.")
COMPACTION_TARGET_IO = _prop("hoodie.compaction.target.io", 500 * 1024, _whole_number,
                             doc="MB of IO (read + write) one compaction plans for (BoundedIO budget).")
COMPACTION_LOG_SIZE_THRESHOLD = _prop("hoodie.compaction.logfile.size.threshold", 0, _whole_number,
                                      doc="Bytes of log files a slice needs (LogFileSizeBasedCompactionStrategy).")
COMPACTION_LOG_NUM_THRESHOLD = _prop("hoodie.compaction.logfile.num.threshold", 0, _whole_number,
                                     doc="Log files a slice needs (LogFileNumBasedCompactionStrategy).")
COMPACTION_PAYLOAD_CLASS = _prop("hoodie.compaction.payload.class", None,
                                 doc="Payload of compaction; default: the table's, else the write payload class.")

# --- lock (optimistic concurrency control; services/lock.py) -------------------------------------------
LOCK_PROVIDER = _prop("hoodie.write.lock.provider",
                      "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
                      doc="Lock provider class; pyhudi implements FileSystemBasedLockProvider only (its default).")
LOCK_FILESYSTEM_PATH = _prop("hoodie.write.lock.filesystem.path", None,
                             doc="Folder of the lock file; default: the table's .hoodie folder.")
LOCK_FILESYSTEM_EXPIRE = _prop("hoodie.write.lock.filesystem.expire", 0, _whole_number,
                               doc="Minutes after which a lock not refreshed belongs to a dead writer and is taken "
                                   "over; 0 = never expires.")
LOCK_WAIT_TIME_MS = _prop("hoodie.write.lock.wait_time_ms", 60000, _whole_number,
                          doc="Milliseconds to wait for the lock before giving up.")
LOCK_RETRY_WAIT_TIME_MS = _prop("hoodie.write.lock.wait_time_ms_between_retry", 1000, _whole_number,
                                doc="Milliseconds between two attempts to take the lock.")
LOCK_NUM_RETRIES = _prop("hoodie.write.lock.num_retries", 15, _whole_number,
                         doc="Attempts to take the lock (together with wait_time_ms).")

# Keys Hudi defines that pyhudi accepts but has no behaviour for (no warning: they are legitimate Hudi keys).
_ACCEPTED_WITHOUT_EFFECT = {
    "hoodie.datasource.write.hive_style_partitioning",
    "hoodie.archivelog.folder",
    "hoodie.timeline.layout.version",
    "hoodie.table.version",
    "hoodie.datasource.write.reconcile.schema",
    "hoodie.datasource.hive_sync.enable",
    "hoodie.embed.timeline.server",
    "hoodie.bloom.index.use.treebased.filter",
    "hoodie.bloom.index.use.caching",
    "hoodie.bloom.index.bucketized.checking",
    "hoodie.bloom.index.parallelism",
    "hoodie.simple.index.use.caching",
    "hoodie.simple.index.parallelism",
    "hoodie.global.simple.index.parallelism",
    "hoodie.insert.shuffle.parallelism",
    "hoodie.delete.shuffle.parallelism",
    "hoodie.datasource.write.row.writer.enable",
    "hoodie.schema.on.read.enable",
    "hoodie.cleaner.policy.failed.writes",
    "hoodie.datasource.write.record.merger.impls",     # SQL-layer keys (pyhudi.sqlext) kept in TBLPROPERTIES
    "hoodie.datasource.write.record.merger.strategy",
    "hoodie.spark.sql.insert.into.operation",
    "hoodie.datasource.overwrite.mode",
    "hoodie.sql.insert.mode",
}
# Key-generator and other families validated by their own layer.
_ACCEPTED_PREFIXES = ("hoodie.keygen.", "hoodie.write.lock.", "hoodie.datasource.hive_sync.",
                      "hoodie.bucket.index.", "hoodie.compaction.", "hoodie.clustering.", "hoodie.table.")

# Hudi's Spark SQL table-property aliases.
SQL_ALIASES = {
    "primarykey": RECORD_KEY.key,
    "precombinefield": PRECOMBINE.key,
    "precombinekey": PRECOMBINE.key,
    "type": TABLE_TYPE.key,
}
_TABLE_TYPE_ALIASES = {"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"}


def normalize_options(options: Mapping[str, Any] | None) -> dict[str, str]:
    """Resolve SQL aliases and stringify values; keys are kept as given except aliases."""
    out: dict[str, str] = {}
    for key, value in (options or {}).items():
        if value is None:
            continue
        key = SQL_ALIASES.get(str(key).lower(), str(key))
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if key == TABLE_TYPE.key:
            text = _TABLE_TYPE_ALIASES.get(text.strip().upper(), text)
        out[key] = text
    return out


def known_key(key: str) -> bool:
    return key in _PROPERTIES or key in _ACCEPTED_WITHOUT_EFFECT or key.startswith(_ACCEPTED_PREFIXES)


class HoodieConfig:
    """Resolved options: `config.get(PROPERTY)` returns the typed value or Hudi's default."""

    def __init__(self, options: Mapping[str, Any] | None = None, *, warn_unknown: bool = True):
        self.raw = normalize_options(options)
        self._values: dict[str, Any] = {}
        for key, text in self.raw.items():
            prop = _PROPERTIES.get(key)
            if prop is None:
                if warn_unknown and key.startswith("hoodie.") and not known_key(key):
                    warnings.warn(f"unknown Hudi option {key!r} is ignored; check its spelling against "
                                  "https://hudi.apache.org/docs/configurations", stacklevel=3)
                continue
            self._values[key] = _parse(prop, text)
        if any(k in self._values for k in (KEEP_MIN_COMMITS.key, KEEP_MAX_COMMITS.key, CLEANER_COMMITS_RETAINED.key)):
            check_archival_options(self)   # Hudi validates these when the write config is built

    def get(self, prop: ConfigProperty) -> Any:
        return self._values.get(prop.key, prop.default)

    def is_set(self, prop: ConfigProperty) -> bool:
        return prop.key in self._values

    def string_options(self) -> dict[str, str]:
        """The raw string options (for layers such as keygen that read their own keys)."""
        return dict(self.raw)


def _parse(prop: ConfigProperty, text: str) -> Any:
    try:
        value = prop.parse(text)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"option {prop.key}={text!r} is invalid ({exc}); "
                          f"default is {prop.default!r}") from None
    if prop.choices is not None and value not in prop.choices:
        raise ConfigError(f"option {prop.key}={text!r} is not one of {', '.join(prop.choices)}")
    return value


def option(options: Mapping[str, Any] | HoodieConfig | None, prop: ConfigProperty) -> Any:
    """One typed option (aliases resolved; Hudi's default when absent or empty; ConfigError naming the key when
    bad) without parsing the others: for services that read a few keys of options validated elsewhere."""
    if isinstance(options, HoodieConfig):
        return options.get(prop)
    text = normalize_options(options).get(prop.key)
    if text is None or not str(text).strip():
        return prop.default
    return _parse(prop, text)


def int_option(options: Mapping[str, Any], key: str, default: int) -> int:
    """A whole-number option a layer declares itself (clustering plan keys): the one parser, same errors."""
    return option(options, ConfigProperty(key, default, _whole_number))


def bool_option(options: Mapping[str, Any], key: str, default: bool) -> bool:
    """A true/false option a layer declares itself: the one parser, same errors."""
    return option(options, ConfigProperty(key, default, _bool))


def check_archival_options(cfg: HoodieConfig) -> None:
    """Hudi's rules (HoodieWriteConfig): max > min, and min > hoodie.cleaner.commits.retained (else archiving
    would drop commits the cleaner still retains, and incremental pulls would miss data)."""
    low, high = cfg.get(KEEP_MIN_COMMITS), cfg.get(KEEP_MAX_COMMITS)
    retained = cfg.get(CLEANER_COMMITS_RETAINED)
    if high <= low:
        raise ConfigError(f"Increase {KEEP_MAX_COMMITS.key}={high} to be greater than {KEEP_MIN_COMMITS.key}="
                          f"{low} (defaults 30 and 20).")
    if low <= retained:
        raise ConfigError(f"Increase {KEEP_MIN_COMMITS.key}={low} to be greater than "
                          f"{CLEANER_COMMITS_RETAINED.key}={retained}, or lower {CLEANER_COMMITS_RETAINED.key}. "
                          "Otherwise, there is risk of incremental pull missing data from few instants.")
