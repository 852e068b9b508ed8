"""The transaction layer, above the actions (pyhudi.writer, pyhudi.services) and below the client (pyhudi.client):

    lock             the table lock (Hudi's FileSystemBasedLockProvider)
    heartbeat        a writer's heartbeat file, so failed writes can be told from live ones
    failed_writes    rolling back the pending writes of failed writers (hoodie.write.concurrency.*)
    service_guard    the guard table services are scheduled under
    write_transaction  begin -> conflict check -> complete for one write
"""

from pyhudi.transaction.write_transaction import WriteTransaction

__all__ = ["WriteTransaction"]
