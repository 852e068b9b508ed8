"""The Hudi options of a SQL write, combined in Hudi's order (ProvidesHoodieConfig.combineOptions, 0.14/0.15).

From lowest to highest precedence:

1. the table's TBLPROPERTIES in the catalog (SQL aliases such as `primaryKey`, `type` mapped to `hoodie.*` keys);
2. the session's settings: every `hoodie.*` key of the Spark session's SQL conf, i.e. what `SET hoodie.x = y`
   stored (through `pyhudi.sql` or plain `spark.sql`) and `RESET` has not removed;
3. statement options: the `options` argument of `pyhudi.sql(spark, text, options)`, then the options comment
   `/* pyhudi.options {"hoodie.x": "y"} */` that opens a statement (that statement only);
4. the table's identity from hoodie.properties (name, type, record key, ordering and partition fields, key
   generator): Hudi passes these as overriding options, so no setting can change them.

SET and RESET themselves run in Spark unchanged, so the state is Spark's own (per SparkSession, like Hudi's).
Statement options live in a context variable: each thread (a dbt thread) sees only its own statement's options.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from types import MappingProxyType
from collections.abc import Iterator, Mapping

from pyspark.sql import SparkSession

from pyhudi import config as C
from pyhudi.errors import SqlError

OPTIONS_COMMENT = "pyhudi.options"

# the default is a read-only empty mapping: one object shared by every context must never be mutated
_statement: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar("pyhudi_statement_options",
                                                                           default=MappingProxyType({}))


def session_options(spark: SparkSession) -> dict[str, str]:
    """The `hoodie.*` settings of the Spark session (Hudi's filterHoodieConfigs over the SQL conf)."""
    return {k: v for k, v in spark.conf.getAll.items() if k.startswith("hoodie.")}


def statement_options() -> dict[str, str]:
    """The options of the statement running in this thread (empty outside `pyhudi.sql`)."""
    return dict(_statement.get())


@contextlib.contextmanager
def scoped(options: Mapping[str, str] | None) -> Iterator[None]:
    """Apply `options` to every Hudi write inside the block, over the enclosing statement options."""
    token = _statement.set({**_statement.get(), **C.normalize_options(options)})
    try:
        yield
    finally:
        _statement.reset(token)


def combine(spark: SparkSession, catalog_properties: Mapping[str, str], identity: Mapping[str, str]) -> dict:
    """The write options of one statement on one table, in Hudi's precedence (see the module docstring)."""
    options = {k: v for k, v in C.normalize_options(catalog_properties).items()
               if k.startswith("hoodie.") and not k.startswith("hoodie.table.")}
    options.update(C.normalize_options(session_options(spark)))
    options.update(statement_options())
    options.update(identity)
    return options


def parse_options_comment(body: str, statement: str) -> dict[str, str]:
    """The options of a `/* pyhudi.options {...} */` comment body (the text after `pyhudi.options`)."""
    where = " ".join(statement.split())[:120]
    fix = ('write it as /* pyhudi.options {"hoodie.datasource.overwrite.mode": "dynamic"} */: one JSON object '
           "whose keys and values are strings")
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise SqlError(f"the {OPTIONS_COMMENT} comment of statement `{where}` is not valid JSON ({exc}); "
                       f"{fix}") from None
    if not isinstance(value, dict):
        raise SqlError(f"the {OPTIONS_COMMENT} comment of statement `{where}` holds a {type(value).__name__}, "
                       f"not a JSON object; {fix}")
    bad = [k for k, v in value.items() if not isinstance(v, str)]
    if bad:
        raise SqlError(f"the {OPTIONS_COMMENT} comment of statement `{where}` gives non-string value(s) for "
                       f"{', '.join(bad)}; {fix} (e.g. \"true\", \"4\")")
    return value
