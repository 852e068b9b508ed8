"""Change data capture config: table properties set when the table is created (Hudi's HoodieTableConfig CDC keys)."""

from __future__ import annotations

from pyhudi.config.core import bool_value, declare, upper

CDC_ENABLED = declare("hoodie.table.cdc.enabled", False, bool_value,
                      doc="Write change data capture (-cdc) log files with every commit, for CDC queries.")
CDC_LOGGING_MODE = declare("hoodie.table.cdc.supplemental.logging.mode", "DATA_BEFORE_AFTER", upper,
                           ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"),
                           doc="What the -cdc log records hold besides op and record key: nothing, the before "
                               "image, or the before and after images.")
