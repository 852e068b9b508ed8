"""Old import path of the write client, kept for its current importers (sqlext/ddl.py imports
`_table_properties`; tests import WriteResult). The code lives in pyhudi.client.write (the client layer) and
pyhudi.writer.options / write_action (the write action); new code imports from there."""

from pyhudi.client.write import WriteClient, WriteResult, delete_partitions, write  # noqa: F401
from pyhudi.writer.options import DELETE_FLAG_COLUMN  # noqa: F401
from pyhudi.writer.options import table_properties as _table_properties  # noqa: F401
