"""KNOWN_DIVERGENCES: every difference the conformance harness found between pyhudi and the reference that is
not fixed yet, with its reason and how it is kept out of the default run. Nothing is silently skipped: each entry
names exactly what it stops the generators from producing (`blocks`) or which check it relaxes (`relaxes`).

Run with PYHUDI_CONFORMANCE_KNOWN=1 to generate the blocked shapes/statements and check them anyway: an entry
whose statements then pass is fixed and must be removed from this list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Known:
    id: str
    classification: str          # pyhudi bug | harness limitation | accepted Hudi-vs-Spark difference
    reason: str
    reproduce: str
    applies: Callable             # (shape, step) -> bool       (SQL steps)  or (project) -> bool (dbt)
    effect: str = "blocks"        # blocks: not generated | relaxes:<check>: that check is not asserted
    status: str = "open"          # what the last PYHUDI_CONFORMANCE_KNOWN=1 replay showed


def _tags(*wanted):
    return lambda shape, step: bool(set(wanted) & step.tags)


KNOWN_DIVERGENCES: list[Known] = [
    Known(
        "ctas-partition-not-last", "pyhudi bug (issue 12 item 1, being fixed)",
        "CREATE TABLE ... USING hudi PARTITIONED BY (p) AS SELECT ... where p is not the last selected column "
        "fails: Spark INTERNAL_ERROR 'Corrupted table metadata ... partition column names in the table schema do "
        "not match the declared partition columns'.",
        "PYHUDI_CONFORMANCE_KNOWN=1 PYHUDI_CONFORMANCE_SEED=<seed> (any CTAS step tagged partition-not-last)",
        lambda shape, step: "ctas" in step.tags and "partition-not-last" in step.tags,
        status="appears fixed: KNOWN=1 replay of seed 1009 (CTAS PARTITIONED BY (p1, p0), p0 not last) passed at "
               "16:39 on tree 8de3f48; remove after a green `PYHUDI_CONFORMANCE_KNOWN=1` small profile"),
    Known(
        "overwrite-without-partition-keeps-partitions", "pyhudi bug (issue 12 item 2, being fixed)",
        "INSERT OVERWRITE TABLE t SELECT ... (no PARTITION clause) on a partitioned table keeps the partitions the "
        "batch does not write: pyhudi.session() sets spark.sql.sources.partitionOverwriteMode=dynamic, where "
        "Spark's and Hudi's default (static) replaces the whole table (insert_overwrite_table).",
        "PYHUDI_CONFORMANCE_KNOWN=1 PYHUDI_CONFORMANCE_SEED=<seed> (an overwrite step tagged "
        "overwrite-default-mode-partitioned: no SET before it, partitioned table)",
        _tags("overwrite-default-mode-partitioned"),
        status="appears fixed: KNOWN=1 replay of seed 1009 (step 1: INSERT OVERWRITE TABLE without PARTITION on a "
               "partitioned table, default mode) passed at 16:39 on tree 8de3f48 (ef556de keeps Spark's static mode)"),
    Known(
        "overwrite-no-precombine", "pyhudi bug",
        "INSERT OVERWRITE on a table with a preCombineField keeps every row of a batch that repeats a record key; "
        "Hudi's SQL insert path sets hoodie.combine.before.insert = (table has preCombineField and primaryKey) "
        "(ProvidesHoodieConfig.buildHoodieInsertConfig), so only the row with the greatest ordering value is "
        "written, as INSERT INTO (upsert) already does in pyhudi.",
        "CREATE TABLE t (k STRING, ts INT, v INT) USING hudi TBLPROPERTIES (primaryKey='k', preCombineField='ts'); "
        "INSERT OVERWRITE TABLE t SELECT * FROM VALUES ('a', 1, 1), ('a', 2, 2) -> 2 rows, Hudi: 1 ('a', 2, 2). "
        "Harness: PYHUDI_CONFORMANCE_KNOWN=1 PYHUDI_CONFORMANCE_SEED=1001",
        _tags("overwrite-repeated-keys"),
        status="open: KNOWN=1 replay of seed 1001 still fails at 16:40 on tree 8de3f48 (step [3], dynamic mode, "
               "unpartitioned: 5 rows where the reference has 3)"),
    Known(
        "merge-two-commits", "pyhudi bug (issue 12 item 5, being fixed)",
        "MERGE INTO with WHEN MATCHED ... DELETE and an update/insert clause makes two commits (upsert, then "
        "delete) when both have rows; Hudi's MERGE INTO is one commit. Rows are right; the one-commit-per-statement "
        "check is not asserted for these statements.",
        "PYHUDI_CONFORMANCE_KNOWN=1 PYHUDI_CONFORMANCE_SEED=<seed> (a merge step tagged merge-delete-and-upsert)",
        _tags("merge-delete-and-upsert"), effect="relaxes:one-commit",
        status="likely fixed by 8d8f6b1 (MERGE as one upsert with delete flags): KNOWN=1 replays of seeds 1002 "
               "and 1017 passed at 16:40"),
]


# dbt entries (id "dbt-...", applies(project)) make test_dbt_conformance keep a project's partition columns last.
# dbt-partition-by-not-last (run 2 refused: "partition_by [p1, p0] differs from the partition columns of ... []",
# seed 5000 at 15:58) was removed at 16:44: seed 5000 replays green on tree 8de3f48, as do 5001-5003.


def blocks(shape, step) -> bool:
    return any(k.effect == "blocks" and k.applies(shape, step) for k in KNOWN_DIVERGENCES)


def relaxed(check: str, shape, step) -> list[Known]:
    return [k for k in KNOWN_DIVERGENCES if k.effect == f"relaxes:{check}" and k.applies(shape, step)]
