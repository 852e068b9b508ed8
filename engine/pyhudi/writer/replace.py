"""Replace operations: insert_overwrite, insert_overwrite_table, delete_partition.

They commit a `replacecommit` whose HoodieReplaceCommitMetadata lists `partitionToReplaceFileIds`: the file groups
the commit supersedes. Readers drop those file groups as soon as the replacecommit completes; the cleaner deletes
their files later. insert_overwrite replaces the partitions present in the batch, insert_overwrite_table every
partition, delete_partition the partitions named by `hoodie.datasource.write.partitions.to.delete` (or, without
it, those of the batch) and writes no data.
"""

from __future__ import annotations

import fnmatch
from typing import Mapping, Sequence

from pyhudi import config as C
from pyhudi.errors import ConfigError, PartitionPathError, PyHudiError
from pyhudi.table import FileSystemView, HudiTable
from pyhudi.timeline import WriteStat

REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table", "delete_partition")
PARTITIONS_TO_DELETE = C.PARTITIONS_TO_DELETE.key


def partitions_to_delete(table: HudiTable, raw: str | None, batch_partitions: list[str]) -> list[str]:
    """The partitions a delete_partition names (`raw`: WriteConfig.partitions_to_delete, a comma list; `*`
    wildcards as in Hudi), each checked to exist; without it, the batch's partitions."""
    existing = table.view().partitions()
    if not raw:
        if not batch_partitions:
            raise ConfigError(f"delete_partition on table {table.name} names no partition: set {PARTITIONS_TO_DELETE}"
                              " to a comma-separated list of partition paths, e.g. 'region=eu,region=us'")
        wanted = list(batch_partitions)
    else:
        wanted = [p.strip().strip("/") for p in str(raw).split(",") if p.strip()]
    out: list[str] = []
    for pattern in wanted:
        matches = fnmatch.filter(existing, pattern) if any(c in pattern for c in "*?[") else \
            [pattern] if pattern in existing else []
        if not matches:
            shown = ", ".join(existing[:10]) + (" ..." if len(existing) > 10 else "")
            raise PartitionPathError(f"cannot delete partition {pattern!r} of table {table.name} at "
                                     f"{table.storage.base_uri}: it does not exist (partitions: {shown or 'none'}); "
                                     "check the partition path format (e.g. hive style 'key=value')")
        out.extend(m for m in matches if m not in out)
    return out


def replaced_file_ids(view: FileSystemView, operation: str, partitions: list[str]) -> dict[str, list[str]]:
    """{partition: [file ids]} of the file groups this replace operation supersedes."""
    wanted = None if operation == "insert_overwrite_table" else set(partitions)
    replaced: dict[str, list[str]] = {}
    for partition, file_id in sorted(view.file_groups):
        if wanted is None or partition in wanted:
            replaced.setdefault(partition, []).append(file_id)
    if wanted:
        for partition in wanted:
            replaced.setdefault(partition, [])
    return replaced


def self_replaced(replaced: Mapping[str, list[str]] | None, stats: Sequence[WriteStat]) -> list[WriteStat]:
    """The write stats of file groups their own replacecommit lists as replaced (`replaced`: its
    partitionToReplaceFileIds): every reader drops the rows they hold."""
    ids = {(partition, file_id) for partition, group in (replaced or {}).items() for file_id in group or ()}
    return [s for s in stats if (s.partition_path, s.file_id) in ids]


def check_not_replacing_written(replaced: Mapping[str, list[str]] | None, stats: Sequence[WriteStat], table_name: str,
                                instant_time: str) -> None:
    """A replacecommit that lists a file group it writes would hide its own rows from every reader: refuse to
    complete it (the transaction then removes its files; the table is unchanged)."""
    hidden = sorted({(s.partition_path or "", s.file_id or "") for s in self_replaced(replaced, stats)})
    if hidden:
        partition, file_id = hidden[0]
        raise PyHudiError(f"internal error in table {table_name}: replacecommit {instant_time} would replace file "
                          f"group {partition or '(non-partitioned)'}/{file_id} that it writes itself ({len(hidden)} "
                          "such group(s)), hiding the rows it wrote; the write was not committed. Please report it.")
