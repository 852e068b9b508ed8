"""Hudi's built-in key generators over Arrow batches.

One :class:`KeyGenerator` type covers them all; what differs between Hudi's classes is

* how the record key is built -- ``simple`` (the value of the one key field) or ``composite``
  (``f1:v1,f2:v2``; a null part is ``__null__``, an empty one ``__empty__``), and
* which partition *parts* make the partition path -- a plain field value (``simple``) or a formatted timestamp
  (``timestamp``), joined by ``/``; a null/empty plain value is ``__HIVE_DEFAULT_PARTITION__``.

=============================  ==============================  =========================================
Hudi class                     record key                      partition path
=============================  ==============================  =========================================
SimpleKeyGenerator             simple (exactly one field)      one simple part
ComplexKeyGenerator            composite (one field: simple,   simple parts (none: ``""``)
                               see ``COMPLEX_KEYGEN_...``)
NonpartitionedKeyGenerator     one field: simple, else comp.   ``""``
TimestampBasedKeyGenerator     simple (exactly one field)      one timestamp part
CustomKeyGenerator             one field: simple, else comp.   ``field:simple`` / ``field:timestamp`` parts
GlobalDeleteKeyGenerator       composite                       ``""``
=============================  ==============================  =========================================

``org.apache.spark.sql.hudi.command.SqlKeyGenerator`` (what Hudi's Spark SQL writes use) stands for the class in
``hoodie.sql.origin.keygen.class``; with ``hoodie.sql.partition.schema`` it also rewrites TIMESTAMP partition values
to ``yyyy-MM-dd HH:mm:ss`` (escaped) as Hudi's SQL writes do.

Generators hold only their configuration (strings, tuples, frozen dataclasses), so they pickle into Spark
executors and are safe to share between threads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.errors import ConfigError, PartitionPathError, RecordKeyError
from pyhudi.keygen import joda
from pyhudi.keygen.pathcodec import DEFAULT_PARTITION_PATH, escape_array, unescape_path_name
from pyhudi.keygen.timestamp import TimestampOptions, TimestampValueError, timestamp_partition_values
from pyhudi.keygen.values import FieldNotFound, UnsupportedKeyType, get_field, timestamp_micros, to_java_strings
from pyhudi.keygen.options import (EMPTY_RECORDKEY_PLACEHOLDER, NULL_RECORDKEY_PLACEHOLDER, PARTITIONPATH_FIELD,
                                   RECORDKEY_FIELD, table_label)


# ---------------------------------------------------------------------------------------------- partition parts


@dataclass(frozen=True)
class SimplePart:
    field: str
    segments: int = 1


@dataclass(frozen=True)
class TimestampPart:
    field: str
    options: TimestampOptions

    @property
    def segments(self) -> int:
        return self.options.path_segments


_TRAVERSAL = r"(^|/)\.{1,2}(/|$)"


class KeyGenerator:
    """Computes ``_hoodie_record_key`` and ``_hoodie_partition_path`` for Arrow batches, like Hudi's key generators.

    Build one with :func:`build_key_generator`. Attributes:

    ``java_class``
        the Hudi class name (goes into ``hoodie.table.keygenerator.class``).
    ``key_generator_type``
        ``SIMPLE``, ``COMPLEX``, ``NON_PARTITION``, ``TIMESTAMP``, ``CUSTOM`` or ``GLOBAL_DELETE``.
    ``record_key_fields`` / ``partition_path_fields``
        source field names (``a.b`` for nested fields); for Custom, without the ``:simple``/``:timestamp`` types.
    ``hive_style_partitioning`` / ``url_encode_partition_path``
        the two path options.

    Columns are looked up by name (``a.b`` reaches into structs); values are rendered as Java's ``toString`` of
    the Avro value Hudi sees (see :mod:`pyhudi.keygen.values`).
    """

    def __init__(self, *, java_class: str, key_generator_type: str, record_key_fields: list[str],
                 record_key_mode: str, parts: list, hive_style_partitioning: bool,
                 url_encode_partition_path: bool, consistent_logical_timestamp: bool,
                 table_name: str | None, sql_timestamp_parts: tuple[int, ...] = (), sql_partition_count: int = 0):
        self.java_class = java_class
        self.key_generator_type = key_generator_type
        self.record_key_fields = list(record_key_fields)
        self.partition_path_fields = [p.field for p in parts]
        self.hive_style_partitioning = hive_style_partitioning
        self.url_encode_partition_path = url_encode_partition_path
        self.consistent_logical_timestamp = consistent_logical_timestamp
        self.table_name = table_name
        self._record_key_mode = record_key_mode  # "simple" | "composite"
        self._parts = tuple(parts)
        # Spark SQL writes (SqlKeyGenerator): parts whose column is a SQL TIMESTAMP are rewritten to
        # "yyyy-MM-dd HH:mm:ss", url-escaped, when the path has as many segments as the partition schema has fields
        self._sql_timestamp_parts = tuple(sql_timestamp_parts)
        self._sql_partition_count = sql_partition_count

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(java_class={self.java_class!r}, record_key_fields={self.record_key_fields}, "
                f"partition_path_fields={self.partition_path_fields}, "
                f"hive_style_partitioning={self.hive_style_partitioning}, "
                f"url_encode_partition_path={self.url_encode_partition_path})")

    # ------------------------------------------------------------------ helpers

    def _where(self) -> str:
        return table_label(self.table_name)

    def _strings(self, data, field: str, role: str) -> pa.Array:
        error = RecordKeyError if role == "record key" else PartitionPathError
        option = RECORDKEY_FIELD if role == "record key" else PARTITIONPATH_FIELD
        try:
            arr = get_field(data, field)
        except FieldNotFound as exc:
            raise error(
                f"{self._where()}: {role} field '{field}' is not in the data. Available columns: "
                f"{', '.join(exc.available) or '(none)'}. Fix {option} (or add the column)."
            ) from None
        try:
            return to_java_strings(arr, self.consistent_logical_timestamp)
        except UnsupportedKeyType as exc:
            raise error(
                f"{self._where()}: {role} field '{field}' has type {exc.arrow_type}, which Hudi cannot turn into "
                f"a {role} string; cast it to a string or number first, or choose another field in {option}."
            ) from None

    @staticmethod
    def _first_bad(mask: pa.Array) -> tuple[int, int]:
        bad = mask.to_numpy(zero_copy_only=False)
        return int(bad.sum()), int(np.argmax(bad))

    # ------------------------------------------------------------------ record keys

    def record_keys(self, data: pa.RecordBatch | pa.Table) -> pa.StringArray:
        """``_hoodie_record_key`` of every row (a string array without nulls)."""
        n = data.num_rows
        if not self.record_key_fields:
            raise ConfigError(
                f"{self._where()}: no record key field is configured; set {RECORDKEY_FIELD} "
                "(SQL: primaryKey) or let the writer auto-generate record keys.")
        if self._record_key_mode == "simple":
            field = self.record_key_fields[0]
            values = self._strings(data, field, "record key")
            bad = pc.or_kleene(pc.is_null(values), pc.fill_null(pc.equal(values, ""), False))
            if n and pc.any(bad).as_py():
                count, first = self._first_bad(bad)
                raise RecordKeyError(
                    f"{self._where()}: record key field '{field}' is null or empty in {count} of {n} rows "
                    f"(first at row {first}). Hudi needs a non-empty record key for every record: fill or filter "
                    f"those rows, or choose another field in {RECORDKEY_FIELD}.",
                    table=self.table_name, field=field, rows=count, first_row=first)
            return values
        pieces: list = []
        all_bad = None
        for i, field in enumerate(self.record_key_fields):
            values = self._strings(data, field, "record key")
            is_null = pc.is_null(values)
            is_empty = pc.fill_null(pc.equal(values, ""), False)
            rendered = pc.if_else(is_null, NULL_RECORDKEY_PLACEHOLDER,
                                  pc.if_else(is_empty, EMPTY_RECORDKEY_PLACEHOLDER, values))
            part_bad = pc.or_(is_null, is_empty)
            all_bad = part_bad if all_bad is None else pc.and_(all_bad, part_bad)
            if i:
                pieces.append(pa.scalar(","))
            pieces.append(pa.scalar(f"{field}:"))
            pieces.append(rendered)
        if n and pc.any(all_bad).as_py():
            count, first = self._first_bad(all_bad)
            raise RecordKeyError(
                f"{self._where()}: all record key fields ({', '.join(self.record_key_fields)}) are null or empty "
                f"in {count} of {n} rows (first at row {first}). Hudi needs at least one non-empty key part: fill "
                f"or filter those rows, or change {RECORDKEY_FIELD}.",
                table=self.table_name, field=",".join(self.record_key_fields), rows=count, first_row=first)
        if n == 0:
            return pa.array([], pa.string())
        return pc.binary_join_element_wise(*pieces, "")

    # ------------------------------------------------------------------ partition paths

    def _render_part(self, data, part) -> pa.Array:
        if isinstance(part, TimestampPart):
            try:
                arr = get_field(data, part.field)
            except FieldNotFound as exc:
                raise PartitionPathError(
                    f"{self._where()}: partition path field '{part.field}' is not in the data. Available columns: "
                    f"{', '.join(exc.available) or '(none)'}. Fix {PARTITIONPATH_FIELD} (or add the column)."
                ) from None
            try:
                values = timestamp_partition_values(arr, part.options)
            except TimestampValueError as exc:
                raise PartitionPathError(
                    f"{self._where()}: cannot build the partition path from timestamp field '{part.field}': {exc}"
                ) from None
            if self.url_encode_partition_path:
                values = escape_array(values)
        else:
            values = self._strings(data, part.field, "partition path")
            missing = pc.or_kleene(pc.is_null(values), pc.fill_null(pc.equal(values, ""), False))
            if self.url_encode_partition_path:
                values = escape_array(values)
            values = pc.if_else(missing, DEFAULT_PARTITION_PATH, values)
        if self.hive_style_partitioning:
            values = pc.binary_join_element_wise(pa.scalar(f"{part.field}="), values, "")
        return values

    def partition_paths(self, data: pa.RecordBatch | pa.Table) -> pa.StringArray:
        """``_hoodie_partition_path`` of every row (``""`` for non-partitioned tables)."""
        n = data.num_rows
        if not self._parts:
            return pa.array([""] * n, pa.string())
        if n == 0:
            return pa.array([], pa.string())
        rendered = [self._render_part(data, part) for part in self._parts]
        paths = self._join(rendered)
        if self._sql_timestamp_parts:
            converted = list(rendered)
            for i in self._sql_timestamp_parts:
                converted[i] = self._sql_timestamp_part(data, self._parts[i], rendered[i])
            segments = pc.add(pc.count_substring(paths, "/"), 1)
            paths = pc.if_else(pc.equal(segments, self._sql_partition_count), self._join(converted), paths)
        traversal = pc.match_substring_regex(paths, _TRAVERSAL)
        if pc.any(traversal).as_py():
            count, first = self._first_bad(traversal)
            raise PartitionPathError(
                f"{self._where()}: partition path '{paths[first].as_py()}' (row {first}, {count} rows in all) has a "
                f"'.' or '..' segment, which would put files outside their partition directory. Clean the values "
                f"of {', '.join(self.partition_path_fields)} first.")
        return paths

    @staticmethod
    def _join(rendered: list) -> pa.Array:
        if len(rendered) == 1:
            return rendered[0]
        pieces: list = []
        for i, values in enumerate(rendered):
            if i:
                pieces.append(pa.scalar("/"))
            pieces.append(values)
        return pc.binary_join_element_wise(*pieces, "")

    def _sql_timestamp_part(self, data, part, rendered: pa.Array) -> pa.Array:
        """SqlKeyGenerator.convertPartitionPathToSqlType for one TIMESTAMP partition column."""
        arr = get_field(data, part.field)
        if not pa.types.is_timestamp(arr.type):
            return rendered
        micros = timestamp_micros(arr)
        millis = pc.divide(micros, 1000)  # MILLISECONDS.convert(micros, MICROSECONDS): toward zero
        valid = pc.is_valid(millis).to_numpy(zero_copy_only=False)
        # Joda prints in the JVM's default zone: Spark's session zone (the Arrow column's zone), else UTC
        text = joda.format_millis(millis.fill_null(0).to_numpy(zero_copy_only=False), "yyyy-MM-dd HH:mm:ss",
                                  zone=arr.type.tz and joda.resolve_zone(arr.type.tz))
        text = escape_array(text)
        if self.hive_style_partitioning:
            text = pc.binary_join_element_wise(pa.scalar(f"{part.field}="), text, "")
        # Hudi fails on a null TIMESTAMP partition value here; pyhudi keeps the default partition instead
        return pc.if_else(pa.array(valid), text, rendered)

    def keys(self, data: pa.RecordBatch | pa.Table) -> tuple[pa.StringArray, pa.StringArray]:
        """``(record_keys(data), partition_paths(data))``."""
        return self.record_keys(data), self.partition_paths(data)

    # ------------------------------------------------------------------ readers

    def partition_values(self, partition_path: str) -> dict[str, str | None]:
        """The field values encoded in a partition path (the inverse of :meth:`partition_paths`).

        ``"region=us/2024"``-style hive prefixes are checked and stripped, url-encoding is undone, and
        ``__HIVE_DEFAULT_PARTITION__`` comes back as ``None`` (the value was null or empty). A timestamp part comes
        back as its formatted text (e.g. ``"2024/01/05"``).
        """
        if not self._parts:
            if partition_path in ("", None):
                return {}
            raise PartitionPathError(
                f"{self._where()} is not partitioned ({self.java_class}), but got partition path "
                f"'{partition_path}'.")
        path = partition_path.strip("/")
        if len(self._parts) == 1:
            texts = [path]
        else:
            segments = path.split("/")
            expected = sum(p.segments for p in self._parts)
            if len(segments) != expected:
                raise PartitionPathError(
                    f"{self._where()}: partition path '{partition_path}' has {len(segments)} segments but fields "
                    f"{', '.join(self.partition_path_fields)} make {expected}; is it a partition of this table?")
            texts, at = [], 0
            for part in self._parts:
                texts.append("/".join(segments[at:at + part.segments]))
                at += part.segments
        values: dict[str, str | None] = {}
        for part, text in zip(self._parts, texts):
            if self.hive_style_partitioning:
                prefix = f"{part.field}="
                if not text.startswith(prefix):
                    raise PartitionPathError(
                        f"{self._where()}: partition path '{partition_path}' should name field '{part.field}' "
                        f"hive-style ('{prefix}...'); check hoodie.datasource.write.hive_style_partitioning.")
                text = text[len(prefix):]
            if text == DEFAULT_PARTITION_PATH:
                values[part.field] = None
            else:
                values[part.field] = unescape_path_name(text) if self.url_encode_partition_path else text
        return values
