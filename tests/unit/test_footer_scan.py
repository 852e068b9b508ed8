"""Footer entries found in the footer's bytes (file_group/footer_scan.py) must be exactly what pyarrow's full
parse of the footer gives, whatever the keys, values and schema around them; anything unexpected falls back."""

import random
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pyhudi.file_group.base_file import read_footer, read_footer_entries
from pyhudi.file_group.bloom_filter import FILTER_KEYS, FOOTER_MAX_KEY, FOOTER_MIN_KEY
from pyhudi.file_group.footer_scan import find_entries, footer_bytes
from pyhudi.storage import Storage
from support import FIXTURES



def _write(path, metadata: dict, columns=("key", "value")) -> None:
    table = pa.table({c: pa.array([f"{c}-{i}" for i in range(5)]) for c in columns})
    pq.write_table(table.replace_schema_metadata(metadata), path)


def _pyarrow_entries(path, keys) -> dict:
    raw = pq.ParquetFile(path).metadata.metadata or {}
    return {k: v for k, v in raw.items() if k in keys}


def _scanned(path, keys):
    with pa.OSFile(str(path)) as source:
        return find_entries(footer_bytes(source), keys)


def test_entries_match_pyarrow_around_decoys(tmp_path):
    """A column and a value named like the wanted key, long keys and values (multi-byte lengths), values that
    hold the encoding's marker bytes: the scan returns what pyarrow parses."""
    path = tmp_path / "f.parquet"
    metadata = {FOOTER_MIN_KEY: "k0001", FOOTER_MAX_KEY: "k9999", "parquet.avro.schema": f'{{"name": "{FOOTER_MIN_KEY}"}}',
                "long." + "x" * 300: "\x18\x00" * 5000, "org.apache.hudi.bloomfilter": "QUJD" * 70000}
    _write(path, metadata, columns=("key", FOOTER_MIN_KEY, "value"))
    keys = tuple(k.encode() for k in metadata) + (b"absent.key",)
    assert _scanned(path, keys) == _pyarrow_entries(path, keys)
    assert _scanned(path, (b"absent.key",)) == {}


@pytest.mark.parametrize("tail", [40, 300, 64 * 1024])
def test_random_footers_match_pyarrow(tmp_path, monkeypatch, tail):
    """Also when the footer's end read first (FOOTER_TAIL_BYTES) holds only some of the entries, or cuts one."""
    from pyhudi.file_group import base_file
    monkeypatch.setattr(base_file, "FOOTER_TAIL_BYTES", tail)
    rng = random.Random(7)
    alphabet = "abc_.\x18\x00é" + "".join(chr(c) for c in range(32, 127))
    for case in range(60):
        metadata = {}
        for _ in range(rng.randint(0, 6)):
            key = "".join(rng.choice(alphabet) for _ in range(rng.choice([1, 5, 127, 128, 200])))
            metadata[key] = "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 127, 128, 20000])))
        path = tmp_path / f"r{case}.parquet"
        columns = tuple(dict.fromkeys(["key", *(k for k in list(metadata)[:1] if k and "\x00" not in k)]))
        _write(path, metadata, columns=columns)
        keys = tuple(k.encode() for k in metadata) + (b"not-there",)
        found = _scanned(path, keys)
        # None is allowed (the caller then parses with pyarrow); a result must be pyarrow's
        assert found is None or found == _pyarrow_entries(path, keys), metadata.keys()
        for filter_key in ((), ("org.apache.hudi.bloomfilter",)):   # asking for the filter reads it whole
            assert read_footer_entries(Storage(str(tmp_path)), path.name, tuple(metadata) + ("not-there",)
                                       + filter_key) == _pyarrow_entries(path, keys)


def test_not_a_plain_footer_falls_back_or_fails_like_pyarrow(tmp_path):
    path = tmp_path / "short.parquet"
    path.write_bytes(b"PAR1")
    with pa.OSFile(str(path)) as source:
        assert footer_bytes(source) is None
    with pytest.raises(pa.ArrowInvalid):
        read_footer(Storage(str(tmp_path)), "short.parquet", (FOOTER_MIN_KEY,))


def test_java_written_base_files_give_pyarrow_entries(tmp_path):
    """Every base file of the tables Apache Hudi wrote (parquet-mr footers): the scan finds the filter and the
    key range exactly as pyarrow parses them."""
    keys = FILTER_KEYS + (FOOTER_MIN_KEY, FOOTER_MAX_KEY)
    checked = 0
    for archive_path in sorted(FIXTURES.glob("*.zip")):
        with zipfile.ZipFile(archive_path) as archive:
            for name in archive.namelist():
                if name.endswith(".parquet") and "/.hoodie/" not in name and "__MACOSX" not in name:
                    target = tmp_path / f"{checked}.parquet"
                    target.write_bytes(archive.read(name))
                    wanted = tuple(k.encode() for k in keys)
                    assert _scanned(target, wanted) == _pyarrow_entries(target, wanted), name
                    checked += 1
    assert checked >= 30, checked


def test_entries_are_found_where_rfind_finds_them():
    """The scan compares the patterns at field-header bytes from the end, then searches the rest whole: the
    positions are rfind's, also with more headers than it compares one by one."""
    from pyhudi.file_group import footer_scan
    rng = random.Random(11)
    for case in range(300):
        alphabet = b"\x18\x00ab" if case % 2 else b"\x18ab\x05QUJD"
        footer = bytes(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 40, 700, 3000])))
        patterns = [b"\x18" + bytes(rng.choice(b"\x18ab") for _ in range(rng.randint(0, 3))) for _ in range(3)]
        found = footer_scan._last_occurrences(footer, patterns)
        assert found == [(i, footer.rfind(p) + len(p) if footer.rfind(p) >= 0 else -1)
                         for i, p in enumerate(patterns)], (footer, patterns)
