"""The client layer: the one door to every action on a table. Each entry begins a transaction (or takes the
table-service guard), runs an action on the commit protocol, commits, then runs the post-commit services as hooks.
`pyhudi.Table` (and the free functions over it) and the SQL layer call in here, never below.

Modules, by action: create (an empty table, as CREATE TABLE), write (write, delete_partitions; WriteResult), explain and dry_run (a write without writing),
overwrite (mode='overwrite'), compaction, clustering, maintenance (clean, archive; CleanResult), undo (rollback,
savepoints, restore; RollbackResult), truncate, replace and drop (a table's files as SQL's TRUNCATE, CREATE OR
REPLACE and DROP remove them), table_services (the `pyhudi services` loop), hooks (post-commit services),
ignored_options.
"""

from pyhudi.client.write import WriteClient, WriteResult, delete_partitions, write
from pyhudi.writer.options import DELETE_FLAG_COLUMN

__all__ = ["DELETE_FLAG_COLUMN", "WriteClient", "WriteResult", "delete_partitions", "write"]
