"""Record keys of stored records in a virtual-key table (hoodie.populate.meta.fields=false): computed from the
data columns with the table's key generator, since the files hold null `_hoodie_record_key` /
`_hoodie_partition_path` (see pyhudi.writer.virtual_keys). Runs in executors."""

from __future__ import annotations

import pyarrow as pa

from pyhudi.schema.meta_fields import PARTITION_PATH, RECORD_KEY


def key_columns(keygen) -> list[str]:
    """Top-level data columns the key generator reads (record key and partition path fields)."""
    names = [f.split(".")[0] for f in list(keygen.record_key_fields) + list(keygen.partition_path_fields)]
    return list(dict.fromkeys(names))


def with_keys(stored: pa.Table, keygen) -> pa.Table:
    """A stored virtual-key table with `_hoodie_record_key` / `_hoodie_partition_path` computed from its data."""
    keys = keygen.record_keys(stored) if stored.num_rows else pa.array([], pa.string())
    paths = keygen.partition_paths(stored) if stored.num_rows else pa.array([], pa.string())
    for name, values in ((RECORD_KEY, keys), (PARTITION_PATH, paths)):
        field = pa.field(name, pa.string())
        if name in stored.column_names:
            stored = stored.set_column(stored.schema.get_field_index(name), field, values)
        else:
            stored = stored.append_column(field, values)
    return stored


def stored_keys(spark, storage, paths: list[str], keygen, table_schema: pa.Schema, file_id_col: str):
    """(key, partition, file id) of every record in the given virtual-key base files (the SIMPLE index's
    lookup): reads only the key generator's columns (typed from the table's storage schema) and computes the
    keys."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyhudi.storage.scan import scan_parquet

    key_schema = from_arrow_schema(pa.schema([table_schema.field(c) for c in key_columns(keygen)]))

    out = T.StructType([T.StructField(RECORD_KEY, T.StringType()), T.StructField(PARTITION_PATH, T.StringType()),
                        T.StructField(file_id_col, T.StringType())])

    def compute(batches):
        for batch in batches:
            table = pa.Table.from_batches([batch])
            keyed = with_keys(table, keygen)
            yield from pa.table([keyed[RECORD_KEY], keyed[PARTITION_PATH], table[file_id_col]],
                                names=out.names).to_batches()

    files = scan_parquet(spark, key_schema, [storage.uri(p) for p in paths])
    return (files.select(*[F.col(f"`{c}`") for c in key_schema.names],
                         F.substring_index(F.col("_metadata.file_name"), "_", 1).alias(file_id_col))
            .mapInArrow(compute, out))


def file_record_keys(parquet_file, keygen) -> pa.Array:
    """Executor: the record keys of one open virtual-key base file (a pyarrow ParquetFile)."""
    table = parquet_file.read(columns=key_columns(keygen), use_threads=False)
    if not table.num_rows:
        return pa.array([], pa.string())
    keys = keygen.record_keys(table)
    return keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
