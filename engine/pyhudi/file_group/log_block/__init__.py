"""Hudi log blocks (log format version 1, block content version 3): the model and the content codecs.

A log file is a sequence of blocks (see :mod:`pyhudi.file_group.log_file` for the framing). This module holds
what one block *is* and how its content bytes are encoded, as Apache Hudi 0.14/0.15 (table version 6) does:

* ``AVRO_DATA_BLOCK`` content: ``int version (=3)``, ``int record count``, then per record ``int length`` and the
  record as schemaless binary Avro written with the block's ``SCHEMA`` header.
* ``PARQUET_DATA_BLOCK`` content: the bytes of a complete parquet file holding the records (with the five
  ``_hoodie_*`` meta columns).
* ``DELETE_BLOCK`` content: ``int version (=3)``, ``int length``, then a binary ``HoodieDeleteRecordList`` Avro
  datum: for each key ``recordKey``, ``partitionPath`` and ``orderingVal`` (a union whose branch follows the
  ordering value's type).
* ``COMMAND_BLOCK`` content: empty; the header says ``COMMAND_BLOCK_TYPE`` (``"0"`` = rollback) and
  ``TARGET_INSTANT_TIME`` (the instant whose blocks are rolled back).

All integers of the framing are big-endian (Java ``DataOutputStream``).

Modules, one concept each: ``model`` (block types, LogBlock, header metadata), ``avro_codec`` (Avro records
<-> Arrow), ``data_content`` (avro/parquet data blocks), ``delete_content`` (delete blocks), ``blocks`` (content
by type and the block builders). Import from ``pyhudi.file_group.log_block``.
"""

from __future__ import annotations

from pyhudi.file_group.log_block.avro_codec import avro_schema_to_arrow
from pyhudi.file_group.log_block.blocks import (avro_data_block, decode_content, delete_block, encode_content,
                                                natural_delete, parquet_data_block, rollback_command_block)
from pyhudi.file_group.log_block.data_content import (conform_records, decode_avro_content, decode_parquet_content,
                                                      encode_avro_content, encode_parquet_content)
from pyhudi.file_group.log_block.delete_content import (DELETE_RECORD_LIST_SCHEMA, decode_delete_content,
                                                        encode_delete_content, ordering_branch_for)
from pyhudi.file_group.log_block.model import (DEFAULT_PARQUET_COMPRESSION, LOG_BLOCK_VERSION, LOG_FORMAT_VERSION,
                                               MAGIC, ORDERING_VAL_BRANCHES, BlockType, CommandBlockType,
                                               DeleteRecord, HeaderMetadataType, LogBlock, decode_metadata,
                                               encode_metadata)

__all__ = [
    "MAGIC", "LOG_FORMAT_VERSION", "LOG_BLOCK_VERSION", "BlockType", "HeaderMetadataType", "CommandBlockType",
    "DeleteRecord", "LogBlock", "ORDERING_VAL_BRANCHES", "DELETE_RECORD_LIST_SCHEMA", "ordering_branch_for",
    "avro_schema_to_arrow", "conform_records", "encode_metadata", "decode_metadata", "encode_content", "decode_content",
    "parquet_data_block", "avro_data_block", "delete_block", "rollback_command_block",
    "natural_delete", "encode_avro_content", "decode_avro_content", "encode_parquet_content", "decode_parquet_content",
    "encode_delete_content", "decode_delete_content", "DEFAULT_PARQUET_COMPRESSION",
]
