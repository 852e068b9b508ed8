"""What one Hudi log block is: the magic, versions, block/header/command types, DeleteRecord, LogBlock, and the
header metadata codec (ordinal keys, big-endian framing)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import pyarrow as pa

from pyhudi.errors import PyHudiError


MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1          # HoodieLogFormat.CURRENT_VERSION: block type, header, content length, footer, length
LOG_BLOCK_VERSION = 3           # HoodieLogBlock.version: first int of avro/delete block content
# Branches of the orderingVal union of a delete record (HoodieDeleteRecord), in Hudi's order.
ORDERING_VAL_BRANCHES = (
    "null", "boolean", "int", "long", "float", "double", "bytes", "string", "date", "decimal",
    "time-micros", "timestamp-micros",
)
DEFAULT_PARQUET_COMPRESSION = "gzip"   # hoodie.parquet.compression.codec default, used for parquet log blocks


class BlockType(IntEnum):
    """HoodieLogBlock.HoodieLogBlockType; serialized as the ordinal."""

    COMMAND_BLOCK = 0
    DELETE_BLOCK = 1
    CORRUPT_BLOCK = 2
    AVRO_DATA_BLOCK = 3
    HFILE_DATA_BLOCK = 4
    PARQUET_DATA_BLOCK = 5
    CDC_DATA_BLOCK = 6


class HeaderMetadataType(IntEnum):
    """HoodieLogBlock.HeaderMetadataType; serialized as the ordinal (header and footer keys)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7                                   # table version 8+
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8   # table version 8+


class CommandBlockType(IntEnum):
    """HoodieCommandBlock.HoodieCommandBlockTypeEnum; the header carries the ordinal as a decimal string."""

    ROLLBACK_BLOCK = 0


# --------------------------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------------------------

@dataclass
class DeleteRecord:
    """One key of a delete block (Hudi's DeleteRecord / HoodieDeleteRecord).

    ``ordering_type`` is the branch of the ``orderingVal`` union (see :data:`ORDERING_VAL_BRANCHES`) the value was
    (or will be) written with; None lets the writer pick it from the ordering field's Avro type.
    """

    record_key: str
    partition_path: str
    ordering_val: Any = None
    ordering_type: int | None = None

    @property
    def ordering_type_name(self) -> str | None:
        return None if self.ordering_type is None else ORDERING_VAL_BRANCHES[self.ordering_type]


@dataclass
class LogBlock:
    """One block of a Hudi log file.

    ``header``/``footer`` map HeaderMetadataType names (``"INSTANT_TIME"``, ``"SCHEMA"``, ...) to strings, in the
    order they are (or were) serialized. Exactly one payload is set according to ``block_type``: ``records``
    (data blocks), ``delete_keys`` (delete block) or ``command`` (command block: ``"ROLLBACK_BLOCK"``).
    ``content`` is the encoded content when known: the factories fill it eagerly (so bad input fails before
    anything is written) and the writer uses it verbatim when present; blocks of types pyhudi does not decode
    (HFILE, CDC) keep their raw content there so they can be copied.
    ``offset``/``length`` say where a block read from a file starts (its magic) and how many bytes it spans.
    """

    block_type: BlockType
    header: dict[str, str] = field(default_factory=dict)
    footer: dict[str, str] = field(default_factory=dict)
    records: pa.Table | None = None
    delete_keys: list[DeleteRecord] | None = None
    command: str | None = None
    content: bytes | None = field(default=None, repr=False)
    offset: int | None = None
    length: int | None = None

    @property
    def instant_time(self) -> str | None:
        return self.header.get("INSTANT_TIME")

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get("TARGET_INSTANT_TIME")

    @property
    def schema(self) -> str | None:
        """The Avro schema JSON of the block's records (header SCHEMA)."""
        return self.header.get("SCHEMA")

    @property
    def is_data_block(self) -> bool:
        return self.block_type in (BlockType.AVRO_DATA_BLOCK, BlockType.PARQUET_DATA_BLOCK,
                                   BlockType.HFILE_DATA_BLOCK, BlockType.CDC_DATA_BLOCK)

    @property
    def is_rollback(self) -> bool:
        return self.block_type == BlockType.COMMAND_BLOCK and self.command == CommandBlockType.ROLLBACK_BLOCK.name

    @property
    def num_records(self) -> int:
        if self.records is not None:
            return self.records.num_rows
        if self.delete_keys is not None:
            return len(self.delete_keys)
        return 0


# --------------------------------------------------------------------------------------------------------------
# Header / footer metadata maps
# --------------------------------------------------------------------------------------------------------------

def _metadata_key_ordinal(name: str) -> int:
    if name in HeaderMetadataType.__members__:
        return HeaderMetadataType[name].value
    if name.startswith("HEADER_") and name[7:].isdigit():   # unknown ordinal kept from a read
        return int(name[7:])
    raise PyHudiError(
        f"Unknown log block header key {name!r}; use one of {', '.join(HeaderMetadataType.__members__)}")


def _metadata_key_name(ordinal: int) -> str:
    try:
        return HeaderMetadataType(ordinal).name
    except ValueError:
        return f"HEADER_{ordinal}"


def encode_metadata(metadata: dict[str, str]) -> bytes:
    """HoodieLogBlock.getLogMetadataBytes: int count, then per entry int ordinal, int length, UTF-8 bytes."""
    out = [struct.pack(">i", len(metadata))]
    for key, value in metadata.items():
        data = str(value).encode("utf-8")
        out.append(struct.pack(">ii", _metadata_key_ordinal(key), len(data)))
        out.append(data)
    return b"".join(out)


def decode_metadata(data: bytes, pos: int) -> tuple[dict[str, str], int]:
    """Inverse of :func:`encode_metadata` starting at ``pos``; returns (metadata, position after it).

    Raises ValueError/struct.error when the bytes run out (the caller treats that as a corrupt block).
    """
    (count,) = struct.unpack_from(">i", data, pos)
    pos += 4
    if count < 0 or count > 1024:
        raise ValueError(f"implausible metadata entry count {count}")
    metadata: dict[str, str] = {}
    for _ in range(count):
        ordinal, size = struct.unpack_from(">ii", data, pos)
        pos += 8
        if size < 0 or pos + size > len(data):
            raise ValueError(f"metadata entry of {size} bytes runs past the block")
        metadata[_metadata_key_name(ordinal)] = data[pos:pos + size].decode("utf-8")
        pos += size
    return metadata, pos
