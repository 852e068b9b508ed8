"""Partition and property statements on Hudi tables, as Hudi's Spark SQL runs them:

- `ALTER TABLE t DROP [IF EXISTS] PARTITION (k=v, ...)[, PARTITION (...)]`: a `delete_partition` replacecommit;
- `TRUNCATE TABLE t PARTITION (...)`: a `delete_partition` replacecommit too; `TRUNCATE TABLE t`: the data and
  the timeline are deleted and the table starts again from its hoodie.properties, as Hudi does;
- `SHOW PARTITIONS t [PARTITION (...)]`: the partitions of the latest snapshot, one `k=v/k2=v2` row each;
- `ALTER TABLE t SET / UNSET TBLPROPERTIES`: kept in the catalog; SQL writes read them as write options, so
  hoodie.* service settings take effect on the next write. The table's identity cannot change this way. The
  `comment` key is the table comment, as in Spark's v1 ALTER TABLE;
- `ALTER TABLE t ALTER COLUMN c COMMENT '...'`: a column comment in the catalog;
- `DESCRIBE [EXTENDED | FORMATTED] t`, `SHOW TBLPROPERTIES t [(key)]`: from the catalog entry (pyhudi.sqlext.describe).

A partition spec may name some of the partition columns (every partition matching them is meant).
"""

from __future__ import annotations

import re

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from sqlglot import exp

from pyhudi import config as C
from pyhudi.errors import SqlError
from pyhudi.file_group.naming import PARTITION_METAFILE
from pyhudi.keygen.pathcodec import escape_path_name, unescape_path_name
from pyhudi.sqlext import catalog, commits, describe

# Keys that restate what hoodie.properties fixes when the table is created (record key, partitioning, type).
IDENTITY_KEYS = {C.PRIMARY_KEY.lower(), C.PRECOMBINE_FIELD.lower(), C.TYPE} | {p.key for p in (
    C.RECORD_KEY, C.PRECOMBINE, C.PARTITION_PATH, C.TABLE_TYPE, C.KEYGEN_CLASS, C.HIVE_STYLE, C.URL_ENCODE,
    C.TABLE_NAME, C.DATABASE_NAME)}


def spec_values(partition: exp.Expression) -> dict[str, str | None]:
    """`PARTITION (k='v', n=1)` -> {'k': 'v', 'n': '1'}."""
    out: dict[str, str | None] = {}
    for item in partition.expressions:
        if not isinstance(item, exp.EQ):
            raise SqlError(f"{partition.sql('spark')}: give each partition column a value, e.g. PARTITION (dt='x')")
        value = item.expression
        if isinstance(value, exp.Null):
            out[item.this.name] = None
        elif isinstance(value, exp.Boolean):
            out[item.this.name] = "true" if value.this else "false"
        elif isinstance(value, exp.Literal):
            out[item.this.name] = str(value.this)
        else:
            raise SqlError(f"{partition.sql('spark')}: partition values must be literals")
    return out


def _table(entry: catalog.CatalogEntry):
    from pyhudi.table import HudiTable
    return HudiTable.load(entry.location)


def _partitions(entry: catalog.CatalogEntry) -> list[tuple[str, dict[str, str]]]:
    """(partition path, {column: value}) of every partition in the table's latest snapshot."""
    table = _table(entry)
    props = table.properties
    fields = props.partition_fields
    out = []
    for path in table.view().partitions():
        parts = path.split("/")
        if props.hive_style:
            values = dict(p.split("=", 1) for p in parts if "=" in p)
        else:   # positional; a value holding "/" (urlencode=false) keeps its slashes in the last field
            values = dict(zip(fields, parts[:len(fields) - 1] + ["/".join(parts[len(fields) - 1:])]))
        if props.url_encode or props.hive_style:
            values = {k: unescape_path_name(v) for k, v in values.items()}
        out.append((path, values))
    known = {path for path, _ in out}
    out += [(path, values) for path, values in _added_partitions(table, fields) if path not in known]
    return sorted(out)


