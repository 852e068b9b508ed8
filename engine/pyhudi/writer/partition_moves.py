"""A global index's records whose key is stored in another partition (hoodie.{simple,bloom}.index.update.partition.path).

Hudi 0.14+ (HoodieIndexUtils.tagGlobalLocationBackToRecords / mergeForPartitionUpdatesIfNeeded) merges such a record
with the stored one through the payload before it decides where it goes:
  - an incoming delete goes to the stored location (it keeps its ordering value);
  - when the stored record wins the merge (an event-time payload and a greater stored ordering value), the merged
    record stays in the stored partition: an update in place;
  - otherwise the old location gets a delete with no ordering value (natural order: it always wins, also against
    a newer update in a log) and the merged record (null fields filled from the stored one under the null-filling
    payloads) is inserted into the new partition;
  - a key the lookup located but whose stored record is gone (deleted in a log) is a plain insert.
With update.partition.path=false the record is tagged to the stored location whatever its partition.
"""

from __future__ import annotations

from typing import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyhudi.commit.spark_jobs import collect_or_raise
from pyhudi.merge.payloads import Payload
from pyhudi.schema.meta_fields import PARTITION_PATH, RECORD_KEY

_LOC_PARTITION = "_pyhudi_loc_partition"
_LOC_FILE = "_pyhudi_loc_file"
_COPY = "_pyhudi_copy"
_STORED = "_pyhudi_stored"          # the stored record (a struct of its columns; null when gone)
_STAYS = "_pyhudi_stays"            # the stored record wins the merge: an update in place
_VANISHED = "_pyhudi_vanished"      # located, but the stored record is gone: a plain insert
StoredReader = Callable[[set], DataFrame]   # {(partition, file id)} -> the latest stored rows of those groups


def tag_global(records: DataFrame, locations: DataFrame, file_id_col: str, delete_col: str,
               update_partition_path: bool, ordering_fields: tuple[str, ...] = (), payload: Payload | None = None,
               read_stored: StoredReader | None = None, release: list | None = None) -> DataFrame:
    """Set `file_id_col` (null = insert) and the partition path of each record from `locations` (key, partition,
    file id: at most one per key), moving keys as the module docstring says.

    `ordering_fields`: the fields whose null makes a delete natural-order (blanked on the move's delete copy).
    `read_stored` reads the stored rows of the moving keys' file groups; it is called only when `payload` can
    let the stored record win or fills nulls from it (otherwise the incoming record always wins the merge).
    Cached DataFrames are appended to `release` for the caller to free after the write."""
    loc = locations.select(F.col(RECORD_KEY), F.col(PARTITION_PATH).alias(_LOC_PARTITION),
                           F.col(file_id_col).alias(_LOC_FILE))
    joined = records.join(loc, on=[RECORD_KEY], how="left")
    found = F.col(_LOC_FILE).isNotNull()
    if not update_partition_path:
        out = (joined.withColumn(PARTITION_PATH, F.when(found, F.col(_LOC_PARTITION)).otherwise(F.col(PARTITION_PATH)))
               .withColumn(file_id_col, F.col(_LOC_FILE)))
        return out.drop(_LOC_PARTITION, _LOC_FILE)
    is_delete = F.col(delete_col)
    moved = found & (F.col(_LOC_PARTITION) != F.col(PARTITION_PATH))
    moving = moved & ~is_delete
    stays, vanished = F.col(_STAYS), F.col(_VANISHED)
    joined = joined.withColumn(_STAYS, F.lit(False)).withColumn(_VANISHED, F.lit(False))
    ordering = next((f for f in ordering_fields if f in records.columns), None)
    needs_stored = payload is not None and read_stored is not None \
        and (payload.fills_nulls or (payload.stored_can_win and ordering is not None))
    if needs_stored:
        joined, stored_found = _with_stored(joined, moving, records.columns, read_stored, release)
        if stored_found is not None:
            joined = joined.withColumn(_VANISHED, moving & ~stored_found)
            if payload.stored_can_win and ordering is not None:
                joined = joined.withColumn(_STAYS, moving & stored_found & _stored_wins(
                    F.col(f"{_STORED}.`{ordering}`"), F.col(ordering)))
            if payload.fills_nulls:   # the merged record the move inserts: incoming first, nulls from the stored one
                fill = moving & stored_found & ~stays
                for name in records.columns:
                    if not name.startswith("_hoodie_") and not name.startswith("_pyhudi_") and name != delete_col:
                        joined = joined.withColumn(name, F.when(fill, F.coalesce(F.col(name),
                                                                               F.col(f"{_STORED}.`{name}`")))
                                                   .otherwise(F.col(name)))
            joined = joined.drop(_STORED)
    # A move becomes two rows (copy 1: the delete at the old location, copy 0: the insert), made in one pass with
    # explode so the join runs once.
    splits = moving & ~stays & ~vanished
    exploded = joined.withColumn(_COPY, F.explode(F.when(splits, F.array(F.lit(0), F.lit(1)))
                                                  .otherwise(F.array(F.lit(0)))))
    delete_copy = F.col(_COPY) == 1
    old_location = delete_copy | (moved & is_delete) | stays
    out = (exploded
           .withColumn(PARTITION_PATH, F.when(old_location, F.col(_LOC_PARTITION)).otherwise(F.col(PARTITION_PATH)))
           .withColumn(file_id_col, F.when(old_location | ~moved, F.col(_LOC_FILE)))
           .withColumn(delete_col, F.when(delete_copy, F.lit(True)).otherwise(is_delete)))
    for name in dict.fromkeys(f for f in ordering_fields if f in records.columns):   # natural order: always wins
        out = out.withColumn(name, F.when(delete_copy, F.lit(None)).otherwise(F.col(name)))
    return out.drop(_LOC_PARTITION, _LOC_FILE, _COPY, _STAYS, _VANISHED)


def _stored_wins(stored, incoming):
    """merge.rules.stored_wins as a Spark column: the stored ordering value is greater (nulls below every value)."""
    return stored.isNotNull() & (incoming.isNull() | (stored > incoming))


def _with_stored(joined: DataFrame, moving, columns: list[str], read_stored: StoredReader, release: list | None):
    """`joined` with a struct column of each moving key's stored record (null when it is gone), and the column
    telling whether it was found; (joined, None) when no key moves (nothing stored is read)."""
    joined = joined.persist()
    if release is not None:
        release.append(joined)
    groups = {(row[0], row[1]) for row in collect_or_raise(
        joined.filter(moving).select(_LOC_PARTITION, _LOC_FILE).distinct())}
    if not groups:
        return joined, None
    stored = read_stored(groups)
    wanted = [c for c in columns if c in stored.columns and c != RECORD_KEY]
    stored = stored.select(F.col(RECORD_KEY), F.struct(*[F.col(f"`{c}`") for c in wanted]).alias(_STORED))
    return joined.join(stored, on=[RECORD_KEY], how="left"), F.col(_STORED).isNotNull()
