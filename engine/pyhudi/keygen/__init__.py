"""Hudi key generators: ``_hoodie_record_key`` and ``_hoodie_partition_path`` for Arrow batches.

Pure Python over pyarrow, vectorised, stateless apart from configuration (so generators pickle into Spark
executors for ``mapInArrow``). The strings match what Apache Hudi 0.14/0.15 writes through the Spark datasource
(whose key generators read the Avro form of each row):

>>> import pyarrow as pa
>>> kg = build_key_generator({"hoodie.datasource.write.recordkey.field": "id",
...                           "hoodie.datasource.write.partitionpath.field": "region",
...                           "hoodie.datasource.write.hive_style_partitioning": "true"}, table_name="t")
>>> kg.java_class
'org.apache.hudi.keygen.SimpleKeyGenerator'
>>> batch = pa.record_batch({"id": [1, 2], "region": ["us", None]})
>>> kg.record_keys(batch).to_pylist(), kg.partition_paths(batch).to_pylist()
(['1', '2'], ['region=us', 'region=__HIVE_DEFAULT_PARTITION__'])
>>> kg.partition_values("region=us")
{'region': 'us'}

ComplexKeyGenerator with a single record key field: Hudi 0.14.1, 0.15.0 and 1.0.0-1.0.2 write the bare value
(``"1"``), Hudi <= 0.14.0 and >= 0.14.2 / 0.15.1 / 1.1.0 (by default) write ``"id:1"`` (HUDI-7001 / HUDI-9666).
pyhudi follows 0.15.0 by default; set ``hoodie.write.complex.keygen.new.encoding=false`` for ``"id:1"``.
"""

from .build import auto_record_keys, build_key_generator
from .generator import KeyGenerator
from .options import (
    COMPLEX, CUSTOM, GLOBAL_DELETE, NON_PARTITION, SIMPLE, TIMESTAMP,
    COMPLEX_KEYGEN_NEW_ENCODING, CONSISTENT_LOGICAL_TIMESTAMP, HIVE_STYLE_PARTITIONING, KEYGENERATOR_CLASS,
    KEYGENERATOR_TYPE, PARTITIONPATH_FIELD, RECORDKEY_FIELD, URL_ENCODE_PARTITIONING,
    EMPTY_RECORDKEY_PLACEHOLDER, NULL_RECORDKEY_PLACEHOLDER, TYPE_TO_CLASS,
)
from .pathcodec import DEFAULT_PARTITION_PATH, escape_path_name, unescape_path_name

__all__ = [
    "KeyGenerator", "build_key_generator", "auto_record_keys",
    "escape_path_name", "unescape_path_name", "DEFAULT_PARTITION_PATH",
    "NULL_RECORDKEY_PLACEHOLDER", "EMPTY_RECORDKEY_PLACEHOLDER", "TYPE_TO_CLASS",
    "SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM", "GLOBAL_DELETE",
    "RECORDKEY_FIELD", "PARTITIONPATH_FIELD", "KEYGENERATOR_CLASS", "KEYGENERATOR_TYPE",
    "HIVE_STYLE_PARTITIONING", "URL_ENCODE_PARTITIONING", "CONSISTENT_LOGICAL_TIMESTAMP",
    "COMPLEX_KEYGEN_NEW_ENCODING",
]
