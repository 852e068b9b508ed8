"""The transaction layer: the table lock, heartbeats, conflict resolution and the failed-write rollback policy,
above the actions (pyhudi.actions) and below the client (pyhudi.client)."""

from pyhudi.transaction.write_transaction import WriteTransaction

__all__ = ["WriteTransaction"]
