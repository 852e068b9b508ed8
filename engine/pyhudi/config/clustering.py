"""Clustering config: when clustering is scheduled, which file slices a plan takes and how it rewrites them
(Hudi's HoodieClusteringConfig). Keys pyhudi reads but Hudi parses late are declared as text (str) here and
parsed by pyhudi.services.clustering.strategy, which names the key in its errors."""

from __future__ import annotations

from pyhudi.config.core import bool_value, declare, lower, whole_number

CLUSTERING_UPDATES_STRATEGY = declare(
    "hoodie.clustering.updates.strategy",
    "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    doc="What a write does to a file group under pending clustering: SparkRejectUpdateStrategy refuses it, "
        "SparkAllowUpdateStrategy writes it (the clustering then aborts at its commit check).")
CLUSTERING_INLINE = declare("hoodie.clustering.inline", False, bool_value)
CLUSTERING_SCHEDULE_INLINE = declare("hoodie.clustering.schedule.inline", False, bool_value)
CLUSTERING_INLINE_MAX_COMMITS = declare("hoodie.clustering.inline.max.commits", 4, whole_number,
                                        doc="Commits after which inline clustering schedules a plan.")
CLUSTERING_INLINE_ENABLE_LEGACY = declare("hoodie.datasource.clustering.inline.enable", "false",
                                          doc="Older spelling of hoodie.clustering.inline.")
CLUSTERING_ASYNC_ENABLED = declare("hoodie.clustering.async.enabled", "false",
                                   doc="Async clustering (pyhudi: run it with `pyhudi services` or CALL).")
CLUSTERING_ASYNC_MAX_COMMITS = declare("hoodie.clustering.async.max.commits", "4")
CLUSTERING_PRESERVE_METADATA = declare("hoodie.clustering.preserve.commit.metadata", "true",
                                       doc="Clustered records keep their _hoodie_commit_time (pyhudi always does).")
LAYOUT_OPTIMIZE_STRATEGY = declare("hoodie.layout.optimize.strategy", "linear", lower,
                                   ("linear", "z-order", "hilbert"),
                                   doc="Record order of clustering: pyhudi builds linear (z-order/hilbert refused).")
CLUSTERING_PLAN_STRATEGY_CLASS = declare(
    "hoodie.clustering.plan.strategy.class",
    "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy")
CLUSTERING_EXECUTION_STRATEGY_CLASS = declare(
    "hoodie.clustering.execution.strategy.class",
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy")
CLUSTERING_FILTER_MODE = declare("hoodie.clustering.plan.partition.filter.mode", "NONE",
                                 doc="NONE, RECENT_DAYS, SELECTED_PARTITIONS or DAY_ROLLING.")

_PLAN = "hoodie.clustering.plan.strategy."
CLUSTERING_SMALL_FILE_LIMIT = declare(_PLAN + "small.file.limit", 300 * 1024 * 1024, whole_number,
                                      doc="Bytes: file slices with a smaller base file are clustered.")
CLUSTERING_MAX_BYTES_PER_GROUP = declare(_PLAN + "max.bytes.per.group", 2 * 1024 * 1024 * 1024, whole_number,
                                         doc="Bytes of input one clustering group takes at most.")
CLUSTERING_MAX_NUM_GROUPS = declare(_PLAN + "max.num.groups", 30, whole_number,
                                    doc="Clustering groups one plan holds at most.")
CLUSTERING_TARGET_FILE_MAX_BYTES = declare(_PLAN + "target.file.max.bytes", 1024 * 1024 * 1024, whole_number,
                                           doc="Bytes of each file a clustering group writes.")
CLUSTERING_SINGLE_GROUP = declare(_PLAN + "single.group.clustering.enabled", True, bool_value,
                                  doc="Keep a partition's group of one file slice (always kept with sort columns).")
CLUSTERING_LOOKBACK_PARTITIONS = declare(_PLAN + "daybased.lookback.partitions", 2, whole_number,
                                         doc="RECENT_DAYS filter: how many of the latest partitions are clustered.")
CLUSTERING_SKIP_FROM_LATEST = declare(_PLAN + "daybased.skipfromlatest.partitions", 0, whole_number,
                                      doc="RECENT_DAYS filter: latest partitions left out.")
CLUSTERING_SORT_COLUMNS = declare(_PLAN + "sort.columns", None, doc="Columns the clustered files are sorted by.")
CLUSTERING_PARTITION_REGEX = declare(_PLAN + "partition.regex.pattern", None,
                                     doc="Only partitions matching this regular expression are clustered.")
CLUSTERING_PARTITION_SELECTED = declare(_PLAN + "partition.selected", None,
                                        doc="SELECTED_PARTITIONS filter: comma-separated partition paths.")
CLUSTERING_BEGIN_PARTITION = declare(_PLAN + "cluster.begin.partition", None)
CLUSTERING_END_PARTITION = declare(_PLAN + "cluster.end.partition", None)
