"""Clustering, in pipeline order: strategy (the size-based plan strategy and its options), plan (the requested
replacecommit and readers of pending/completed clusterings), tasks (read, sort and write the groups in Spark tasks),
run (schedule and execute as one replacecommit)."""
