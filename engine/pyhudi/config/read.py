"""Read config: query type, incremental range and output, time travel (Hudi's DataSourceReadOptions)."""

from __future__ import annotations

from pyhudi.config.core import bool_value, declare, lower

QUERY_TYPE = declare("hoodie.datasource.query.type", "snapshot", lower, ("snapshot", "read_optimized", "incremental"))
BEGIN_INSTANT = declare("hoodie.datasource.read.begin.instanttime", None)
END_INSTANT = declare("hoodie.datasource.read.end.instanttime", None)
AS_OF_INSTANT = declare("as.of.instant", None)
INCR_FALLBACK_FULL_SCAN = declare("hoodie.datasource.read.incr.fallback.fulltablescan.enable", False, bool_value,
                                  doc="Incremental query over archived instants or cleaned files: full table scan "
                                      "filtered by commit time instead of an error.")
INCREMENTAL_FORMAT = declare("hoodie.datasource.query.incremental.format", "latest_state", lower,
                             ("latest_state", "cdc"),
                             doc="Incremental query output: the latest state of changed rows, or Hudi's change data "
                                 "capture rows (op, ts_ms, before, after) of a hoodie.table.cdc.enabled table.")
