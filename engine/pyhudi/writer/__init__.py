"""The write action: one upsert, insert, bulk_insert, delete or replace of a Spark DataFrame, in pipeline order.

    options        the write's options resolved against the table and checked, before anything is written
    batch          the batch in the table's storage types and column order, with record keys
    strategy       the plan chosen once before the instant exists: staged, one_job or bulk_insert (WriteStrategy)
    write_action   WriteAction: prepare (choose the strategy) -> write (run it) -> the commit metadata
    staged         the staged strategy: deduplicate -> tag (tagging) -> place inserts (planning) -> write files
    tagging        the index lookup of the staged strategy and its stats
    one_job, one_job_tasks, task_share
                   the one-job strategy: key, tag, deduplicate, place and write in one Spark job
    bulk_insert    bulk_insert as Hudi lays it out (hoodie.bulkinsert.sort.mode)
    replace        insert_overwrite, insert_overwrite_table, delete_partition
    planning       where inserts go and how large files get (driver, metadata only)
    live_keys, partition_moves, virtual_keys
                   what the index needs: keys a MOR group still holds, global-index partition moves, virtual keys
    file_writer    executor side: a file group's records into a new base file or log blocks

The client (pyhudi.client.write) runs the action in one transaction on the commit protocol (pyhudi.commit.run).
"""