def _added_partitions(table, fields: list[str]) -> list[tuple[str, dict[str, str]]]:
    """Partitions ALTER TABLE ADD PARTITION made: folders `fields` deep that hold nothing but their
    .hoodie_partition_metadata (hive-style tables only: positional folders cannot be told from others)."""
    if not fields or not table.properties.hive_style:
        return []
    storage, level = table.storage, [""]
    for field in fields:
        prefix = f"{field}="
        level = [f"{parent}/{name}".lstrip("/") for parent in level for name in storage.list_dirs(parent)
                 if name.startswith(prefix)]
    return [(path, {k: unescape_path_name(v) for k, v in (p.split("=", 1) for p in path.split("/"))})
            for path in level if _is_added(storage, path)]


def _is_added(storage, path: str) -> bool:
    """A partition folder holding nothing but its .hoodie_partition_metadata (ALTER TABLE ADD PARTITION's)."""
    return [f.base_name for f in storage.list_files(path)] == [PARTITION_METAFILE] and not storage.list_dirs(path)


def add_partitions(spark: SparkSession, entry: catalog.CatalogEntry, action: exp.Expression) -> None:
    """ALTER TABLE t ADD [IF NOT EXISTS] PARTITION (...): the partition folder with its .hoodie_partition_metadata
    (commitTime 00000000000000), as Hudi's AlterHoodieTableAddPartitionCommand; no instant."""
    from pyhudi.table import write_partition_metadata
    table = _table(entry)
    fields = table.properties.partition_fields
    if not fields:
        raise SqlError(f"{entry.name} is a non-partitioned table that is not allowed to add partition")
    if not table.properties.hive_style:
        raise SqlError(f"ALTER TABLE {entry.name} ADD PARTITION: pyhudi adds partitions to hive-style tables only "
                       "(hoodie.datasource.write.hive_style_partitioning=true, the SQL default); write a row instead")
    spec = {k.lower(): v for k, v in spec_values(action.this).items()}
    missing = [f for f in fields if f.lower() not in spec]
    if missing or len(spec) != len(fields):
        raise SqlError(f"ALTER TABLE {entry.name} ADD PARTITION: give every partition column ({', '.join(fields)}) "
                       "a value")
    path = "/".join(f"{f}={escape_path_name(spec[f.lower()] or '')}" for f in fields)
    if table.storage.exists(f"{path}/{PARTITION_METAFILE}"):
        if action.args.get("exists"):
            return
        raise SqlError(f"Partition metadata already exists for path: {table.storage.full(path)}\nALTER TABLE "
                       f"{entry.name}: use ADD IF NOT EXISTS PARTITION")
    write_partition_metadata(table.storage, path, "00000000000000")


def _remove_added(entry: catalog.CatalogEntry, paths: list[str]) -> list[str]:
    """Delete the folders of added partitions among `paths` (nothing but their metadata file); the others."""
    table = _table(entry)
    if not table.properties.hive_style:   # ADD PARTITION makes hive-style partitions only
        return paths
    storage = table.storage
    added = {path for path in paths if _is_added(storage, path)}
    for path in added:
        storage.delete_file(f"{path}/{PARTITION_METAFILE}")
        storage.delete_empty_dirs(path)
    return [p for p in paths if p not in added]


def matching_partitions(entry: catalog.CatalogEntry, spec: dict[str, str | None], statement: str) -> list[str]:
    """Partition paths whose values match every column the spec names."""
    columns = {c.lower(): c for c in entry.partition_columns}
    if not columns:
        raise SqlError(f"{statement} {entry.name}: the table is not partitioned; a PARTITION clause does not apply")
    unknown = [k for k in spec if k.lower() not in columns]
    if unknown:
        raise SqlError(f"{statement} {entry.name}: {', '.join(unknown)} is not a partition column; the partition "
                       f"columns are {', '.join(entry.partition_columns)}")
    wanted = {columns[k.lower()]: v for k, v in spec.items()}
    found = []
    for path, values in _partitions(entry):
        lowered = {k.lower(): v for k, v in values.items()}
        if all(_same_value(lowered.get(col.lower()), value) for col, value in wanted.items()):
            found.append(path)
    return found


def _same_value(stored: str | None, wanted: str | None) -> bool:
    if wanted is None or wanted == "":
        return stored in ("__HIVE_DEFAULT_PARTITION__", "default", None)
    return stored == wanted


