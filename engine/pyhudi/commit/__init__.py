"""The commit protocol every action writes its instant with, and the instant metadata it writes.

    instant_commit   begin -> markers -> write -> reconcile -> complete | abort, for write instants
    run              the skeleton a write, compaction or clustering instant runs in (start, work, complete or
                     abort, finish, log)
    service_commit   the same for table-service instants (compaction, clustering, clean, rollback, savepoint)
    markers          marker files: what an inflight instant may have written
    spark_jobs       collecting a Spark job's rows; the write token and sequence numbers of a task's files
    metadata, timeline_metadata, archived_timeline, retention
                     commit metadata, readers of clean and savepoint instants, archived entries, clean retention

Actions (pyhudi.writer, pyhudi.services) sit above it; the transaction layer (pyhudi.transaction) and the client
(pyhudi.client) above them.
"""
