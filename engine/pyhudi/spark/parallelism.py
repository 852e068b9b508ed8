"""How many Spark partitions a stage of whole-file Python tasks gets (used by the index lookup and the writer;
kept apart from spark_session so low layers need not import the session/data source module)."""

from __future__ import annotations

from pyhudi.spark.jvm import default_parallelism


def file_task_partitions(spark, n_files: int) -> int:
    """Spark partitions for a stage whose Python tasks each handle whole files (rewrite a file group, read a
    file's keys). The work follows the files, not the rows shuffled to them, so adaptive execution must not pack
    them into one task; a Python task costs tens of ms to start, so a few per core, not one per file."""
    cores = default_parallelism(spark)
    return max(1, min(n_files, 4 * cores))
