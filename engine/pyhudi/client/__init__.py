"""The client layer: begin a transaction, run an action on the commit protocol, commit, then run the post-commit
services as hooks. The public API (pyhudi.write, pyhudi.delete_partitions, ...) calls in here."""

from pyhudi.client.write import WriteClient, WriteResult, delete_partitions, write
from pyhudi.writer.options import DELETE_FLAG_COLUMN

__all__ = ["DELETE_FLAG_COLUMN", "WriteClient", "WriteResult", "delete_partitions", "write"]
