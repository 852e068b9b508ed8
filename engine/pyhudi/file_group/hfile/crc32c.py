"""CRC32C (Castagnoli), the checksum HBase stamps on every HFile v3 block.

Hand-written in pure Python (one 256-entry table, reflected polynomial 0x82F63B78) because no CRC32C package is in
the venv and the per-chunk checksums must be bit-identical to Java's (java.util.zip.CRC32C / Hadoop's
PureJavaCrc32C) for HBase readers, which verify them.
"""

from __future__ import annotations

_POLYNOMIAL = 0x82F63B78


def _make_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLYNOMIAL if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_TABLE = _make_table()


def crc32c(data: bytes | memoryview) -> int:
    """The CRC32C of `data` (initial value and final xor 0xFFFFFFFF, as Java computes it)."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
