"""The client layer: begin a transaction, run an action on the commit protocol, commit, then run the post-commit
services as hooks. The public API (pyhudi.write, pyhudi.delete_partitions, ...) calls in here."""

from pyhudi.client.write import WriteClient, WriteResult, delete_partitions, write

__all__ = ["WriteClient", "WriteResult", "delete_partitions", "write"]
