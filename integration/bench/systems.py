"""The systems compared: each builds the base table from the shared parquet (untimed) and then applies the
same batch as an upsert (timed). `upsert` returns what the system reports about its own work; `scan` sums a
numeric column over the table (a snapshot read); `peer_scan`, where a system has one, is the plain-parquet scan of
the same files in the same process to compare it with."""

from __future__ import annotations

import glob
import json
import os

import pyarrow.parquet as pq

KEY, PARTITION, ORDERING = "key", "date", "ts"
SUM_COLUMN = "fare"
# pyhudi's parquet codec (run.py --codec): snappy by default, the codec delta-rs and Spark write, so every system
# compresses alike; Hudi's own default is gzip.
HUDI_CODEC = "snappy"
# run.py --warm: keep pyhudi's process caches between timed runs (a long-lived writer, e.g. a dbt run); by default
# the footer caches are cleared before each run (each run starts like a new writer's first write)
WARM = False


class System:
    name = ""
    spark = False          # needs a Spark session
    scale = False          # part of the table-size comparison (--scale-rows)
    hudi = False           # a pyhudi table: run once per --codec

    def setup(self, spark, data: str, path: str) -> None:
        raise NotImplementedError

    def reset(self) -> None:
        """Forget process-level caches before a timed run (each run starts cold, like a new writer)."""

    def upsert(self, spark, batch: str, path: str) -> dict:
        """Upsert the rows of the parquet file `batch` into the table at `path`."""
        raise NotImplementedError

    def count(self, spark, path: str) -> int:
        raise NotImplementedError

    def scan(self, spark, path: str) -> float | None:
        """sum(SUM_COLUMN) over a snapshot read of the table; None where the system has no scan case."""
        return None

    def peer_scan(self, spark, path: str):
        """(label, function returning a sum, whether that sum covers every row) for a plain-parquet scan of this
        table's current data files in the same process, or None."""
        return None


def _base_files(data: str) -> list[str]:
    return sorted(glob.glob(os.path.join(data, "base", "*.parquet")))


# --- delta-rs -------------------------------------------------------------------------------------------------
class DeltaMerge(System):
    name = "delta-rs merge"

    def setup(self, spark, data, path):
        from deltalake import write_deltalake
        dataset = pq.ParquetDataset(_base_files(data))
        write_deltalake(path, dataset.read(), partition_by=[PARTITION], mode="overwrite")

    def upsert(self, spark, batch, path):
        from deltalake import DeltaTable
        batch = pq.read_table(batch)
        metrics = (DeltaTable(path)
                   .merge(source=batch, predicate=f"t.{PARTITION} = s.{PARTITION} AND t.{KEY} = s.{KEY}",
                          source_alias="s", target_alias="t")
                   .when_matched_update_all().when_not_matched_insert_all().execute())
        return {"files_rewritten": metrics.get("num_target_files_removed"),
                "files_added": metrics.get("num_target_files_added"),
                "rows_updated": metrics.get("num_target_rows_updated"),
                "rows_inserted": metrics.get("num_target_rows_inserted"),
                "rows_copied": metrics.get("num_target_rows_copied")}

    def count(self, spark, path):
        from deltalake import DeltaTable
        return DeltaTable(path).to_pyarrow_dataset().count_rows()

    def scan(self, spark, path):
        import pyarrow.compute as pc
        from deltalake import DeltaTable
        return pc.sum(DeltaTable(path).to_pyarrow_table(columns=[SUM_COLUMN])[SUM_COLUMN]).as_py()


