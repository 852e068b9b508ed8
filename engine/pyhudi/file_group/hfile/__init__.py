"""HFile v3, the format of Hudi's metadata table base files and of its log files' HFile data blocks.

A pure-Python writer and reader, byte-compatible with the files HBase 2.x writes for Java Hudi and readable by
hudi-rs and Hudi's own ``hudi-io`` reader. Each Hudi record is one HBase KeyValue cell whose row is the record key.

    encoding   varints, Hadoop vlongs and the protobuf subset of the trailer and FileInfo
    crc32c     the per-block checksum (hand-written for bit compatibility with Java)
    cell       the KeyValue cell layout and HBase's fake index keys
    block      block header, compression and checksums
    index      root and non-root block indexes
    file_info  the FileInfo map and the entries HBase adds to it
    trailer    the fixed 4096-byte trailer
    writer     write_hfile
    reader     HFileReader
"""

from __future__ import annotations

from .reader import HFileReader
from .writer import write_hfile

__all__ = ["HFileReader", "write_hfile"]
