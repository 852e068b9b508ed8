"""Spark-facing helpers with no table logic, used from many layers (the bottom of the layer map): jvm (DataFrame
operations in few py4j round trips), parallelism (partitions for whole-file tasks), progress (Spark job progress
and commit summary lines), metastore (where the Hive catalog lives). The session itself is pyhudi.spark_session."""