def _spec_text(spec: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in spec.items())


def drop_partitions(spark: SparkSession, entry: catalog.CatalogEntry, action: exp.Expression) -> None:
    """ALTER TABLE t DROP [IF EXISTS] PARTITION (...): one delete_partition replacecommit for all specs."""
    if_exists = bool(action.args.get("exists"))
    paths: list[str] = []
    for partition in action.expressions:
        spec = spec_values(partition)
        found = matching_partitions(entry, spec, "ALTER TABLE DROP PARTITION on")
        if not found and not if_exists:
            existing = [p for p, _ in _partitions(entry)]
            shown = ", ".join(existing[:10]) + (" ..." if len(existing) > 10 else "")
            raise SqlError(f"ALTER TABLE {entry.name} DROP PARTITION ({_spec_text(spec)}): no such partition "
                           f"(partitions: {shown or 'none'}); check the value, or use DROP IF EXISTS PARTITION")
        paths.extend(p for p in found if p not in paths)
    paths = _remove_added(entry, paths)
    if paths:
        _delete_partitions(spark, entry, paths)


def _delete_partitions(spark: SparkSession, entry: catalog.CatalogEntry, paths: list[str]) -> None:
    from pyhudi.client.write import delete_partitions
    from pyhudi.sqlext.dml import table_write_options
    commits.record(delete_partitions(spark, entry.location, paths, table_write_options(spark, entry)))


def truncate(spark: SparkSession, entry: catalog.CatalogEntry, stmt: exp.TruncateTable) -> None:
    """TRUNCATE TABLE t PARTITION (...): a delete_partition replacecommit of the matching partitions (Hudi drops
    them for a lazy clean). TRUNCATE TABLE t: the data and timeline are deleted and the table is initialised
    again from its hoodie.properties, as Hudi's TruncateHoodieTableCommand (pyhudi.client.truncate)."""
    partition = stmt.args.get("partition")
    if partition is not None:
        found = matching_partitions(entry, spec_values(partition), "TRUNCATE TABLE ... PARTITION on")
        if found:
            _delete_partitions(spark, entry, found)
        return
    from pyhudi.client.truncate import truncate_table
    from pyhudi.sqlext.dml import table_write_options
    truncate_table(entry.location, table_write_options(spark, entry))
    spark.catalog.refreshTable(entry.qualified)


def show_partitions(spark: SparkSession, entry: catalog.CatalogEntry, spec: dict | None) -> DataFrame:
    """SHOW PARTITIONS: one `k=v/k2=v2` row per partition (Spark's column name `partition`), sorted; none for a
    table that is not partitioned (as Hudi's ShowHoodieTablePartitionsCommand, where Spark would raise)."""
    schema = T.StructType([T.StructField("partition", T.StringType(), False)])
    if not entry.partition_columns:
        if spec:
            raise SqlError(f"SHOW PARTITIONS {entry.name}: the table is not partitioned; drop the PARTITION clause")
        return spark.createDataFrame([], schema)
    wanted = set(matching_partitions(entry, spec, "SHOW PARTITIONS") if spec else [])
    names = {c.lower(): c for c in entry.partition_columns}
    rows = []
    for path, values in _partitions(entry):
        if spec and path not in wanted:
            continue
        lowered = {k.lower(): v for k, v in values.items()}
        rows.append(("/".join(f"{names[c.lower()]}={escape_path_name(lowered.get(c.lower()) or '')}"
                              for c in entry.partition_columns),))
    return spark.createDataFrame(sorted(rows), schema)


def set_properties(spark: SparkSession, entry: catalog.CatalogEntry, properties: dict[str, str]) -> None:
    """ALTER TABLE t SET TBLPROPERTIES: stored in the catalog (values checked as write options first)."""
    _refuse_identity(entry, properties, "SET")
    merged = {**entry.properties, **properties}
    C.HoodieConfig({k: v for k, v in C.normalize_options(merged).items()
                    if k.startswith("hoodie.") and not k.startswith("hoodie.table.")})   # a bad value: ConfigError
    if properties:
        catalog.alter_properties(spark, entry, properties)


