"""File-level audit of a table after faults: data files on disk against what the timeline says.

Shared by the fault matrix and the model-based test. A stray file is a data file no completed instant's write
stats name (a leftover of an undone write); a missing file is one a completed instant wrote that is gone though no
completed clean deleted it and no pending clean plan names it (a clean that crashed after deleting files is finished
by the next clean, as in Hudi).
"""

from __future__ import annotations

from pathlib import Path

import posixpath

import pyarrow.parquet as pq

from pyhudi.timeline import avro_record as avro
from pyhudi.commit.timeline_metadata import read_cleaner_plan
from pyhudi.file_group.naming import parse_base_file_name, parse_log_file_name
from pyhudi.services.archive import read_archived_entries
from pyhudi.services.clean.run import read_clean_metadata
from pyhudi.table import HudiTable
from pyhudi.timeline import WRITE_ACTIONS
from pyhudi.timeline.commit_metadata import parse_commit_metadata
from pyhudi.timeline.lsm_history import read_history


def data_files(path: str) -> set[str]:
    root = Path(path)
    out = set()
    for file in root.rglob("*"):
        if file.is_file() and ".hoodie" not in file.relative_to(root).parts and \
                (parse_base_file_name(file.name) or parse_log_file_name(file.name)):
            out.add(str(file.relative_to(root)))
    return out


def referenced(table: HudiTable) -> tuple[set[str], set[str]]:
    """(files named by completed instants' write stats, files completed cleans deleted), archived ones included."""
    timeline = table.timeline()
    commits = [timeline.read_metadata(i) for i in timeline.completed_writes()]
    cleans = [read_clean_metadata(table.storage, i).to_avro() for i in timeline.completed(["clean"])]
    for entry in read_archived_entries(table.storage):
        if entry.get("actionState") != "COMPLETED":
            continue
        commits.append(entry.get("hoodieCommitMetadata") or entry.get("hoodieReplaceCommitMetadata") or {})
        cleans.append(entry.get("hoodieCleanMetadata") or {})
    if timeline.layout.version == 2:   # Hudi 1.x: the LSM timeline history holds each instant's own metadata bytes
        for archived in read_history(table.storage, timeline.layout.history_folder):
            where = f"{timeline.layout.history_folder}: {archived.time}"
            if archived.action in WRITE_ACTIONS and archived.metadata:
                commits.append(parse_commit_metadata(archived.metadata, where))
            elif archived.action == "clean" and archived.metadata:
                cleans.append(avro.from_bytes(archived.metadata, where))
    written, cleaned = set(), set()
    for meta in commits:
        for stats in (meta.get("partitionToWriteStats") or {}).values():
            written.update(s["path"] for s in stats if s.get("path"))
    for meta in cleans:
        for partition, info in (meta.get("partitionMetadata") or {}).items():
            cleaned.update(f"{partition}/{name}" if partition else name for name in info.get("successDeleteFiles", []))
    for instant in timeline.pending(["clean"]):
        plan = read_cleaner_plan(table.storage, instant.time)
        for partition, files in (plan.file_paths or {}).items():
            cleaned.update(posixpath.join(partition, posixpath.basename(f.file_path)) if partition
                           else posixpath.basename(f.file_path) for f in files if f.file_path)
    return written, cleaned


def missing_files(path: str) -> list[str]:
    written, cleaned = referenced(HudiTable.load(path))
    return sorted(written - cleaned - data_files(path))


def misnamed_rows(path: str) -> list[str]:
    """Base files with rows whose `_hoodie_file_name` names another file (Hudi writes the holding file's name into
    every row it writes or copies; a virtual-key table's files hold it too)."""
    out = []
    for relative in sorted(data_files(path)):
        name = Path(relative).name
        if not parse_base_file_name(name):
            continue
        try:
            values = pq.read_table(Path(path) / relative, columns=["_hoodie_file_name"]).column(0).unique().to_pylist()
        except (OSError, ValueError) as exc:   # a torn file (ArrowInvalid is a ValueError)
            out.append(f"{relative}: unreadable ({exc})")
            continue
        if values and values != [name]:
            out.append(f"{relative}: {sorted(map(str, values))}")
    return out


def leftovers(path: str, *, allow_pending: bool = False) -> dict:
    """Everything a finished, recovered table must not have; each entry empty when all is well."""
    table = HudiTable.load(path)
    timeline = table.timeline()
    written, _ = referenced(table)
    temp = Path(path) / ".hoodie" / ".temp"
    pending = {i.time for i in timeline.pending()}
    return {"stray files": sorted(data_files(path) - written),
            "missing files": missing_files(path),
            "markers of finished instants": sorted(d.name for d in temp.iterdir() if d.name not in pending)
            if temp.exists() else [],
            "pending instants": [] if allow_pending else [str(i) for i in timeline.pending()],
            "misnamed rows": misnamed_rows(path)}


CLEAN = {"stray files": [], "missing files": [], "markers of finished instants": [], "pending instants": [],
         "misnamed rows": []}
