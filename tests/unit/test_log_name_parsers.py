"""The two log file name parsers and how they differ: naming.parse_log_file_name (a bare name; None when it is not
a log file, for listings) and log_file.parse_log_file_path (a path or bare name; LogFileNameError otherwise)."""

from __future__ import annotations

import pytest

from pyhudi.file_group.log_file import parse_log_file_path
from pyhudi.file_group.naming import LogFileNameError, log_file_name, parse_log_file_name


def test_both_agree_on_a_log_file_name():
    name = log_file_name("fg-0", "20250117083125837", 3, "1-2-3")
    assert parse_log_file_name(name) == parse_log_file_path(name) == ("fg-0", "20250117083125837", 3, "1-2-3")
    assert parse_log_file_path(f"s3://bucket/t/city=x/{name}") == parse_log_file_name(name)


@pytest.mark.parametrize("other", ["fg-0_0-1-2_20250117083125837.parquet", ".hoodie_partition_metadata",
                                   "city=x/.fg-0_20250117083125837.log.1_0-1-2"])
def test_lenient_for_listings_strict_for_paths(other):
    assert parse_log_file_name(other) is None     # a path is not a bare name either
    if "/" in other:
        assert parse_log_file_path(other)[0] == "fg-0"
    else:
        with pytest.raises(LogFileNameError, match="not a Hudi log file name"):
            parse_log_file_path(other)
