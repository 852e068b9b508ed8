"""Seeded random SQL statement sequences on one Hudi table, each step with its reference semantics.

A step knows its source batch (rows for the temporary view `cf_src`), how to render its SQL once the table's
catalog column order is known, and how the reference computes the expected table (cf_reference). Steps that hit
a listed known divergence (cf_known) are not generated unless PYHUDI_CONFORMANCE_KNOWN=1.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

import cf_known
import cf_reference as R
from cf_shapes import RowMaker, Shape, data_value, partition_value, random_index, random_shape, sql_literal

SOURCE_VIEW = "cf_src"
COMPLEX_VALUES = {"struct<a:int,b:string>": "named_struct('a', 7, 'b', 'upd')",
                  "array<int>": "array(7, NULL, 8)", "map<string,int>": "map('upd', 7)"}


def q(name: str) -> str:
    return f"`{name}`"


@dataclass
class Step:
    kind: str
    render: Callable[[str, list[str]], str]                 # (table, catalog column order) -> SQL text
    expect: Callable                                        # (shape, ref_df, source_df) -> expected DataFrame
    rows: list[dict] | None = None                          # the source batch (view cf_src)
    source_columns: list[str] | None = None                 # the source view's column order
    tags: set[str] = field(default_factory=set)


class SequenceGenerator:
    """Statement sequence of one seed: CREATE TABLE (or CTAS), then `length` DML statements."""

    def __init__(self, seed: int, *, include_known: bool = False, length: int = 4):
        self.seed, self.include_known, self.length = seed, include_known, length
        self.rng = random.Random(seed)
        self.shape: Shape = random_shape(self.rng)
        # drawn from a rng of its own, so a seed keeps the statements it had before the index dimension
        self.shape.index = random_index(random.Random(seed * 7919 + 17))
        self.last = False       # generating the last statement (see _overwrite)
        self.rows = RowMaker(self.shape, self.rng)
        self.known: list[tuple[int, tuple]] = []   # identities written so far (may since be deleted)
        self.next_index = 0

    # --- batches ---------------------------------------------------------------------------------------------
    def _fresh(self, fixed: dict[int, int]) -> tuple[int, tuple]:
        self.next_index += 1
        slots = tuple(fixed.get(pos, s) for pos, s in enumerate(self.rows.slots()))
        ident = (self.next_index, slots)
        self.known.append(ident)
        return ident

    def batch(self, n: int, *, stored: float, repeats: bool, fixed: dict[int, int] | None = None,
              move: float = 0) -> list[dict]:
        """n identities (a share of them already written), each once, or with repeats of later ordering;
        `fixed` pins partition slots (position in PARTITIONED BY -> slot) for every row. `move`: the share of
        stored keys sent with other partition values (a global index moves or updates them in place)."""
        fixed = fixed or {}
        idents = []
        moving = move and self.shape.partitions
        for _ in range(n):
            candidates = [k for k in self.known if moving or all(k[1][i] == s for i, s in fixed.items())]
            if candidates and self.rng.random() < stored:
                ident = self.rng.choice(candidates)
                if moving and (self.rng.random() < move or any(ident[1][i] != s for i, s in fixed.items())):
                    slots = tuple(fixed.get(pos, s) for pos, s in enumerate(self.rows.slots()))
                    if slots != ident[1]:
                        self.known[self.known.index(ident)] = ident = (ident[0], slots)
            else:
                ident = self._fresh(fixed)
            if ident[0] not in {i for i, _ in idents}:
                idents.append(ident)
        out = [self.rows.row(i, s) for i, s in idents]
        if repeats and self.shape.ordering:
            for i, s in self.rng.sample(idents, min(len(idents), self.rng.randint(1, 2))):
                out.append(self.rows.row(i, s))     # a later tick: greater ordering value, must win
        self.rng.shuffle(out)
        return out

    def _source_order(self) -> list[str]:
        names = list(self.shape.names)
        self.rng.shuffle(names)
        return names

    # --- steps -----------------------------------------------------------------------------------------------
    def steps(self) -> list[Step]:
        out = [self._first()]
        while len(out) < self.length + 1:
            self.last = len(out) == self.length
            for _ in range(20):
                step = self._random_step()
                if step is not None and (self.include_known or not cf_known.blocks(self.shape, step)):
                    out.append(step)
                    break
            else:
                out.append(self._insert())
        return out

    def _first(self) -> Step:
        ctas = self._ctas() if self.rng.random() < 0.3 else None
        if ctas is not None and (self.include_known or not cf_known.blocks(self.shape, ctas)):
            return ctas
        return self._create()

    def _properties(self) -> str:
        props = [f"primaryKey = '{','.join(self.shape.keys)}'"]
        if self.shape.ordering:
            props.append(f"preCombineField = '{self.shape.ordering}'")
        props.append(f"type = '{self.shape.table_type}'")
        props += [f"'{k}' = '{v}'" for k, v in self.shape.index.properties()]
        return ", ".join(props)

    def _partitioned_by(self) -> str:
        return f" PARTITIONED BY ({', '.join(q(p) for p in self.shape.partitions)})" if self.shape.partitions else ""

    def _create(self) -> Step:
        shape = self.shape
        text = f"CREATE TABLE {{t}} ({shape.ddl()}) USING hudi{self._partitioned_by()} TBLPROPERTIES ({self._properties()})"
        return Step("create", lambda t, cols: text.format(t=t), lambda shape, ref, src: ref,
                    tags={"create"} | ({"partition-not-last"} if shape.partition_not_last else set()))

    def _ctas(self) -> Step:
        rows = self.batch(self.rng.randint(2, 6), stored=0, repeats=False)
        select = ", ".join(q(n) for n in self.shape.names)
        text = (f"CREATE TABLE {{t}} USING hudi{self._partitioned_by()} TBLPROPERTIES ({self._properties()}) "
                f"AS SELECT {select} FROM {SOURCE_VIEW}")
        return Step("ctas", lambda t, cols: text.format(t=t), lambda shape, ref, src: R.insert(shape, ref, src),
                    rows, self._source_order(),
                    tags={"ctas"} | ({"partition-not-last"} if self.shape.partition_not_last else set()))

    def _random_step(self) -> Step | None:
        kinds = ["insert"] * 3 + ["overwrite", "overwrite", "update", "update", "delete", "delete"] + \
            ["merge"] * 3 + ["truncate", "alter_properties"]
        return getattr(self, "_" + self.rng.choice(kinds))()

    def _spec_value(self, name: str, slot: int) -> str:
        """A partition value as the plain literal a PARTITION spec of TRUNCATE takes (1, 'north', true)."""
        col = self.shape.column(name)
        value = partition_value(col, slot)
        if col.type == "boolean":
            return "true" if value else "false"
        return str(value) if col.type == "int" else f"'{value}'"

    def _truncate(self) -> Step:
        """TRUNCATE TABLE t (Hudi: data and timeline deleted, the table re-initialised), or with a PARTITION spec
        naming all or some partition columns (a delete_partition of every matching partition)."""
        shape, rng = self.shape, self.rng
        if not shape.partitions or rng.random() < 0.3:
            return Step("truncate", lambda t, catalog: f"TRUNCATE TABLE {t}", lambda shape, ref, src: ref.limit(0),
                        tags={"truncate"})
        slots = rng.choice(self.known)[1] if self.known else self.rows.slots()
        named = [p for p in shape.partitions if len(shape.partitions) == 1 or rng.random() < 0.7] or \
            [shape.partitions[0]]
        values = {p: self._spec_value(p, slots[shape.partitions.index(p)]) for p in named}
        clause = ", ".join(f"{q(p)} = {v}" for p, v in values.items())
        keep = " AND ".join(f"`_loc_{p}` <=> {v}" for p, v in values.items())   # partition paths
        return Step("truncate", lambda t, catalog: f"TRUNCATE TABLE {t} PARTITION ({clause})",
                    lambda shape, ref, src: ref.filter(f"NOT ({keep})"), tags={"truncate", "truncate-partition"})

    def _alter_properties(self) -> Step:
        """ALTER TABLE SET / UNSET TBLPROPERTIES of write and service settings that change no row: they must
        reach the next writes (cleaning, archiving, small-file packing, index) without changing what they give.
        The index type set is SIMPLE on a table created with SIMPLE / BLOOM / none, else the table's own (a global
        index changes what identifies a record; a BUCKET table's index cannot change); only the former unset it."""
        index = self.shape.index
        scoped = index.type in (None, "SIMPLE", "BLOOM")
        settings = self.rng.choice([
            {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"},
            {"hoodie.parquet.small.file.limit": "0"},
            {"hoodie.index.type": "SIMPLE" if scoped else index.type},
        ])
        if self.rng.random() < 0.3 and (scoped or "hoodie.index.type" not in settings):
            keys = ", ".join(f"'{k}'" for k in settings)
            text = f"ALTER TABLE {{t}} UNSET TBLPROPERTIES IF EXISTS ({keys})"
        else:
            text = "ALTER TABLE {t} SET TBLPROPERTIES (" + ", ".join(f"'{k}' = '{v}'" for k, v in settings.items()) + ")"
        return Step("alter_properties", lambda t, catalog: text.format(t=t), lambda shape, ref, src: ref,
                    tags={"alter-properties"})

    def _insert(self) -> Step:
        has_ordering = bool(self.shape.ordering)
        rows = self.batch(self.rng.randint(1, 6), stored=0.5 if has_ordering else 0, repeats=has_ordering,
                          move=0.5 if has_ordering and self.shape.index.is_global else 0)
        if self.rng.random() < 0.5:
            listed = self._source_order()
            cols = ", ".join(q(c) for c in listed)
            render = lambda t, catalog: f"INSERT INTO {t} ({cols}) SELECT {cols} FROM {SOURCE_VIEW}"
            kind = "insert_columns"
        else:
            render = lambda t, catalog: (f"INSERT INTO {t} SELECT {', '.join(q(c) for c in catalog)} "
                                         f"FROM {SOURCE_VIEW}")
            kind = "insert"
        return Step(kind, render, R.insert_into, rows, self._source_order(), {"insert"})

    def _overwrite(self) -> Step:
        """INSERT OVERWRITE with no PARTITION clause, a fully static, partly static or dynamic one; under the
        session's default overwrite mode or one SET just before (spark.sql.sources.partitionOverwriteMode)."""
        shape, rng = self.shape, self.rng
        form = rng.choice(["none", "none", "static", "partial", "dynamic", "static-empty"]
                          if len(shape.partitions) == 2 else
                          ["none", "none", "static", "dynamic", "static-empty"] if shape.partitions else ["none"])
        empty = form == "static-empty"   # the query returns no row: Hudi empties the named partition
        form = "static" if empty else form
        mode = rng.choice(["default", "static", "dynamic"])
        fixed = {"static": set(shape.partitions), "partial": {shape.partitions[0]} if shape.partitions else set(),
                 "dynamic": set(), "none": set()}[form]
        pinned = {n: s for n, s in enumerate(self.rows.slots()) if shape.partitions[n] in fixed}
        if empty and self.known:
            pinned = dict(enumerate(rng.choice(self.known)[1]))
        # Under a global index INSERT OVERWRITE does not look the keys up: a stored key written into another
        # partition than its own stays in both. Only the last statement does that (with a key in two partitions a
        # later upsert's global lookup finds two locations, which Hudi resolves by neither rule the reference
        # knows); earlier ones write new keys only, as the generator's idea of where a key is may be stale.
        duplicates = shape.index.is_global and self.last and bool(shape.partitions) and rng.random() < 0.6
        stored = (0.6 if duplicates else 0) if shape.index.is_global else 0.5
        rows = self.batch(rng.randint(1, 5), stored=stored, repeats=bool(shape.ordering), fixed=pinned,
                          move=0.7 if duplicates else 0)
        spec = None if form == "none" else {
            p: (sql_literal(shape.column(p), rows[0][p]) if p in fixed else None) for p in shape.partitions}
        if empty:
            rows = []
        clause = "" if spec is None else " PARTITION (" + ", ".join(
            q(p) if v is None else f"{q(p)} = {v}" for p, v in spec.items()) + ")"
        prefix = "" if mode == "default" else f"SET spark.sql.sources.partitionOverwriteMode = {mode.upper()};\n"
        render = lambda t, catalog: (f"{prefix}INSERT OVERWRITE TABLE {t}{clause} SELECT "
                                     f"{', '.join(q(c) for c in catalog if c not in fixed)} FROM {SOURCE_VIEW}")
        effective = "static" if mode == "default" else mode    # Spark's and Hudi's default is static
        tags = {"overwrite", f"overwrite-{form}", f"mode-{mode}"} | ({"overwrite-static-empty"} if empty else set()) \
            | ({"overwrite-global-stored-keys"} if duplicates else set())
        if mode == "default" and shape.partitions:
            tags.add("overwrite-default-mode-partitioned")
        if shape.ordering and len(rows) != len({tuple(r[c] for c in shape.identity) for r in rows}):
            tags.add("overwrite-repeated-keys")
        return Step("overwrite", render,
                    lambda shape, ref, src: R.overwrite(shape, ref, src, mode=effective, spec=spec),
                    rows, self._source_order(), tags)

    def _predicate(self) -> str | None:
        shape, rng = self.shape, self.rng
        if rng.random() < 0.1:
            return None
        # with an in-place global index a record's partition columns may differ from its partition path, where
        # Hudi's partition pruning and a plain filter disagree: no predicate on them
        col = rng.choice([c for c in shape.columns if c.scalar
                          and not (shape.index.in_place and c.role == "partition")])
        if col.role == "key" and col.type != "string":
            return rng.choice([f"{q(col.name)} % 2 = {rng.randint(0, 1)}", f"{q(col.name)} % 3 = 0"])
        if col.role == "key":
            return f"{q(col.name)} < 'key-{rng.randint(0, max(1, self.next_index)):04d}'"
        if col.role in ("partition", "ordering"):
            value = self.rows.row(max(1, self.next_index), self.rows.slots())[col.name]
            return f"{q(col.name)} {rng.choice(['=', '<>', '<='])} {sql_literal(col, value)}"
        if rng.random() < 0.3:
            return f"{q(col.name)} IS {rng.choice(['', 'NOT '])}NULL"
        return f"{q(col.name)} {rng.choice(['=', '<', '>='])} {sql_literal(col, data_value(col, rng, 0))}"

    def _update(self) -> Step | None:
        targets = self.shape.data_columns
        if not targets:
            return None
        chosen = self.rng.sample(targets, self.rng.randint(1, min(2, len(targets))))
        assignments = {}
        for col in chosen:
            assignments[col.name] = sql_literal(col, data_value(col, self.rng, 0.2)) if col.scalar \
                else COMPLEX_VALUES[col.type]
        where = self._predicate()
        sets = ", ".join(f"{q(c)} = {v}" for c, v in assignments.items())
        render = lambda t, catalog: f"UPDATE {t} SET {sets}" + (f" WHERE {where}" if where else "")
        return Step("update", render, lambda shape, ref, src: R.update(shape, ref, assignments, where),
                    tags={"update"})

    def _delete(self) -> Step:
        where = self._predicate()
        render = lambda t, catalog: f"DELETE FROM {t}" + (f" WHERE {where}" if where else "")
        return Step("delete", render, lambda shape, ref, src: R.delete(shape, ref, where), tags={"delete"})

    def _merge(self) -> Step:
        shape, rng = self.shape, self.rng
        rows = self.batch(rng.randint(1, 6), stored=0.6, repeats=False, move=0.4 if shape.index.is_global else 0)
        for row in rows:
            row["_op"] = rng.choice(["U", "D"])
        delete_clause = rng.random() < 0.5
        update_clause = rng.random() < 0.85 or not delete_clause
        insert_clause = rng.random() < 0.85 or not (delete_clause or update_clause)
        update_columns = None
        if update_clause and rng.random() < 0.4 and shape.data_columns:
            update_columns = [c.name for c in rng.sample(shape.data_columns, rng.randint(1, len(shape.data_columns)))]
            if shape.ordering:
                update_columns.append(shape.ordering)   # Hudi: the update set must assign the preCombine field
        on = " AND ".join(f"tgt.{q(c)} = s.{q(c)}" for c in shape.identity)
        clauses = []
        if delete_clause:
            clauses.append("WHEN MATCHED AND s._op = 'D' THEN DELETE")
        if update_clause:
            sets = "*" if update_columns is None else ", ".join(f"{q(c)} = s.{q(c)}" for c in update_columns)
            clauses.append(f"WHEN MATCHED THEN UPDATE SET {sets}")
        if insert_clause:
            clauses.append("WHEN NOT MATCHED THEN INSERT *")
        text = f"MERGE INTO {{t}} AS tgt USING {SOURCE_VIEW} AS s ON {on} " + " ".join(clauses)
        tags = {"merge"} | ({"merge-global"} if shape.index.is_global else set()) | \
            ({"merge-delete"} if delete_clause else set()) | \
            ({"merge-delete-and-upsert"} if delete_clause and (update_clause or insert_clause) else set())
        return Step("merge", lambda t, catalog: text.format(t=t),
                    lambda shape, ref, src: R.merge(shape, ref, src, delete_clause=delete_clause,
                                                    update_clause=update_clause, update_columns=update_columns,
                                                    insert_clause=insert_clause),
                    rows, self._source_order() + ["_op"], tags)
