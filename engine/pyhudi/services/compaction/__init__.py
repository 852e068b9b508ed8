"""Merge-on-read compaction, in pipeline order: plan (options and the plan generator), tasks (a slice merged into
a new base file inside a Spark task), run (schedule a plan, execute it as a commit of the compaction instant)."""