def unset_properties(spark: SparkSession, entry: catalog.CatalogEntry, keys: list[str], if_exists: bool) -> None:
    _refuse_identity(entry, dict.fromkeys(keys, ""), "UNSET")
    missing = [k for k in keys if k not in entry.properties and not (k == "comment" and entry.comment is not None)]
    if missing and not if_exists:
        raise SqlError(f"ALTER TABLE {entry.name} UNSET TBLPROPERTIES: {', '.join(missing)} is not set "
                       f"(set: {', '.join(sorted(entry.properties)) or 'none'}); use UNSET TBLPROPERTIES IF EXISTS")
    present = [k for k in keys if k in entry.properties or (k == "comment" and entry.comment is not None)]
    if present:
        catalog.alter_properties(spark, entry, {}, present)


def _refuse_identity(entry: catalog.CatalogEntry, properties: dict, verb: str) -> None:
    fixed = [k for k in properties if k.lower() in IDENTITY_KEYS or k.lower().startswith("hoodie.table.")]
    changed = [k for k in fixed if verb == "UNSET" or entry.properties.get(k) != properties[k]]
    if changed:
        raise SqlError(f"ALTER TABLE {entry.name} {verb} TBLPROPERTIES: {', '.join(changed)} is part of the "
                       "table's identity (record key, partitioning, type) kept in .hoodie/hoodie.properties; "
                       "recreate the table with CREATE OR REPLACE TABLE ... AS SELECT to change it")


# --- routing ----------------------------------------------------------------------------------------------
_SHOW_PARTITIONS = re.compile(r"^\s*SHOW\s+PARTITIONS\s+(?P<rest>.+?)\s*$", re.IGNORECASE | re.DOTALL)
_SHOW_PROPERTIES = re.compile(r"^\s*SHOW\s+TBLPROPERTIES\s+(?P<table>[^(]+?)\s*(?:\(\s*(?P<key>.*?)\s*\))?\s*$",
                              re.IGNORECASE | re.DOTALL)
_UNSET = re.compile(r"^\s*ALTER\s+TABLE\s+(?P<table>.+?)\s+UNSET\s+TBLPROPERTIES\s+(?P<exists>IF\s+EXISTS\s+)?"
                    r"\((?P<keys>.*)\)\s*$", re.IGNORECASE | re.DOTALL)


def dispatch(spark: SparkSession, resolver, text: str, tree: exp.Expression) -> DataFrame | None:
    """Run the statement if it is one of this module's on a Hudi table; None when it is not."""
    if isinstance(tree, exp.TruncateTable):
        tables = tree.expressions
        entry = resolver.hudi_entry(tables[0]) if len(tables) == 1 and isinstance(tables[0], exp.Table) else None
        if entry is not None:
            truncate(spark, entry, tree)
            return _empty(spark)
    elif isinstance(tree, exp.Describe) and isinstance(tree.this, exp.Table) and not tree.args.get("partition"):
        entry = resolver.hudi_entry(tree.this)
        if entry is not None:
            style = str(tree.args.get("style") or "").upper()
            return describe.describe(spark, entry, extended=style in ("EXTENDED", "FORMATTED"))
    elif isinstance(tree, exp.Alter) and isinstance(tree.this, exp.Table):
        actions = tree.args.get("actions") or []
        if len(actions) != 1 or not isinstance(actions[0], (exp.DropPartition, exp.AddPartition, exp.AlterSet,
                                                             exp.AlterColumn)):
            return None
        entry = resolver.hudi_entry(tree.this)
        if entry is None:
            return None
        if isinstance(actions[0], exp.AlterColumn):
            return _column_comment(spark, entry, actions[0])
        if isinstance(actions[0], exp.DropPartition):
            drop_partitions(spark, entry, actions[0])
            return _empty(spark)
        if isinstance(actions[0], exp.AddPartition):
            if actions[0].args.get("location"):
                raise SqlError("Hoodie table does not support specify partition location explicitly")
            add_partitions(spark, entry, actions[0])
            return _empty(spark)
        props = [p for node in actions[0].expressions if isinstance(node, exp.Properties) for p in node.expressions]
        if not props or not all(type(p) is exp.Property or isinstance(p, exp.SchemaCommentProperty) for p in props):
            return None
        set_properties(spark, entry, dict(_property(p) for p in props))
        return _empty(spark)
    elif isinstance(tree, exp.Command):
        return _command(spark, resolver, text)
    return None


