"""The benchmark's data, generated once per (rows, batch size, key kind, seed) with numpy/pyarrow and stored as
parquet that every system reads: `base/part-NN.parquet` (one file per date partition) and `batch.parquet`.

Rows are trips in time order: row i lands in date partition i * 20 // rows. Keys are either time-ordered
(`k000000000042`, growing with time, so each file covers a narrow key range) or random UUIDs. The batch updates
1% of the rows (90% of them among the newest 10% of keys, 10% anywhere else) and inserts 0.1% new keys.
"""

from __future__ import annotations

import json
import os
from datetime import date, timedelta

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

PARTITIONS = 20
FIRST_DAY = date(2024, 1, 1)
START_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
RIDERS = pa.array([f"rider-{i:03d}" for i in range(1000)])
DRIVERS = pa.array([f"driver-{i:03d}" for i in range(500)])
STATUSES = pa.array(["completed", "cancelled", "no_show", "disputed", "refunded"])
SCHEMA = pa.schema([("key", pa.string()), ("ts", pa.int64()), ("date", pa.string()), ("rider", pa.string()),
                    ("driver", pa.string()), ("fare", pa.float64()), ("distance_km", pa.float64()),
                    ("lat", pa.float64()), ("lon", pa.float64()), ("passengers", pa.int32()),
                    ("status", pa.string())])


def dataset_dir(out: str, rows: int, batch_rows: int, keys: str, seed: int) -> str:
    return os.path.join(out, "data", f"{keys}-{rows}-b{batch_rows}-s{seed}")


