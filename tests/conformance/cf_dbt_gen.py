"""Seeded random dbt projects: one seed per run (src_1..src_N), one incremental Hudi model over it, and the
reference dbt-spark + Hudi semantics of the model's strategy, computed with plain Spark.

The model selects typed columns (every harness type, built from the seed's text columns) in a random order, with
partition_by none/one/two in any position, a single or composite unique_key, cow or mor, an optional
preCombine field, written in dbt-spark's style (`options={...}`) or pyhudi's (`table_type`, `precombine_key`).
Partition values are a function of the key (a key never moves between partitions), so identity = unique_key.
The table's index and file sizing (cf_shapes.random_index: SIMPLE / BLOOM / GLOBAL_* / BUCKET, update.partition
.path, small-file limit, max file size) go in `options` (dbt-spark style) or `index_type` + `tblproperties`
(pyhudi style); as no key moves, every index gives the same rows.
"""

from __future__ import annotations

import csv
import io
import json
import random
from dataclasses import dataclass, field

from cf_shapes import DATA_TYPES, IndexSettings, random_index

EXPRESSIONS = {
    "int": "cast({r} as int)", "bigint": "cast({r} as bigint)", "decimal(10,2)": "cast({r} as decimal(10,2))",
    "date": "cast({r} as date)", "timestamp": "cast({r} as timestamp)", "string": "{r}",
    "boolean": "cast({r} as boolean)", "struct<a:int,b:string>": "named_struct('a', cast({r} as int), 'b', {r})",
    "array<int>": "array(cast({r} as int), 7)", "map<string,int>": "map('k', cast({r} as int))",
}
SEED_TYPES = {"id": "int", "id2": "string", "ts": "int", "p0": "string", "p1": "int"}
REGIONS = ["eu", "us", "apac"]


@dataclass
class Project:
    seed: int
    keys: list[str]
    partitions: list[str]
    ordering: str | None
    table_type: str
    strategy: str
    style: str                        # dbt-spark (options={...}) | pyhudi (table_type=, precombine_key=)
    data: dict[str, str]              # data column -> type
    select: list[tuple[str, str]]     # (column, SQL expression over the seed) in the model's order
    batches: list[list[dict]] = field(default_factory=list)
    index: IndexSettings = field(default_factory=IndexSettings)

    @property
    def seed_columns(self) -> list[str]:
        return ["id"] + (["id2"] if "id2" in self.keys else []) + (["ts"] if self.ordering else []) + \
            [p for p in ("p0", "p1") if p in self.partitions] + [f"r_{c}" for c in self.data]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.select]

    def describe(self) -> str:
        return (f"strategy={self.strategy} unique_key={self.keys} partition_by={self.partitions or '-'} "
                f"precombine={self.ordering or '-'} type={self.table_type} style={self.style} "
                f"columns={self.names} types={self.data} {self.index.describe()}")

    def model_sql(self) -> str:
        config = {"materialized": "incremental", "file_format": "hudi", "incremental_strategy": self.strategy,
                  "unique_key": self.keys[0] if len(self.keys) == 1 else self.keys}
        if self.partitions:
            config["partition_by"] = self.partitions if len(self.partitions) > 1 or self.seed % 2 else \
                self.partitions[0]
        if self.style == "dbt-spark":
            options = {"type": self.table_type}
            if self.ordering:
                options["preCombineField"] = self.ordering
            options.update(self.index.properties())
            config["options"] = options
        else:
            config["table_type"] = self.table_type
            if self.ordering:
                config["precombine_key"] = self.ordering
            props = dict(self.index.properties())
            if props.get("hoodie.index.type"):
                config["index_type"] = props.pop("hoodie.index.type")
            if props:
                config["tblproperties"] = props
        args = ", ".join(f"{k}={json.dumps(v)}" for k, v in config.items())
        select = ",\n  ".join(f"{expr} as {name}" for name, expr in self.select)
        return f"{{{{ config({args}) }}}}\nselect\n  {select}\nfrom {{{{ ref('src_' ~ var('batch', 1)) }}}}\n"

    def seed_csv(self, run: int) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.seed_columns)
        for row in self.batches[run]:
            writer.writerow(["" if row[c] is None else row[c] for c in self.seed_columns])
        return out.getvalue()

    def column_types(self) -> dict:
        return {c: SEED_TYPES.get(c, "string") for c in self.seed_columns}

    def reference_select(self, view: str) -> str:
        return "select " + ", ".join(f"{expr} as {name}" for name, expr in self.select) + f" from {view}"