def _property(node: exp.Expression) -> tuple[str, str]:
    """('key', 'value') of a TBLPROPERTIES item; sqlglot reads an unquoted `comment = 'x'` as a comment node."""
    if isinstance(node, exp.SchemaCommentProperty):
        return "comment", _key(node.this)
    return _key(node.this), _key(node.args["value"])


def _column_comment(spark: SparkSession, entry: catalog.CatalogEntry, action: exp.AlterColumn) -> DataFrame | None:
    """ALTER TABLE t ALTER COLUMN c COMMENT '...' or CHANGE COLUMN c c <its type> COMMENT '...': a catalog-only
    change (Hudi's schema has no column docs). CHANGE COLUMN to another type raises Hudi's (and Spark's) message;
    any other column change is left to the router (which refuses it for Hudi tables)."""
    comment = action.args.get("comment")
    field = next((f for f in entry.data_fields if f.name.lower() == action.this.name.lower()), None)
    rename = action.args.get("rename_to")
    if field is None or field.name in entry.partition_columns or (rename and rename.name.lower() != field.name.lower()) \
            or any(action.args.get(k) for k in action.args if k not in ("this", "comment", "rename_to", "dtype")):
        return None
    dtype = action.args.get("dtype")
    if dtype is not None:
        new_type = T._parse_datatype_string(dtype.sql("spark"))
        if new_type != field.dataType:
            raise SqlError(f"ALTER TABLE CHANGE COLUMN is not supported for changing column '{field.name}' with type "
                           f"'{type(field.dataType).__name__}' to '{field.name}' with type "
                           f"'{type(new_type).__name__}'\nALTER TABLE {entry.name}: to retype a column, recreate "
                           "the table with CREATE OR REPLACE TABLE ... AS SELECT")
    if not isinstance(comment, exp.Literal):
        return None
    catalog.set_column_comment(spark, entry, field.name, comment.name)
    return _empty(spark)


def _named_table(resolver, rest: str):
    """(parsed statement, Hudi catalog entry or None) for a table name with an optional PARTITION clause: the same
    shape TRUNCATE TABLE has, which sqlglot parses."""
    import sqlglot
    parsed = sqlglot.parse_one(f"TRUNCATE TABLE {rest}", read="spark")
    return parsed, resolver.hudi_entry(parsed.expressions[0])


def _command(spark: SparkSession, resolver, text: str) -> DataFrame | None:
    """Statements sqlglot keeps as text: SHOW PARTITIONS, SHOW TBLPROPERTIES and ALTER TABLE ... UNSET
    TBLPROPERTIES."""
    import sqlglot
    props = _SHOW_PROPERTIES.match(text)
    if props:
        _, entry = _named_table(resolver, props["table"])
        if entry is None:
            return None
        key = props["key"]
        if key is not None:
            key = _key(sqlglot.parse_one(key, read="spark"))
        return describe.show_properties(spark, entry, key)
    show = _SHOW_PARTITIONS.match(text)
    if show:
        parsed, entry = _named_table(resolver, show["rest"])
        if entry is None:
            return None
        partition = parsed.args.get("partition")
        return show_partitions(spark, entry, spec_values(partition) if partition is not None else None)
    unset = _UNSET.match(text)
    if unset:
        entry = resolver.hudi_entry(exp.to_table(unset["table"], dialect="spark"))
        if entry is None:
            return None
        keys = sqlglot.parse_one(f"SELECT ({unset['keys']}, 0)", read="spark").expressions[0].expressions[:-1]
        unset_properties(spark, entry, [_key(k) for k in keys], bool(unset["exists"]))
        return _empty(spark)
    return None


def _key(node: exp.Expression) -> str:
    if isinstance(node, (exp.Literal, exp.Identifier, exp.Var)):
        return str(node.this)
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return node.sql("spark").replace("`", "")


def _empty(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame([], T.StructType([]))