def generate(out: str, rows: int, batch_rows: int, keys: str, seed: int = 42) -> str:
    """Write base/ and batch.parquet (reused when already there); returns the folder. The batch is sized for a
    table of `batch_rows` rows (normally `rows`; smaller to compare table sizes with the same batch)."""
    folder = dataset_dir(out, rows, batch_rows, keys, seed)
    info_path = os.path.join(folder, "info.json")
    if os.path.exists(info_path):
        return folder
    os.makedirs(os.path.join(folder, "base"), exist_ok=True)
    rng = np.random.default_rng(seed)
    # UUID keys are drawn up front so base and batch agree whatever the chunking.
    uuid_keys = _uuids(rng, rows + batch_rows) if keys == "uuid" else None
    bounds = [p * rows // PARTITIONS for p in range(PARTITIONS + 1)]
    for p in range(PARTITIONS):
        lo, hi = bounds[p], bounds[p + 1]
        index = np.arange(lo, hi, dtype=np.int64)
        table = _rows(rng, index, rows, keys, uuid_keys, ts_offset=0)
        pq.write_table(table, os.path.join(folder, "base", f"part-{p:02d}.parquet"))

    num_updates = max(1, batch_rows // 100)
    num_new = max(1, batch_rows // 1000)
    batch = _batch(rng, rows, num_updates, num_new, keys, uuid_keys)
    pq.write_table(batch, os.path.join(folder, "batch.parquet"))
    parts_touched = len(set(batch["date"].to_pylist()))
    info = {"rows": rows, "batch_rows": batch_rows, "keys": keys, "seed": seed, "updates": int(num_updates),
            "inserts": int(num_new), "partitions_touched": parts_touched}
    with open(info_path, "w") as f:
        json.dump(info, f)
    return folder


def small_batch(folder: str, size: int) -> str:
    """`batch-<size>.parquet` in the folder (written once): a batch of `size` rows with the big batch's shape
    (10 updates to 1 insert, 90% of the updates among the newest 10% of keys); returns its path."""
    path = os.path.join(folder, f"batch-{size}.parquet")
    if os.path.exists(path):
        return path
    meta = info(folder)
    rows, keys, seed = meta["rows"], meta["keys"], meta["seed"]
    # the same UUIDs as generate() (its first draw), so updates hit stored keys and inserts are new ones
    uuid_keys = _uuids(np.random.default_rng(seed), rows + meta["batch_rows"]) if keys == "uuid" else None
    num_updates, num_new = small_shape(size)
    batch = _batch(np.random.default_rng([seed, size]), rows, num_updates, num_new, keys, uuid_keys)
    pq.write_table(batch, path + ".tmp")
    os.replace(path + ".tmp", path)
    return path


def small_shape(size: int) -> tuple[int, int]:
    """(updates, inserts) of a small batch of `size` rows: the big batch's 10 to 1."""
    inserts = max(1, size // 11)
    return size - inserts, inserts


def expected_sum(folder: str, batch_path: str, column: str = "fare") -> float:
    """sum(column) over the table after upserting the batch: base rows whose key the batch does not carry, plus
    the batch (the check that a scan returned the right rows)."""
    import pyarrow.compute as pc
    batch = pq.read_table(batch_path, columns=["key", column])
    total = pc.sum(batch[column]).as_py() or 0.0
    for part in sorted(os.listdir(os.path.join(folder, "base"))):
        base = pq.read_table(os.path.join(folder, "base", part), columns=["key", column])
        kept = base.filter(pc.invert(pc.is_in(base["key"], value_set=batch["key"])))
        total += pc.sum(kept[column]).as_py() or 0.0
    return total


def info(folder: str) -> dict:
    with open(os.path.join(folder, "info.json")) as f:
        return json.load(f)


def _batch(rng: np.random.Generator, rows: int, num_updates: int, num_new: int, keys: str, uuid_keys) -> pa.Table:
    """Updates (90% among the newest 10% of keys, the rest anywhere older) then new keys, in that order."""
    newest = max(1, rows // 10)
    recent = min(num_updates * 9 // 10, newest)
    picked_recent = rng.choice(np.arange(rows - newest, rows), size=recent, replace=False)
    picked_old = rng.choice(rows - newest, size=num_updates - recent, replace=False)
    updated = np.sort(np.concatenate([picked_recent, picked_old]).astype(np.int64))
    new = np.arange(rows, rows + num_new, dtype=np.int64)
    return pa.concat_tables([
        _rows(rng, updated, rows, keys, uuid_keys, ts_offset=10 * 86_400_000),
        _rows(rng, new, rows, keys, uuid_keys, ts_offset=0, date_of=PARTITIONS - 1),
    ])


def _uuids(rng: np.random.Generator, n: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40   # version 4
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80   # RFC 4122 variant
    hexdigits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    chars = np.empty((n, 36), dtype=np.uint8)
    nibbles = np.stack([raw >> 4, raw & 0x0F], axis=2).reshape(n, 32)
    dashes = (8, 13, 18, 23)
    column = 0
    for out_col in range(36):
        if out_col in dashes:
            chars[:, out_col] = ord("-")
        else:
            chars[:, out_col] = hexdigits[nibbles[:, column]]
            column += 1
    return chars.view("S36").ravel()


def _rows(rng: np.random.Generator, index: np.ndarray, rows: int, keys: str, uuid_keys, ts_offset: int,
          date_of: int | None = None) -> pa.Table:
    n = len(index)
    if keys == "uuid":
        key = pa.array(uuid_keys[index]).cast(pa.string())
    else:
        key = pa.array(np.char.add(b"k", np.char.zfill(index.astype("S12"), 12))).cast(pa.string())
    day = np.minimum(index * PARTITIONS // rows, PARTITIONS - 1) if date_of is None else np.full(n, date_of)
    days = pa.array([(FIRST_DAY + timedelta(days=d)).isoformat() for d in range(PARTITIONS)])
    span_ms = PARTITIONS * 86_400_000
    ts = START_MS + (index * span_ms) // max(rows, 1) + ts_offset
    return pa.Table.from_arrays([
        key,
        pa.array(ts, pa.int64()),
        days.take(pa.array(day)),
        RIDERS.take(pa.array(rng.integers(0, len(RIDERS), n))),
        DRIVERS.take(pa.array(rng.integers(0, len(DRIVERS), n))),
        pa.array(np.round(rng.uniform(3, 120, n), 2)),
        pa.array(np.round(rng.exponential(8, n), 3)),
        pa.array(rng.uniform(-90, 90, n)),
        pa.array(rng.uniform(-180, 180, n)),
        pa.array(rng.integers(1, 7, n).astype(np.int32)),
        STATUSES.take(pa.array(rng.integers(0, len(STATUSES), n))),
    ], schema=SCHEMA)