def _raw(typ: str, rng: random.Random):
    if rng.random() < 0.15:
        return None
    if typ in ("int", "bigint", "struct<a:int,b:string>", "array<int>", "map<string,int>"):
        return str(rng.randint(-500, 500))
    if typ.startswith("decimal"):
        return f"{rng.randint(-99999, 99999) / 100:.2f}"
    if typ == "date":
        return f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if typ == "timestamp":
        return f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:07"
    if typ == "boolean":
        return rng.choice(["true", "false"])
    return rng.choice(["alpha", "beta", "gamma", "x y", "delta-1"])


def random_project(seed: int, runs: int | None = None, *, partitions_last: bool = False) -> Project:
    """The project of `seed`; partitions_last moves the partition columns to the end of the select, in
    partition_by order (the shape that avoids a known divergence, cf_known)."""
    rng = random.Random(seed)
    keys = ["id", "id2"] if rng.random() < 0.4 else ["id"]
    partitions = rng.sample(["p0", "p1"], rng.choice([0, 1, 1, 2]))
    ordering = "ts" if rng.random() < 0.6 else None
    strategy = rng.choice(["merge", "merge", "append", "insert_overwrite"])
    types = rng.sample(DATA_TYPES, rng.randint(2, 4))
    data = {f"c{i}": t for i, t in enumerate(types)}
    select = [("id", "id")] + ([("id2", "id2")] if "id2" in keys else []) + \
        ([("ts", "ts")] if ordering else []) + [(p, p) for p in partitions] + \
        [(name, EXPRESSIONS[t].format(r=f"r_{name}")) for name, t in data.items()]
    rng.shuffle(select)
    if partitions_last:
        select = [s for s in select if s[0] not in partitions] + [(p, p) for p in partitions]
    project = Project(seed, keys, partitions, ordering, rng.choice(["cow", "mor"]), strategy,
                      rng.choice(["dbt-spark", "pyhudi"]), data, select)
    project.batches = _batches(project, rng, runs or rng.choice([2, 3]))
    project.index = random_index(random.Random(seed * 7919 + 17))   # its own rng: the rest is as before
    return project


def _row(project: Project, rng: random.Random, ident: int, tick: int) -> dict:
    row = {"id": ident // 3 if "id2" in project.keys else ident, "id2": f"k{ident % 3}", "ts": tick,
           "p0": REGIONS[ident % 3], "p1": ident % 2}
    for name, typ in project.data.items():
        row[f"r_{name}"] = _raw(typ, rng)
    return row


def _batches(project: Project, rng: random.Random, runs: int) -> list[list[dict]]:
    """Run 1: a few rows. Later runs: the previous source with some rows deleted, some changed (greater ts),
    some new. An append model without preCombine field gets only new keys (see cf_known: harness limitation)."""
    next_ident, tick = 0, 0
    current: dict[int, dict] = {}
    out = []
    for run in range(runs):
        if run == 0 or (project.strategy == "append" and not project.ordering):
            current = {} if run else current
            adds = rng.randint(3, 7)
        else:
            for ident in rng.sample(sorted(current), min(len(current), rng.randint(0, 2))):
                del current[ident]
            for ident in rng.sample(sorted(current), min(len(current), rng.randint(1, 3))):
                tick += 1
                current[ident] = _row(project, rng, ident, tick)
            adds = rng.randint(0, 3)
        for _ in range(adds):
            next_ident += 1
            tick += 1
            current[next_ident] = _row(project, rng, next_ident, tick)
        out.append([current[i] for i in sorted(current)])
    return out
