"""BUCKET index (hoodie.index.bucket.engine=SIMPLE): a record's file group is chosen by hashing its key.

Hudi's scheme (BucketIdentifier), so Java Hudi and pyhudi put a key in the same bucket:
  hash keys = [record key] when the key has no ':' (simple key), else the values of the hash fields parsed from
              the "field:value,field:value" key; bucket = (List.hashCode(hash keys) & Integer.MAX_VALUE) % buckets
  file id   = 8-digit zero-padded bucket id + the rest of a UUID + "-0" (e.g. 00000003-5d1f-...-0)
No lookup reads data: the driver maps (partition, bucket) -> existing file id from the file listing.
"""

from __future__ import annotations

from array import array

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyhudi.errors import ConfigError
from pyhudi.file_group.bloom_filter import string_offsets_and_data
from pyhudi.keygen.options import EMPTY_RECORDKEY_PLACEHOLDER as EMPTY_KEY_PART
from pyhudi.keygen.options import NULL_RECORDKEY_PLACEHOLDER as NULL_KEY_PART

_MASK32 = 0xFFFFFFFF
BUCKET_COLUMN = "_pyhudi_bucket"


def java_string_hash(text: str) -> int:
    """java.lang.String.hashCode (over UTF-16 code units), as an unsigned 32-bit value."""
    h = 0
    units = text.encode("ascii") if text.isascii() else array("H", text.encode("utf-16-le"))
    for unit in units:
        h = (31 * h + unit) & _MASK32
    return h


def _java_split(text: str, sep: str) -> list[str]:
    """String.split for a one-character separator: trailing empty strings are dropped."""
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def hash_keys(record_key: str, hash_fields: list[str]) -> list[str | None]:
    """BucketIdentifier.getHashKeys (Hudi 0.13+, KeyGenUtils.extractRecordKeysByFields): the values hashed for a
    record key, in the key's order: each ','-separated part split once at ':'; a part without ':' is hashed whole
    (a value that holds ',' leaves such parts), a 'field:value' part only when field is a hash field. Hand-written
    for bit-compatibility with Java's bucket ids."""
    if ":" not in record_key:
        return [record_key]
    values: list[str | None] = []
    for part in _java_split(record_key, ","):
        pieces = part.split(":", 1)
        if len(pieces) == 1:
            values.append(pieces[0])
        elif not hash_fields or pieces[0] in hash_fields:
            values.append(None if pieces[1] == NULL_KEY_PART else "" if pieces[1] == EMPTY_KEY_PART else pieces[1])
    return values


def bucket_id(record_key: str, hash_fields: list[str], num_buckets: int) -> int:
    h = 1   # java.util.List.hashCode
    for value in hash_keys(record_key, hash_fields):
        h = (31 * h + (java_string_hash(value) if value is not None else 0)) & _MASK32
    return (h & 0x7FFFFFFF) % num_buckets


def bucket_ids(keys, hash_fields: list[str], num_buckets: int) -> np.ndarray:
    """bucket_id for a whole array of record keys: String.hashCode vectorized with numpy for plain ASCII keys
    (sum of byte * 31^(len-1-i) mod 2^32); keys with ':' (field:value pairs) or non-ASCII text go one by one."""
    arr = pa.array(keys, pa.string()) if not isinstance(keys, pa.Array) else keys
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    offsets, data = string_offsets_and_data(arr)
    data = data[offsets[0]:offsets[-1]]
    offsets = offsets - offsets[0]
    lengths = np.diff(offsets)
    row_of_byte = np.repeat(np.arange(n), lengths)
    exponent = np.repeat(lengths, lengths) - 1 - (np.arange(len(data)) - np.repeat(offsets[:-1], lengths))
    contributions = data.astype(np.uint64) * _powers_of_31(int(lengths.max(initial=0)))[exponent]
    string_hash = np.zeros(n, np.uint64)
    filled = lengths > 0
    if filled.any():   # each term < 2^39: the uint64 sum is exact for keys shorter than 2^24 bytes
        string_hash[filled] = np.add.reduceat(contributions, offsets[:-1][filled])
    list_hash = (np.uint64(31) + (string_hash & np.uint64(_MASK32))) & np.uint64(_MASK32)   # List.of(key)
    out = ((list_hash & np.uint64(0x7FFFFFFF)) % np.uint64(num_buckets)).astype(np.int32)
    special = np.zeros(n, bool)
    special[row_of_byte[(data >= 128) | (data == ord(":"))]] = True
    for row in np.flatnonzero(special):
        out[row] = bucket_id(arr[row].as_py(), hash_fields, num_buckets)
    return out


def _powers_of_31(max_length: int) -> np.ndarray:
    """31^k mod 2^32 for k < max_length, as uint64."""
    powers = np.ones(max(1, max_length), np.uint64)
    for k in range(1, max_length):
        powers[k] = (powers[k - 1] * np.uint64(31)) & np.uint64(_MASK32)
    return powers


def bucket_id_str(bucket: int) -> str:
    return f"{bucket:08d}"


