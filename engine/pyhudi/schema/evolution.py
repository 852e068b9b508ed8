"""Write-time schema evolution: which incoming schemas a table accepts (check_compatible), as Hudi does."""

from __future__ import annotations

import pyarrow as pa

from pyhudi.errors import SchemaError
from pyhudi.schema.storage import data_fields, storage_field
from pyhudi.schema.types import describe, is_decimal, safe_spark, spark_type_name


# --------------------------------------------------------------------------------------------------------------
# write-time schema evolution


def _kind(t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t):
        return "string"
    if pa.types.is_binary(t):
        return "bytes"
    if is_decimal(t):
        return "decimal"
    if pa.types.is_date32(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    if pa.types.is_list(t):
        return "array"
    if pa.types.is_map(t):
        return "map"
    if pa.types.is_struct(t):
        return "struct"
    return str(t)


# (incoming kind, table kind): the batch's values are converted to the table's type, which stays.
# Hudi 0.14's canonicalisation (AvroSchemaEvolutionUtils.reconcileSchemaRequirements / the "Type Promotions"
# chart of the schema evolution docs).
_TO_TABLE_TYPE = {
    ("int", "long"), ("int", "float"), ("int", "double"), ("int", "string"), ("int", "decimal"),
    ("long", "float"), ("long", "double"), ("long", "string"), ("long", "decimal"),
    ("float", "double"), ("float", "string"), ("float", "decimal"),
    ("double", "string"), ("double", "decimal"),
    ("decimal", "string"),
    ("string", "bytes"), ("string", "decimal"), ("string", "date"),
    ("bytes", "string"),
    ("date", "string"),
}
# (incoming kind, table kind): the table's column widens to the batch's type (existing data is read with
# Avro's promotions, and Hudi's number -> string).
_TO_BATCH_TYPE = {
    ("long", "int"), ("float", "int"), ("double", "int"), ("string", "int"),
    ("float", "long"), ("double", "long"), ("string", "long"),
    ("double", "float"), ("string", "float"),
    ("string", "double"),
}


class _Evolution:
    def __init__(self, table_name: str, *, case_sensitive: bool, missing: str):
        self.table_name = table_name
        self.case_sensitive = case_sensitive
        self.missing = missing  # "error" | "fill" | "drop"

    def clash(self, where: str, table_t: pa.DataType, batch_t: pa.DataType, why: str = "") -> SchemaError:
        fix_type = spark_type_name(table_t) if safe_spark(table_t) else str(table_t)
        return SchemaError(
            f"table `{self.table_name}`: column `{where}` is {describe(table_t)} in the table but "
            f"{describe(batch_t)} in the batch{': ' + why if why else ''}; Hudi cannot evolve the column "
            f"between these types. Fix: cast it in the query, e.g. CAST(`{where}` AS {fix_type}), or write the "
            "batch to a new table.")

    def match(self, names: list[str], name: str) -> int | None:
        if name in names:
            return names.index(name)
        if self.case_sensitive:
            return None
        low = name.lower()
        hits = [i for i, n in enumerate(names) if n.lower() == low]
        return hits[0] if len(hits) == 1 else None

    def check_duplicates(self, fields: list[pa.Field], where: str) -> None:
        seen: dict[str, str] = {}
        for f in fields:
            key = f.name if self.case_sensitive else f.name.lower()
            if key in seen:
                place = f" in `{where}`" if where else ""
                raise SchemaError(
                    f"table `{self.table_name}`: the batch has columns `{seen[key]}` and `{f.name}`{place}, which "
                    "Spark and Hudi treat as the same column. Fix: drop or rename one of them.")
            seen[key] = f.name

    def fields(self, table_fields: list[pa.Field], batch_fields: list[pa.Field], where: str) -> list[pa.Field]:
        self.check_duplicates(batch_fields, where)
        batch_names = [f.name for f in batch_fields]
        used: set[int] = set()
        out: list[pa.Field] = []
        missing: list[pa.Field] = []
        for tf in table_fields:
            idx = self.match(batch_names, tf.name)
            path = f"{where}.{tf.name}" if where else tf.name
            if idx is None:
                missing.append(tf)
                if self.missing == "fill":
                    if not tf.nullable:
                        raise SchemaError(
                            f"table `{self.table_name}`: the batch has no column `{path}`, which is NOT NULL in "
                            f"the table ({describe(tf.type)}), so it cannot be filled with nulls. Fix: add "
                            f"`{path}` to the batch.")
                    out.append(tf)
                continue
            used.add(idx)
            bf = batch_fields[idx]
            merged = self.type(tf.type, bf.type, path)
            metadata = bf.metadata or tf.metadata
            out.append(pa.field(tf.name, merged, nullable=tf.nullable or bf.nullable, metadata=metadata))
        if missing and self.missing == "error":
            cols = ", ".join(f"`{(where + '.') if where else ''}{f.name}` ({spark_type_name(f.type)})"
                             for f in missing)
            raise SchemaError(
                f"table `{self.table_name}`: the batch lacks column(s) {cols} that the table has; Hudi does not "
                "drop columns on write. Fix: add them to the batch (e.g. CAST(NULL AS <type>) AS <column>), or "
                "set hoodie.write.set.null.for.missing.columns=true to fill them with nulls.")
        for i, bf in enumerate(batch_fields):
            if i in used:
                continue
            path = f"{where}.{bf.name}" if where else bf.name
            if not bf.nullable:
                raise SchemaError(
                    f"table `{self.table_name}`: the batch adds column `{path}` ({describe(bf.type)}) as NOT NULL; "
                    "Hudi can only add nullable columns (existing rows have no value for it). Fix: make it "
                    "nullable in the query, or add it first with ALTER TABLE ... ADD COLUMNS.")
            out.append(bf)
        return out

    def type(self, table_t: pa.DataType, batch_t: pa.DataType, where: str) -> pa.DataType:
        tk, bk = _kind(table_t), _kind(batch_t)
        if tk == "struct" and bk == "struct":
            return pa.struct(self.fields([table_t.field(i) for i in range(table_t.num_fields)],
                                         [batch_t.field(i) for i in range(batch_t.num_fields)], where))
        if tk == "array" and bk == "array":
            tv, bv = table_t.value_field, batch_t.value_field
            element = self.type(tv.type, bv.type, f"{where}.element")
            return pa.list_(pa.field("element", element, nullable=tv.nullable or bv.nullable,
                                     metadata=bv.metadata or tv.metadata))
        if tk == "map" and bk == "map":
            ti, bi = table_t.item_field, batch_t.item_field
            value = self.type(ti.type, bi.type, f"{where}.value")
            return pa.map_(pa.field("key", pa.string(), nullable=False),
                           pa.field("value", value, nullable=ti.nullable or bi.nullable,
                                    metadata=bi.metadata or ti.metadata))
        if table_t == batch_t:
            return table_t
        if tk == "decimal" and bk == "decimal":
            if batch_t.scale <= table_t.scale and \
                    batch_t.precision - batch_t.scale <= table_t.precision - table_t.scale:
                return table_t
            raise self.clash(where, table_t, batch_t,
                             "the batch's decimal does not fit the table's precision/scale")
        if (bk, tk) in _TO_TABLE_TYPE:
            return table_t
        if (bk, tk) in _TO_BATCH_TYPE:
            return batch_t
        why = ""
        if {tk, bk} == {"timestamp", "timestamp_ntz"}:
            why = "TIMESTAMP (with time zone) and TIMESTAMP_NTZ (without) are different types"
        raise self.clash(where, table_t, batch_t, why)


def check_compatible(table_schema: pa.Schema, incoming: pa.Schema, table_name: str, *,
                     set_null_for_missing_columns: bool = False,
                     allow_column_drop: bool = False,
                     reconcile_schema: bool = False,
                     case_sensitive: bool = False) -> pa.Schema:
    """Apply Hudi's write-time schema evolution; return the storage schema to write the batch with.

    ``table_schema`` is the table's current schema and ``incoming`` the batch's (meta columns in either are
    ignored; both are normalised with :func:`storage_schema`). Columns match by name, case-insensitively
    like Spark unless ``case_sensitive``; the result keeps the table's names and order, with new columns
    at the end. Per column (recursively into structs, array elements and map values):

    * same type -> kept; a batch type Hudi promotes to the table's (int -> long/float/double/string/decimal,
      long -> float/double/string/decimal, float -> double/string/decimal, double -> string/decimal,
      decimal -> wider decimal/string, string -> bytes/decimal/date, bytes -> string, date -> string)
      -> the table's type (the batch is cast on write);
    * a batch type the table's type promotes to (int -> long/float/double/string, long -> float/double/string,
      float -> double/string, double -> string) -> the batch's type (the table's column widens);
    * anything else -> SchemaError naming the table, the column, both types and the fix.

    Nullability widens (nullable if either side is). New columns must be nullable. Columns the batch lacks
    raise SchemaError, as in Hudi by default, unless ``set_null_for_missing_columns``
    (``hoodie.write.set.null.for.missing.columns``) or ``reconcile_schema``
    (``hoodie.datasource.write.reconcile.schema``) is set, which keep them (filled with nulls by
    :func:`to_storage`), or ``allow_column_drop``
    (``hoodie.datasource.write.schema.allow.auto.evolution.column.drop``), which drops them from the result.
    """
    table_fields = [storage_field(f, f.name, table_name) for f in data_fields(table_schema)]
    batch_fields = [storage_field(f, f.name, table_name) for f in data_fields(incoming)]
    if allow_column_drop:
        missing = "drop"
    elif set_null_for_missing_columns or reconcile_schema:
        missing = "fill"
    else:
        missing = "error"
    evolution = _Evolution(table_name, case_sensitive=case_sensitive, missing=missing)
    return pa.schema(evolution.fields(table_fields, batch_fields, ""))
