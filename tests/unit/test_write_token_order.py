"""Write tokens compare as numbers where the view picks the latest base or log file ("0-5-10" is after "0-5-9")."""

from __future__ import annotations

from pyhudi.file_group.model import LogFile
from pyhudi.file_group.naming import write_token_order
from pyhudi.table import HudiTable
from pyhudi.timeline import COMMIT, DELTA_COMMIT, create_requested, transition_to_completed, transition_to_inflight

T1 = "20240101000000000"
FILE_ID = "11111111-2222-3333-4444-555555555555-0"


def _table(tmp_path, table_type="COPY_ON_WRITE"):
    table = HudiTable.create(str(tmp_path / "t"), {"hoodie.table.name": "t", "hoodie.table.type": table_type,
                                                  "hoodie.table.recordkey.fields": "id"})
    action = COMMIT if table_type == "COPY_ON_WRITE" else DELTA_COMMIT
    requested = create_requested(table.storage, T1, action)
    transition_to_completed(table.storage, transition_to_inflight(table.storage, requested), {})
    return table


def test_token_order_is_numeric():
    assert write_token_order("0-5-10") > write_token_order("0-5-9")
    assert write_token_order("10-0-0") > write_token_order("9-99-99")
    assert write_token_order("") < write_token_order("0-0-0")


def test_latest_base_file_is_the_numerically_latest_attempt(tmp_path):
    table = _table(tmp_path)
    for token in ("0-5-9", "0-5-10"):
        table.storage.write_bytes(f"p/{FILE_ID}_{token}_{T1}.parquet", b"x")
    (base,) = table.view().latest_base_files()
    assert base.write_token == "0-5-10"


def test_log_files_sort_by_version_then_numeric_token(tmp_path):
    table = _table(tmp_path, "MERGE_ON_READ")
    for name in (f".{FILE_ID}_{T1}.log.1_0-5-10", f".{FILE_ID}_{T1}.log.1_0-5-9", f".{FILE_ID}_{T1}.log.2_0-5-1"):
        table.storage.write_bytes(f"p/{name}", b"x")
    (slice_,) = table.view().latest_slices()
    assert [log.write_token for log in slice_.log_files] == ["0-5-9", "0-5-10", "0-5-1"]
    logs = sorted(slice_.log_files, key=LogFile.sort_key, reverse=True)
    assert logs[0].version == 2
