"""Table services: the actions that maintain a table beside its writers, each on the commit protocol
(pyhudi.commit) and run by the client (pyhudi.client), which adds the transaction layer's guard and lock.

One folder per service with more than one step, its modules in pipeline order (plan -> tasks -> run):
    compaction/   plan (which slices, the strategy), tasks (merge a slice in a Spark task), run (schedule, execute)
    clustering/   strategy (size-based groups), plan (the requested replacecommit), tasks (sort and write), run
    clean/        trigger (when), plan (which slices), run (schedule, execute), background (hoodie.clean.async)
and one module each for archive (the archived timeline), savepoint, and rollback (rollback and restore).
Services never import each other's entry points (an import-linter contract in pyproject.toml).
"""
