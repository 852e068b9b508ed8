"""What the SQL layer knows about a catalog table (CatalogEntry), and the pure helpers both ways of reaching the
session catalog share: through the JVM on a classic session (pyhudi.sqlext.catalog) and through the public API on
Spark Connect (pyhudi.sqlext.catalog_connect)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

from pyspark.sql import types as T

from pyhudi.file_group.base_file import META_COLUMNS

BASE_PATH_KEY = "hudi.base.path"   # read by pyhudi.reader.datasource when Spark passes no `path` option
PROVIDER = "hudi"


@dataclass
class CatalogEntry:
    """What the catalog knows about one table."""

    database: str
    name: str
    provider: str
    location: str                     # a local path or a URI pyhudi's Storage understands
    managed: bool
    properties: dict = field(default_factory=dict)
    partition_columns: list = field(default_factory=list)
    schema: T.StructType | None = None
    comment: str | None = None        # the table comment (CREATE ... COMMENT, SET TBLPROPERTIES ('comment'=...))

    @property
    def is_hudi(self) -> bool:
        return self.provider.lower() == PROVIDER

    @property
    def qualified(self) -> str:
        return f"`{self.database}`.`{self.name}`"

    @property
    def data_fields(self) -> list[T.StructField]:
        """Columns a writer supplies (catalog order: partition columns last, as Spark and Hudi keep them)."""
        return [f for f in self.schema.fields if f.name not in META_COLUMNS]


def location_to_path(uri: str) -> str:
    """`file:/tmp/x` (how the metastore keeps local locations) -> `/tmp/x`; other URIs stay as they are."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return unquote(parsed.path) if parsed.scheme else uri
    return uri


def sql_string(text: str) -> str:
    return "'" + str(text).replace("\\", "\\\\").replace("'", "\\'") + "'"


def create_clauses(location: str | None, comment: str | None, properties: dict | None) -> str:
    """The LOCATION, COMMENT and TBLPROPERTIES clauses of a CREATE TABLE (each only when given)."""
    text = ""
    if location is not None:
        text += f" LOCATION {sql_string(location)}"
    if comment is not None:
        text += f" COMMENT {sql_string(comment)}"
    if properties:
        text += " TBLPROPERTIES (" + ", ".join(f"{sql_string(k)} = {sql_string(v)}"
                                                for k, v in properties.items()) + ")"
    return text


def catalog_schema(data_schema: T.StructType) -> T.StructType:
    """Hudi's catalog schema: the meta columns, then the data columns."""
    meta = [T.StructField(c, T.StringType(), True) for c in META_COLUMNS]
    return T.StructType(meta + [f for f in data_schema.fields if f.name not in META_COLUMNS])


def with_base_path(data_schema: T.StructType, location: str) -> T.StructType:
    """`data_schema` with the base path recorded in its first column's metadata."""
    fields = list(data_schema.fields)
    first = fields[0]
    fields[0] = T.StructField(first.name, first.dataType, first.nullable,
                              {**(first.metadata or {}), BASE_PATH_KEY: location})
    return T.StructType(fields)
