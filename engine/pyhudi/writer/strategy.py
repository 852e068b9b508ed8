"""How a write runs, decided once before its instant exists, and what its strategy is handed at write time.

    WriteStrategy   frozen in WriteAction.prepare: which path writes the files and with which settings
    WriteJob        one instant's inputs (the batch, the table view, the executors' WriteContext), built by
                    WriteAction.write and passed whole to the strategy's entry function

The three strategies, each a module with one entry function taking a WriteJob:

    staged       writer/staged.py       tag (index lookup), count and place inserts, write: several Spark jobs
    one_job      writer/one_job.py      key, tag, place and write in one Spark job (a small or plain batch)
    bulk_insert  writer/bulk_insert.py  lay the batch out by the sort mode and cut new files, no index

A strategy returns its write stats and the index stats (None when no index was consulted). The decision reads the
batch's Spark plan (no job), so the later steps never have to ask again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from pyhudi import config as C
from pyhudi.index import IndexSpec
from pyhudi.table import HudiTable
from pyhudi.timeline import Timeline
from pyhudi.writer.batch import dedup_batch, flag_deletes
from pyhudi.writer.file_writer import WriteContext
from pyhudi.writer.replace import REPLACE_OPERATIONS

Strategy = Literal["staged", "one_job", "bulk_insert"]


@dataclass(frozen=True)
class WriteStrategy:
    """The write path and its settings, chosen once from the operation, the index and the batch's plan."""

    name: Strategy
    one_task: bool = False             # one_job: the whole job in one Python task (a small batch, one_job.in_one_task)
    keys_in_task: bool = False         # one_job in one task: that task keys the prepared batch (no keyed frame)
    cached: bool = False               # the keyed batch is persisted: several Spark actions read it
    partitions_first: bool = False     # the incoming partitions are collected before the lookup (prepare)
    batch_shuffles: bool = True        # computing the batch shuffles (the write then keeps adaptive execution)
    batch_deterministic: bool = False  # computing the batch twice gives the same rows (one_job.batch_plan)


def choose_strategy(operation: str, index: IndexSpec, fits_one_job, needs_partitions_first,
                    has_record_keys: bool) -> WriteStrategy:
    """The strategy of a write: bulk_insert unless its table routes by bucket; the one job when `fits_one_job()`
    returns (size, shuffles, deterministic, one_task) for a batch it takes, else None; otherwise the staged path.
    `fits_one_job` and `needs_partitions_first` are called only when the answer matters (the first reads the
    batch's Spark plan, the second may read the timeline)."""
    if operation == "bulk_insert" and not index.is_bucket:   # a bucket table routes by key: staged
        return WriteStrategy("bulk_insert", cached=True, partitions_first=needs_partitions_first())
    fits = fits_one_job()
    if fits is not None:
        shuffles, deterministic, one_task = fits
        # one task keys the records itself (a Python worker less); auto keys need with_auto_keys' columns
        return WriteStrategy("one_job", one_task=one_task, keys_in_task=one_task and has_record_keys,
                             batch_shuffles=shuffles, batch_deterministic=deterministic)
    partitions_first = needs_partitions_first()
    return WriteStrategy("staged", cached=not (index.is_bucket and not partitions_first),
                         partitions_first=partitions_first)


@dataclass(frozen=True)
class WriteJob:
    """One instant's write, as a strategy needs it: the action's settings, the prepared batch and the table state
    the instant plans against."""

    spark: SparkSession
    table: HudiTable
    wc: C.WriteConfig
    keygen: object
    index: IndexSpec
    strategy: WriteStrategy
    target_schema: pa.Schema
    virtual_keys: object               # the key generator of a virtual-key table (populate.meta.fields=false)
    has_keys: bool                     # the records carry keys to look up (a key field, or a prepped write's)
    prepared: DataFrame | None         # the batch in table types, before keying
    keyed: DataFrame | None            # ... with RECORD_KEY and PARTITION_PATH (None when the one task keys it)
    partitions: list[str] | None       # the incoming partitions, when prepare collected them
    ctx: WriteContext                  # what every executor gets (the strategy adds its own fields)
    view: object                       # the file-system view at `timeline`
    timeline: Timeline
    instant_time: str

    @property
    def operation(self) -> str:
        return self.wc.operation

    @property
    def storage(self):
        return self.table.storage

    @property
    def is_mor(self) -> bool:
        return self.table.properties.is_mor

    @property
    def is_replace(self) -> bool:
        return self.operation in REPLACE_OPERATIONS

    @property
    def table_name(self) -> str:
        return self.wc.table_name

    @property
    def precombine(self) -> str | None:
        return self.wc.precombine_field

    def deduped(self, keyed: DataFrame) -> DataFrame:
        """One record per key when hoodie.combine.before.<operation> is on (writer/batch.py)."""
        return dedup_batch(keyed, self.wc.combine_before(self.operation), self.precombine, self.operation,
                           self.index.is_global, self.wc.payload_class)

    def flagged(self, records: DataFrame) -> DataFrame:
        """DELETE_COLUMN on every record (writer/batch.py)."""
        return flag_deletes(records, self.operation, self.wc.payload_class, self.precombine)
