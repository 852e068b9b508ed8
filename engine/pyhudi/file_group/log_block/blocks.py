"""Block content by type (encode_content/decode_content) and the builders of data, delete and rollback command
blocks the writers use."""

from __future__ import annotations

from typing import Any, Iterable

import pyarrow as pa

from pyhudi.errors import PyHudiError
from pyhudi.file_group.log_block.data_content import (decode_avro_content, decode_parquet_content,
                                                      encode_avro_content, encode_parquet_content)
from pyhudi.file_group.log_block.delete_content import (BRANCH, branch_for_value, decode_delete_content,
                                                        encode_delete_content, ordering_branch_for)
from pyhudi.file_group.log_block.model import (BlockType, CommandBlockType, DEFAULT_PARQUET_COMPRESSION, DeleteRecord,
                                               LogBlock)


def encode_content(block: LogBlock) -> bytes:
    """The content bytes of ``block`` (its ``content`` when already encoded)."""
    if block.content is not None:
        return block.content
    kind = block.block_type
    if kind == BlockType.PARQUET_DATA_BLOCK:
        if block.records is None:
            raise PyHudiError("A parquet data block needs records")
        return encode_parquet_content(block.records, block.schema)
    if kind == BlockType.AVRO_DATA_BLOCK:
        if block.records is None or not block.schema:
            raise PyHudiError("An avro data block needs records and a SCHEMA header")
        return encode_avro_content(block.records, block.schema)
    if kind == BlockType.DELETE_BLOCK:
        return encode_delete_content(block.delete_keys or [])
    if kind == BlockType.COMMAND_BLOCK:
        return b""
    raise PyHudiError(f"pyhudi cannot encode {kind.name} blocks from records; pass the raw content")


def decode_content(block_type: BlockType, header: dict[str, str], content: bytes) -> dict[str, Any]:
    """The payload fields (records / delete_keys / command / content) of a block read from a file."""
    if block_type == BlockType.PARQUET_DATA_BLOCK:
        return {"records": decode_parquet_content(content)}
    if block_type == BlockType.AVRO_DATA_BLOCK:
        return {"records": decode_avro_content(content, header.get("SCHEMA"))}
    if block_type == BlockType.DELETE_BLOCK:
        return {"delete_keys": decode_delete_content(content)}
    if block_type == BlockType.COMMAND_BLOCK:
        raw = header.get("COMMAND_BLOCK_TYPE")
        try:
            command = CommandBlockType(int(raw)).name
        except (TypeError, ValueError):
            raise ValueError(f"unknown COMMAND_BLOCK_TYPE {raw!r}") from None
        return {"command": command}
    return {"content": content}


# --------------------------------------------------------------------------------------------------------------
# Factories
# --------------------------------------------------------------------------------------------------------------

def _check_instant(instant_time: str, what: str = "instant_time") -> str:
    if not isinstance(instant_time, str) or not instant_time.isdigit():
        raise PyHudiError(f"Log block {what} must be a Hudi instant time like '20250117083136333', "
                          f"got {instant_time!r}")
    return instant_time


def parquet_data_block(records: pa.Table, instant_time: str, avro_schema_json: str,
                       compression: str = DEFAULT_PARQUET_COMPRESSION) -> LogBlock:
    """A PARQUET_DATA_BLOCK holding ``records`` (with the ``_hoodie_*`` meta columns) written at ``instant_time``.

    ``avro_schema_json`` is the records' Avro schema (meta fields included), stored in the SCHEMA header as Hudi
    does; Hudi readers use it as the block's writer schema.
    """
    header = {"INSTANT_TIME": _check_instant(instant_time), "SCHEMA": avro_schema_json}
    content = encode_parquet_content(records, avro_schema_json, compression)
    return LogBlock(BlockType.PARQUET_DATA_BLOCK, header, {}, records=records, content=content)


def avro_data_block(records: pa.Table, instant_time: str, avro_schema_json: str) -> LogBlock:
    """An AVRO_DATA_BLOCK: records encoded as schemaless binary Avro with ``avro_schema_json`` (the SCHEMA header)."""
    header = {"INSTANT_TIME": _check_instant(instant_time), "SCHEMA": avro_schema_json}
    content = encode_avro_content(records, avro_schema_json)
    return LogBlock(BlockType.AVRO_DATA_BLOCK, header, {}, records=records, content=content)


def natural_delete(record_key: str, partition_path: str) -> DeleteRecord:
    """A delete without an ordering value of its own: Hudi's natural ordering value, Integer 0 (what Java writes
    for the delete operation and SQL DELETE); it wins over any stored record."""
    return DeleteRecord(record_key, partition_path, 0, BRANCH["int"])


def delete_block(keys: Iterable[tuple[str, str, Any] | DeleteRecord], instant_time: str,
                 ordering_avro_type: Any = None, avro_schema_json: str | None = None) -> LogBlock:
    """A DELETE_BLOCK for ``keys`` = (record_key, partition_path, ordering_value) tuples or DeleteRecords.

    ``ordering_avro_type`` is the precombine field's Avro type (it picks the orderingVal union branch, see
    :func:`ordering_branch_for`); None infers the branch from each value's Python type. ``avro_schema_json`` (the
    table schema) goes into the SCHEMA header as Hudi writes it; it is optional for readers.
    """
    branch = None if ordering_avro_type is None else ordering_branch_for(ordering_avro_type)
    records: list[DeleteRecord] = []
    for key in keys:
        if isinstance(key, DeleteRecord):
            record = DeleteRecord(key.record_key, key.partition_path, key.ordering_val, key.ordering_type)
        else:
            record_key, partition_path, ordering_val = key
            record = DeleteRecord(record_key, partition_path, ordering_val)
        if record.record_key is None or record.record_key == "":
            raise PyHudiError("A delete block key has a null or empty record key; every deleted record needs "
                              "its record key")
        if record.ordering_type is None:
            record.ordering_type = 0 if record.ordering_val is None else (
                branch if branch is not None else branch_for_value(record.ordering_val))
        records.append(record)
    header = {"INSTANT_TIME": _check_instant(instant_time)}
    if avro_schema_json:
        header["SCHEMA"] = avro_schema_json
    content = encode_delete_content(records)
    return LogBlock(BlockType.DELETE_BLOCK, header, {}, delete_keys=records, content=content)


def rollback_command_block(instant_time: str, target_instant_time: str) -> LogBlock:
    """A COMMAND_BLOCK (ROLLBACK_BLOCK) written by rollback ``instant_time``.

    It voids the blocks that ``target_instant_time`` wrote earlier in the file group's log.
    """
    header = {
        "INSTANT_TIME": _check_instant(instant_time),
        "TARGET_INSTANT_TIME": _check_instant(target_instant_time, "target_instant_time"),
        "COMMAND_BLOCK_TYPE": str(CommandBlockType.ROLLBACK_BLOCK.value),
    }
    return LogBlock(BlockType.COMMAND_BLOCK, header, {}, command=CommandBlockType.ROLLBACK_BLOCK.name, content=b"")