# --- pyiceberg ------------------------------------------------------------------------------------------------
class IcebergUpsert(System):
    name = "pyiceberg upsert"

    @staticmethod
    def _catalog(path):
        from pyiceberg.catalog.sql import SqlCatalog
        return SqlCatalog("bench", uri=f"sqlite:///{path}/catalog.db", warehouse=f"file://{path}/warehouse")

    def setup(self, spark, data, path):
        os.makedirs(path, exist_ok=True)
        catalog = self._catalog(path)
        catalog.create_namespace("bench")
        base = pq.ParquetDataset(_base_files(data)).read()
        table = catalog.create_table("bench.trips", schema=base.schema)
        with table.update_spec() as spec:
            spec.add_identity(PARTITION)
        table.append(base)

    def upsert(self, spark, batch, path):
        table = self._catalog(path).load_table("bench.trips")
        before = {s.snapshot_id for s in table.snapshots()}
        batch = pq.read_table(batch)
        result = table.upsert(batch, join_cols=[KEY])
        table = table.refresh()
        added = deleted = 0
        for snap in table.snapshots():
            if snap.snapshot_id in before or snap.summary is None:
                continue
            added += int(snap.summary.get("added-data-files") or 0)
            deleted += int(snap.summary.get("deleted-data-files") or 0)
        return {"files_rewritten": deleted, "files_added": added, "rows_updated": result.rows_updated,
                "rows_inserted": result.rows_inserted}

    def count(self, spark, path):
        return self._catalog(path).load_table("bench.trips").scan(selected_fields=(KEY,)).to_arrow().num_rows

    def scan(self, spark, path):
        import pyarrow.compute as pc
        table = self._catalog(path).load_table("bench.trips")
        return pc.sum(table.scan(selected_fields=(SUM_COLUMN,)).to_arrow()[SUM_COLUMN]).as_py()


# --- plain Spark parquet ----------------------------------------------------------------------------------------
class SparkRewrite(System):
    """A parquet table without a table format: read everything, drop the rows the batch replaces, add the batch,
    write the whole table again."""

    name = "spark parquet rewrite"
    spark = True

    def setup(self, spark, data, path):
        spark.read.parquet(*_base_files(data)).write.partitionBy(PARTITION).parquet(f"{path}/table")

    def upsert(self, spark, batch, path):
        base = spark.read.parquet(f"{path}/table")
        batch = spark.read.parquet(batch)
        merged = (base.join(batch.select(PARTITION, KEY), [PARTITION, KEY], "left_anti")
                  .unionByName(batch))
        merged.write.mode("overwrite").partitionBy(PARTITION).parquet(f"{path}/out")
        return {"files_rewritten": len(glob.glob(f"{path}/table/*/*.parquet"))}

    def count(self, spark, path):
        return spark.read.parquet(f"{path}/out").count()

    def scan(self, spark, path):
        return _spark_sum(spark.read.parquet(f"{path}/out"))


def _spark_sum(df) -> float:
    from pyspark.sql import functions as F
    return df.agg(F.sum(SUM_COLUMN)).collect()[0][0]


# --- pyhudi ----------------------------------------------------------------------------------------------------
class Hudi(System):
    spark = True
    hudi = True

    def __init__(self, name: str, table_type: str, index: str, scale: bool = False, **extra: str):
        self.name = name
        self.scale = scale
        self.options = {
            "hoodie.table.name": "trips",
            "hoodie.datasource.write.recordkey.field": KEY,
            "hoodie.datasource.write.partitionpath.field": PARTITION,
            "hoodie.datasource.write.precombine.field": ORDERING,
            "hoodie.datasource.write.table.type": table_type,
            "hoodie.index.type": index,
            **extra,
        }

    def setup(self, spark, data, path):
        import pyhudi
        base = spark.read.parquet(*_base_files(data))
        pyhudi.write(base, path, {**self.write_options(), "hoodie.datasource.write.operation": "bulk_insert"},
                     mode="overwrite")

    def write_options(self) -> dict:
        return {**self.options, "hoodie.parquet.compression.codec": HUDI_CODEC}

    def reset(self):
        if WARM:
            return
        try:
            from pyhudi.index.footers import CACHE
        except ImportError:
            return
        CACHE.clear()

    def upsert(self, spark, batch, path):
        import pyhudi
        batch = spark.read.parquet(batch)
        instant = pyhudi.write(batch, path, self.write_options())
        summary = commit_summary(path, str(instant))
        stored = summary.pop("index_metadata", None)
        index_stats = getattr(instant, "index_stats", None) or stored
        return {**summary, "index_stats": index_stats}

    def count(self, spark, path):
        import pyhudi
        return pyhudi.read(spark, path).count()

    def scan(self, spark, path):
        import pyhudi
        return _spark_sum(pyhudi.read(spark, path))

    def peer_scan(self, spark, path):
        files = latest_base_files(path)

        def parquet_scan():
            return _spark_sum(spark.read.parquet(*files))
        # merge-on-read: the base files lack what the log files hold, so that sum differs from the table's
        complete = self.options["hoodie.datasource.write.table.type"] == "COPY_ON_WRITE"
        return f"spark.read.parquet of the {len(files)} base files", parquet_scan, complete