def bucket_of_file_id(file_id: str) -> int | None:
    """BucketIdentifier.bucketIdFromFileId, or None when the file id does not start with 8 digits."""
    prefix = file_id[:8]
    return int(prefix) if len(prefix) == 8 and prefix.isdigit() else None


def new_bucket_file_id(instant_time: str, partition: str, bucket: int) -> str:
    """The file id a write gives a bucket that has no file group yet: the bucket prefix and a digest of (instant,
    partition, bucket), so every task (and a retried one) names it alike (the same value as tag's Spark column)."""
    import hashlib
    digest = hashlib.md5(f"{instant_time}|{partition}|{bucket}".encode()).hexdigest()
    return f"{bucket_id_str(bucket)}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}-0"


def bucket_file_ids(keys: pa.Array, partitions: pa.Array, hash_fields: list[str], num_buckets: int,
                    existing: dict, instant_time: str) -> pa.Array:
    """Executor: the file id of each record's bucket, existing ((partition, bucket) -> file id) or new."""
    buckets = bucket_ids(keys, hash_fields, num_buckets)
    parts = partitions.to_pylist()
    names: dict = {}
    out = []
    for partition, bucket in zip(parts, buckets.tolist()):
        name = names.get((partition, bucket))
        if name is None:
            name = existing.get((partition, bucket)) or new_bucket_file_id(instant_time, partition, bucket)
            names[(partition, bucket)] = name
        out.append(name)
    return pa.array(out, pa.string())


def existing_buckets(view, partitions=None, table: str = "", num_buckets: int | None = None) -> dict:
    """(partition, bucket) -> file id of the file groups in the view; raises when the layout is not a bucket
    layout for `num_buckets` (a file id without bucket prefix, a bucket out of range, two groups per bucket)."""
    out: dict[tuple[str, int], str] = {}
    for slice_ in view.latest_slices(partitions):
        bucket = bucket_of_file_id(slice_.file_id)
        where = f"table {table} partition {slice_.partition_path or '(none)'!r} file group {slice_.file_id}"
        if bucket is None:
            raise ConfigError(f"{where} was not written by a bucket index (its file id has no bucket prefix); "
                              "hoodie.index.type=BUCKET needs a table created with it: rewrite the table with "
                              "mode='overwrite' or use another index type")
        if num_buckets is not None and bucket >= num_buckets:
            raise ConfigError(f"{where} is bucket {bucket} but hoodie.bucket.index.num.buckets={num_buckets}; the "
                              "number of buckets of a BUCKET table cannot change: write with the table's bucket "
                              "count or recreate the table with mode='overwrite'")
        key = (slice_.partition_path, bucket)
        if key in out:
            raise ConfigError(f"{where}: bucket {bucket} already belongs to file group {out[key]}; a bucket table "
                              "holds one file group per bucket")
        out[key] = slice_.file_id
    return out


def tag(records: DataFrame, record_key: str, partition_col: str, file_id_col: str,
        hash_fields: list[str], num_buckets: int, existing: dict, instant_time: str) -> DataFrame:
    """Set `file_id_col` on every record: its bucket's existing file group, or a new bucket file id (same for all
    records of that bucket in this write)."""
    fields = list(hash_fields)

    @F.pandas_udf("int")
    def buckets(keys: pd.Series) -> pd.Series:
        return pd.Series(bucket_ids(pa.array(keys, pa.string()), fields, num_buckets))

    spark = records.sparkSession
    mapping = spark.createDataFrame(
        [(p, b, f) for (p, b), f in existing.items()] or [("", -1, "")],
        "_pyhudi_bucket_partition string, _pyhudi_bucket_id int, _pyhudi_bucket_file string")
    with_bucket = records.withColumn(BUCKET_COLUMN, buckets(F.col(record_key)))
    joined = with_bucket.join(
        F.broadcast(mapping),
        (F.col(partition_col) == F.col("_pyhudi_bucket_partition")) & (F.col(BUCKET_COLUMN) == F.col("_pyhudi_bucket_id")),
        "left")
    digest = F.md5(F.concat_ws("|", F.lit(instant_time), F.col(partition_col), F.col(BUCKET_COLUMN).cast("string")))
    new_id = F.concat(F.lpad(F.col(BUCKET_COLUMN).cast("string"), 8, "0"), F.lit("-"), F.substring(digest, 9, 4),
                      F.lit("-"), F.substring(digest, 13, 4), F.lit("-"), F.substring(digest, 17, 4), F.lit("-"),
                      F.substring(digest, 21, 12), F.lit("-0"))
    # Deletes too get their bucket's new file id: the writer task of that bucket sees every version of the key
    # and writes nothing for a key that ends deleted.
    file_id = F.coalesce(F.col("_pyhudi_bucket_file"), new_id)
    return (joined.withColumn(file_id_col, file_id)
            .drop(BUCKET_COLUMN, "_pyhudi_bucket_partition", "_pyhudi_bucket_id", "_pyhudi_bucket_file"))
