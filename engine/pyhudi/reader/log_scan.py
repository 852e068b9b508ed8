"""Which log blocks of a file slice a reader applies (HoodieMergedLogRecordScanner's block selection: committed,
visible, not rolled back, torn tails tolerated outside committed byte ranges), and their records and delete
entries in log order, ready for combining (reader/log_combine.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import pyarrow as pa

from pyhudi.errors import CorruptFileError, PyHudiError
from pyhudi.file_group.log_block import BlockType, LogBlock
from pyhudi.file_group.log_file import read_log_bytes
from pyhudi.file_group.model import LogFile
from pyhudi.reader.slice_columns import SEQ, DEL, conform, empty_internal, is_deleted_flags, with_internals
from pyhudi.storage import Storage

_DATA_BLOCKS = (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK)


@dataclass
class ScannedBlock:
    """A log block that survived the scan: committed, visible and not rolled back (decoded)."""

    path: str
    block: LogBlock

    @property
    def records(self) -> pa.Table | None:
        return self.block.records

    @property
    def instant_time(self) -> str | None:
        return self.block.instant_time


def scan_log_blocks(storage: Storage, log_files: list[LogFile], visible_instants: Iterable[str], *,
                    committed_before: str | None = None,
                    committed_extents: Mapping[str, list[tuple[int, int]]] | None = None) -> list[ScannedBlock]:
    """The data and delete blocks of ``log_files`` (in order) that a reader applies, decoded.

    Blocks of instants outside ``visible_instants`` are skipped without decoding; a ROLLBACK command block drops
    the earlier blocks of its target instant (when the command itself is not later than the latest visible
    instant, like Hudi's scanner, which stops at blocks later than the query instant). Corrupt blocks are
    skipped with a warning by the log reader (the torn tail of a failed write), except inside a byte range a
    completed commit wrote (``committed_extents``): committed data is damaged, so CorruptFileError.
    """
    visible = frozenset(visible_instants)
    latest = max(visible) if visible else None

    def counts(instant: str | None) -> bool:
        if not instant:
            return False
        if instant in visible:
            return True
        return committed_before is not None and instant < committed_before and (latest is None or instant <= latest)

    queued: list[tuple[str, bytes, LogBlock]] = []
    for log_file in log_files:
        data = storage.read_bytes(log_file.path)
        extents = (committed_extents or {}).get(log_file.path, ())
        for block in read_log_bytes(data, log_file.path, decode=False, include_corrupt=True):
            instant = block.instant_time
            if block.block_type == BlockType.CORRUPT_BLOCK:
                _check_torn_block(log_file.path, block, extents)
                continue
            if block.block_type == BlockType.COMMAND_BLOCK:
                if block.is_rollback and instant and latest is not None and instant <= latest:
                    target = block.target_instant_time
                    queued = [q for q in queued if q[2].instant_time != target]
                continue
            if block.block_type not in _DATA_BLOCKS and block.block_type != BlockType.DELETE_BLOCK:
                # CDC blocks hold change data, not table rows; corrupt blocks were already reported
                if block.block_type == BlockType.HFILE_DATA_BLOCK and counts(instant):
                    raise PyHudiError(
                        f"Hudi log file {log_file.path}: the {block.block_type.name} at offset {block.offset} "
                        f"(instant {instant}) cannot be read by pyhudi (only avro/parquet data, delete and command "
                        "blocks); compact the file group with Hudi, or read it read-optimized.")
                continue
            if counts(instant):
                queued.append((log_file.path, data, block))

    out = []
    for path, data, header_only in queued:
        raw = data[header_only.offset:header_only.offset + header_only.length]
        decoded = list(read_log_bytes(raw, f"{path} (block at offset {header_only.offset})", decode=True))
        if len(decoded) != 1:     # the framing was validated by the header pass over the same bytes
            raise CorruptFileError(f"Hudi log file {path}: the block at offset {header_only.offset} cannot be "
                                   "decoded; restore the file, or roll back its instant")
        out.append(ScannedBlock(path, decoded[0]))
    return out


def _check_torn_block(path: str, block: LogBlock, extents) -> None:
    """A corrupt region is tolerated (a failed write's torn append) unless a completed commit wrote those bytes."""
    start, end = block.offset, block.offset + block.length
    for low, high in extents:
        if start < high and low < end:
            raise CorruptFileError(
                f"Hudi log file {path}: bytes {start}-{end} hold a corrupt block (bad magic, size or framing) inside "
                f"the range {low}-{high} a completed commit wrote; committed records would be lost. Restore the "
                "file, or roll back the instant that wrote it.")


@dataclass
class LogRecords:
    """Every record and delete entry of the scanned blocks, in log order (``seq`` shared by both)."""

    records: pa.Table                      # output schema + KEY, ORD, SEQ, DEL
    delete_keys: list[str] = field(default_factory=list)
    delete_seqs: list[int] = field(default_factory=list)
    delete_vals: list[Any] = field(default_factory=list)
    delete_branches: list[int | None] = field(default_factory=list)
    ord_type: pa.DataType | None = None


def log_records(blocks: list[ScannedBlock], schema: pa.Schema, ordering_field: str | None,
                 ord_type: pa.DataType | None) -> LogRecords:
    tables = []
    out = LogRecords(records=None, ord_type=ord_type)  # type: ignore[arg-type]
    seq = 0
    for scanned in blocks:
        block = scanned.block
        where = f"Hudi log file {scanned.path} (block of instant {block.instant_time})"
        if block.block_type == BlockType.DELETE_BLOCK:
            for entry in block.delete_keys or []:
                if entry.record_key is None:
                    raise CorruptFileError(f"{where} deletes a null record key; restore the file or roll back the "
                                           "instant")
                out.delete_keys.append(entry.record_key)
                out.delete_seqs.append(seq)
                out.delete_vals.append(entry.ordering_val)
                out.delete_branches.append(entry.ordering_type)
                seq += 1
            continue
        raw = block.records
        if raw is None or raw.num_rows == 0:
            continue
        table = with_internals(conform(raw, schema, where), raw, ordering_field, ord_type, where)
        table = table.append_column(SEQ, pa.array(range(seq, seq + raw.num_rows), pa.int64()))
        table = table.append_column(DEL, is_deleted_flags(raw))
        seq += raw.num_rows
        tables.append(table)
    if tables:
        out.records = pa.concat_tables(tables)
    else:
        out.records = empty_internal(schema, ord_type)
    return out
