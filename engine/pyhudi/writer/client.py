"""Old import path, kept only because pyhudi/sqlext/dml.py (`_delete_flag_column`) still reads
DELETE_FLAG_COLUMN from here. The write client lives in pyhudi.client, the flag in pyhudi.writer.options (also
exported by pyhudi.client): once dml.py imports `from pyhudi import client`, delete this module."""

from pyhudi.writer.options import DELETE_FLAG_COLUMN  # noqa: F401