def latest_base_files(path: str) -> list[str]:
    """The base file of every file group's latest completed slice (read from the file names, not through
    pyhudi): `<fileId>_<writeToken>_<instant>.parquet`, the newest instant per file id that the timeline lists
    as completed."""
    completed = {os.path.basename(f).split(".")[0] for f in glob.glob(f"{path}/.hoodie/*")
                 if f.endswith((".commit", ".deltacommit", ".replacecommit"))}
    latest: dict[tuple[str, str], tuple[str, str]] = {}
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.endswith(".parquet") or name.startswith("."):
                continue
            file_id, _, instant = name[:-len(".parquet")].split("_")[:3]
            if instant not in completed:
                continue
            group = (root, file_id)
            if group not in latest or instant > latest[group][0]:
                latest[group] = (instant, os.path.join(root, name))
    return sorted(full for _, full in latest.values())


def commit_summary(path: str, instant: str) -> dict:
    """Files a pyhudi commit merged, appended to and created, from its commit metadata on the timeline."""
    found = [f for f in glob.glob(f"{path}/.hoodie/{instant}.*") if f.endswith(("commit", "deltacommit"))]
    with open(found[0]) as f:
        meta = json.load(f)
    stats = [s for group in meta.get("partitionToWriteStats", {}).values() for s in group]
    logs = [s for s in stats if s.get("logVersion") is not None]
    merged = [s for s in stats if s.get("logVersion") is None and s.get("prevCommit") not in (None, "null")]
    created = [s for s in stats if s.get("logVersion") is None and s.get("prevCommit") in (None, "null")]
    out = {"files_rewritten": len(merged), "log_files": len(logs), "files_added": len(created),
           "log_rows": sum(s.get("numWrites", 0) for s in logs),
           "rows_updated": sum(s.get("numUpdateWrites", 0) for s in stats),
           "rows_inserted": sum(s.get("numInserts", 0) for s in stats)}
    stored = (meta.get("extraMetadata") or {}).get("pyhudi.index.stats")
    if stored:
        out["index_metadata"] = json.loads(stored)
    return out


SYSTEMS: dict[str, System] = {s.name: s for s in [
    DeltaMerge(),
    IcebergUpsert(),
    SparkRewrite(),
    Hudi("pyhudi COW+BLOOM", "COPY_ON_WRITE", "BLOOM"),
    Hudi("pyhudi COW+SIMPLE", "COPY_ON_WRITE", "SIMPLE"),
    Hudi("pyhudi MOR+BLOOM", "MERGE_ON_READ", "BLOOM", scale=True),
    Hudi("pyhudi MOR+BUCKET", "MERGE_ON_READ", "BUCKET", scale=True, **{"hoodie.bucket.index.num.buckets": "4"}),
]}

ALIASES = {"delta": "delta-rs merge", "iceberg": "pyiceberg upsert", "spark": "spark parquet rewrite",
           "cow-bloom": "pyhudi COW+BLOOM", "cow-simple": "pyhudi COW+SIMPLE", "mor-bloom": "pyhudi MOR+BLOOM",
           "mor-bucket": "pyhudi MOR+BUCKET"}
