"""slice_changes (what a slice's logs change in its base file, for the native-scan merge) against read_file_slice
(the per-slice Python merge): (base rows whose key is not dropped) + (emitted log records) must be the same rows,
on seeded random slices covering Hudi's merge rules: ordering values (greater, equal, null), both payload
classes, delete blocks with and without ordering values and of another Java class, `_hoodie_is_deleted`
records, log-only slices, rolled-back and uncommitted blocks."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pyhudi.file_group.base_file import META_COLUMNS
from pyhudi.file_group.log_file import (
    DeleteRecord,
    avro_data_block,
    delete_block,
    parquet_data_block,
    rollback_command_block,
    write_log_file,
)
from pyhudi.file_group.model import BaseFile, FileSlice, LogFile
from pyhudi.merge import DEFAULT_PAYLOAD, OVERWRITE_WITH_LATEST
from pyhudi.reader.file_slice_reader import CHANGE_EMIT, CHANGE_KEY, read_file_slice, slice_changes
from pyhudi.schema import arrow_to_avro, avro_json, with_meta_fields_avro
from pyhudi.storage import Storage

DATA = pa.schema([pa.field("id", pa.string()), pa.field("ts", pa.int64()), pa.field("val", pa.string()),
                  pa.field("_hoodie_is_deleted", pa.bool_())])
SCHEMA = pa.schema([pa.field(c, pa.string()) for c in META_COLUMNS] + list(DATA))
AVRO = avro_json(with_meta_fields_avro(arrow_to_avro(DATA, "t")))
PART, FILE_ID, BASE_INSTANT = "p", "fg-0", "20250101000000000"


def _instant(n: int) -> str:
    return f"2025010100000{n:04d}"


def _records(instant: str, rows: list[tuple]) -> pa.Table:
    n = len(rows)
    meta = [[instant] * n, [f"{instant}_0_{i}" for i in range(n)], [r[0] for r in rows], [PART] * n, [FILE_ID] * n]
    data = [[r[i] for r in rows] for i in range(4)]
    return pa.Table.from_arrays([pa.array(c, pa.string()) for c in meta] +
                                [pa.array(c, f.type) for c, f in zip(data, DATA)], schema=SCHEMA)


def _random_slice(tmp_path, rng: random.Random) -> tuple[Storage, FileSlice, set[str]]:
    storage = Storage(str(tmp_path))
    storage.makedirs(PART)
    keys = [f"k{i:02d}" for i in range(rng.randint(3, 25))]

    def row(key):
        ts = None if rng.random() < 0.1 else rng.randint(0, 6)
        return (key, ts, f"v{rng.randint(0, 999)}", rng.random() < 0.15)

    base = None
    if rng.random() < 0.85:
        relative = f"{PART}/{FILE_ID}_0-1-1_{BASE_INSTANT}.parquet"
        pq.write_table(_records(BASE_INSTANT, [row(k)[:3] + (False,) for k in keys if rng.random() < 0.7]),
                       storage.full(relative))
        base = BaseFile(relative, FILE_ID, "0-1-1", BASE_INSTANT, storage.file_size(relative))
    visible = {BASE_INSTANT}
    logs, written = [], []
    for version in range(1, rng.randint(2, 4)):
        blocks = []
        for _ in range(rng.randint(1, 3)):
            instant = _instant(len(written) + 1)
            written.append(instant)
            if rng.random() < 0.85:
                visible.add(instant)             # else: an uncommitted or later block
            kind = rng.random()
            chosen = rng.sample(keys + ["new1", "new2"], rng.randint(1, 5))
            if kind < 0.55:
                make = avro_data_block if rng.random() < 0.3 else parquet_data_block
                blocks.append(make(_records(instant, [row(k) for k in chosen]), instant, AVRO))
            elif kind < 0.9:
                entries = []
                for k in chosen:
                    choice = rng.random()
                    if choice < 0.3:
                        entries.append((k, PART, 0))                      # natural order
                    elif choice < 0.45:
                        entries.append(DeleteRecord(k, PART, rng.randint(0, 6), 1))   # Integer: another class
                    else:
                        entries.append((k, PART, rng.randint(0, 6)))
                blocks.append(delete_block(entries, instant, ordering_avro_type="long"))
            elif written[:-1]:
                blocks.append(rollback_command_block(instant, rng.choice(written[:-1])))
                visible.add(instant)
        relative = f"{PART}/.{FILE_ID}_{BASE_INSTANT}.log.{version}_0-1-1"
        size = write_log_file(storage.fs, storage.full(relative), blocks)
        logs.append(LogFile(relative, FILE_ID, BASE_INSTANT, version, "0-1-1", size))
    return storage, FileSlice(PART, FILE_ID, BASE_INSTANT, base, logs), visible


def _apply(storage, file_slice, changes: pa.Table) -> pa.Table:
    """What the Spark plan does: base rows whose key is not dropped, plus the emitted records."""
    emitted = changes.filter(changes[CHANGE_EMIT]).select(SCHEMA.names)
    if file_slice.base_file is None:
        return emitted
    base = pq.read_table(storage.full(file_slice.base_file.path))
    drops = changes.filter(pc.invert(changes[CHANGE_EMIT]))[CHANGE_KEY]
    kept = base.filter(pc.invert(pc.is_in(base["_hoodie_record_key"], value_set=drops.combine_chunks())))
    return pa.concat_tables([kept.select(SCHEMA.names).cast(emitted.schema), emitted])


def _sorted(table: pa.Table) -> list:
    return sorted(table.to_pylist(), key=repr)


@pytest.mark.parametrize("seed", range(80))
def test_changes_applied_to_the_base_file_equal_the_python_merge(tmp_path, seed):
    rng = random.Random(seed)
    storage, file_slice, visible = _random_slice(tmp_path, rng)
    for payload in (OVERWRITE_WITH_LATEST, DEFAULT_PAYLOAD):
        for ordering in ("ts", None):
            kwargs = dict(visible_instants=visible, ordering_field=ordering, payload_class=payload)
            expected = read_file_slice(storage, file_slice, SCHEMA, **kwargs)
            changes = slice_changes(storage, file_slice, SCHEMA, **kwargs)
            assert _sorted(_apply(storage, file_slice, changes)) == _sorted(expected), (payload, ordering)


def test_the_random_slices_exercise_every_rule(tmp_path):
    """The seeds above cover base-wins, deletes and inserts (the comparison would be weak otherwise)."""
    seen = {"base_kept_over_log": 0, "dropped": 0, "inserted": 0}
    for seed in range(80):
        storage, file_slice, visible = _random_slice(tmp_path / str(seed), random.Random(seed))
        kwargs = dict(visible_instants=visible, ordering_field="ts", payload_class=DEFAULT_PAYLOAD)
        changes = slice_changes(storage, file_slice, SCHEMA, **kwargs)
        latest = slice_changes(storage, file_slice, SCHEMA, **{**kwargs, "payload_class": OVERWRITE_WITH_LATEST})
        seen["base_kept_over_log"] += changes.num_rows < latest.num_rows
        seen["dropped"] += pc.sum(pc.invert(changes[CHANGE_EMIT])).as_py() or 0
        if file_slice.base_file is not None:
            base_keys = pq.read_table(storage.full(file_slice.base_file.path))["_hoodie_record_key"]
            emitted = changes.filter(changes[CHANGE_EMIT])[CHANGE_KEY]
            seen["inserted"] += pc.sum(pc.invert(pc.is_in(emitted, value_set=base_keys.combine_chunks()))).as_py() \
                or 0
    assert all(count >= 10 for count in seen.values()), seen
