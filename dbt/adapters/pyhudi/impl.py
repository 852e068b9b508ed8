"""The pyhudi dbt adapter: dbt-spark's adapter on an in-process Spark session whose SQL goes through pyhudi.

Materializations emit Hudi SQL (CREATE TABLE ... USING hudi, INSERT INTO/OVERWRITE, MERGE INTO, CALL ...) that
the SQL layer (pyhudi.sql) runs on the engine; this module only supplies what Jinja cannot do well: the Hudi table
options of a model, Hudi detection in relation listings, and CALL argument rendering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional

from dbt.adapters.base.meta import available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.spark.impl import SparkAdapter, SparkConfig
from dbt_common.exceptions import CompilationError

from pyhudi import config as hudi_config

from dbt.adapters.pyhudi import model_config
from dbt.adapters.pyhudi.connections import PyhudiConnectionManager
from dbt.adapters.pyhudi.relation import PyhudiRelation, is_hudi_information

# the incremental strategies pyhudi ships, each a macro pyhudi__get_incremental_<name>_sql (macros/materializations/
# incremental_strategy/); a project adds its own as get_incremental_<name>_sql
INCREMENTAL_STRATEGIES = ("append", "merge", "insert_overwrite", "microbatch")

TABLE_TYPES = {"cow": "cow", "copy_on_write": "cow", "mor": "mor", "merge_on_read": "mor"}

# dbt-spark / Hudi SQL spellings -> the option name pyhudi's SQL layer documents (Hudi's SQL names): pyhudi.config
OPTION_ALIASES = hudi_config.DBT_OPTION_ALIASES


@dataclass
class PyhudiConfig(SparkConfig):
    file_format: str = "hudi"
    table_type: Optional[str] = None          # cow | mor
    precombine_key: Optional[str] = None      # Hudi's preCombineField: the larger value wins on a key clash
    index_type: Optional[str] = None          # hoodie.index.type
    hudi_options: Optional[Dict[str, Any]] = None


def _key_text(key: Any) -> Optional[str]:
    if key is None:
        return None
    if isinstance(key, (list, tuple)):
        return ",".join(str(k).strip() for k in key) or None
    return ",".join(part.strip() for part in str(key).split(",")) or None


class PyhudiAdapter(SparkAdapter):
    Relation = PyhudiRelation  # type: ignore[assignment]
    ConnectionManager = PyhudiConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs = PyhudiConfig  # type: ignore[assignment]

    @classmethod
    def type(cls) -> str:
        return "pyhudi"

    def valid_incremental_strategies(self) -> List[str]:
        """The strategies pyhudi ships (macros pyhudi__get_incremental_<name>_sql); the one list of them."""
        return list(INCREMENTAL_STRATEGIES)

    def get_incremental_strategy_macro(self, model_context: Any, strategy: Optional[str]) -> Any:
        """dbt's lookup of `get_incremental_<strategy>_sql`, with an error that names the model and the strategies
        it can use: pyhudi's, or a custom one the project defines as a macro."""
        name = "default" if strategy is None else str(strategy)
        macro_name = f"get_incremental_{name.replace('+', '_')}_sql"
        shipped = name in self.valid_incremental_strategies() or name == "default"
        if not shipped and (name in self.builtin_incremental_strategies() or macro_name not in model_context):
            model = model_context.get("model")
            model_name = model.get("name") if isinstance(model, dict) else getattr(model, "name", "(this model)")
            raise CompilationError(
                f"pyhudi: model {model_name}: unknown incremental_strategy '{name}'; use one of "
                f"{', '.join(self.valid_incremental_strategies())}, or define a macro {macro_name}(arg_dict) "
                "in the project (a custom strategy)")
        return super().get_incremental_strategy_macro(model_context, strategy)

    # ---------------------------------------------------------------- relations

    def _build_spark_relation_list(self, row_list, relation_info_func):
        # SHOW TABLE EXTENDED IN <schema> also lists the session's temporary views (no schema); dbt runs in the
        # session, so a __dbt_tmp view left by a failed model would otherwise show up in every schema (and break
        # `docs generate`, whose catalog needs a schema per relation).
        relations = [r for r in super()._build_spark_relation_list(row_list, relation_info_func) if r.schema]
        return [r.incorporate(is_hudi=True) if not r.is_hudi and is_hudi_information(r.information) else r
                for r in relations]

    def _get_columns_for_catalog(self, relation) -> Iterable[Dict[str, Any]]:
        stats = self._hudi_stats(relation) if getattr(relation, "is_hudi", False) else {}
        comment, column_comments = self._catalog_comments(relation)
        for column in super()._get_columns_for_catalog(relation):
            name = column.get("column_name")
            if name not in self.HUDI_METADATA_COLUMNS:
                yield {**column, **stats, "table_comment": comment,
                       "column_comment": column_comments.get(name)}

    def _spark(self):
        """The Spark session of this thread's connection."""
        return self.connections.open(self.connections.get_thread_connection()).handle.spark

    def _catalog_comments(self, relation) -> tuple:
        """`dbt docs generate`: the table's and its columns' comments (what persist_docs wrote), from the relation's
        SHOW TABLE EXTENDED text and the session's catalog (metadata only; dbt-spark's catalog reports none)."""
        try:
            columns = self._spark().catalog.listColumns(f"`{relation.schema}`.`{relation.identifier}`")
        except Exception:  # noqa: BLE001 - a relation dropped meanwhile: its catalog entry has no comments
            columns = []
        return table_comment(relation.information or ""), {c.name: c.description for c in columns if c.description}

    def _hudi_stats(self, relation) -> Dict[str, Any]:
        """`dbt docs generate`: the Hudi table's type, key, last commit, files and bytes (metadata only)."""
        from dbt.adapters.pyhudi.catalog_stats import hudi_table_stats
        from pyhudi.sqlext import catalog
        entry = catalog.lookup(self._spark(), None, relation.schema, relation.identifier)
        return hudi_table_stats(entry.location) if entry is not None and entry.is_hudi else {}

    # ---------------------------------------------------------------- Hudi options of a model

    @available
    def hudi_table_options(self, config: Any, record_key: Optional[str] = None,
                           target_defaults: Optional[Dict[str, Any]] = None,
                           model_name: Optional[str] = None) -> Dict[str, str]:
        """The TBLPROPERTIES of the Hudi table a model creates.

        Later sources win: the profile's `hudi_options`, dbt-spark's `options`, `hudi_options`, then the
        first-class configs (`table_type`, `unique_key`, `precombine_key`, `index_type`). `record_key` overrides
        the key (snapshots are keyed by dbt_scd_id, not by the source's unique_key).
        """
        merged: Dict[str, str] = {}

        def put(source: Optional[Dict[str, Any]], label: str) -> None:
            if not source:
                return
            if not isinstance(source, dict):
                raise CompilationError(f"pyhudi: `{label}` must be a mapping of option names to values, "
                                       f"got {source!r}")
            for name, value in source.items():
                if value is None:
                    continue
                key = OPTION_ALIASES.get(str(name).lower(), str(name))
                merged[key] = _key_text(value) if key == hudi_config.PRIMARY_KEY else str(value)

        defaults = target_defaults if target_defaults is not None else self._profile_hudi_options()
        put(defaults, "hudi_options (profile)")
        put(config.get("options"), "options")
        put(config.get("hudi_options"), "hudi_options")

        unique_key = _key_text(config.get("unique_key"))
        if record_key is not None:
            merged[hudi_config.PRIMARY_KEY] = _key_text(record_key)
        elif unique_key:
            given = merged.get(hudi_config.PRIMARY_KEY)
            if given and given.replace(" ", "") != unique_key.replace(" ", ""):
                raise CompilationError(
                    f"pyhudi: unique_key ({unique_key}) and options primaryKey ({given}) name different columns; "
                    "the Hudi record key is the model's unique_key: drop primaryKey or make them equal.")
            merged[hudi_config.PRIMARY_KEY] = unique_key

        table_type = config.get("table_type")
        if table_type is not None:
            merged["type"] = str(table_type)
        if "type" in merged:
            normal = TABLE_TYPES.get(merged["type"].strip().lower())
            if normal is None:
                raise CompilationError(f"pyhudi: table_type/type must be 'cow' or 'mor', got '{merged['type']}'")
            merged["type"] = normal
        if config.get("precombine_key"):
            merged[hudi_config.PRECOMBINE_FIELD] = str(config.get("precombine_key"))
        if config.get("index_type"):
            merged[hudi_config.INDEX_TYPE.key] = str(config.get("index_type")).upper()
        for name, value in (config.get("tblproperties") or {}).items():
            merged.setdefault(str(name), str(value))
        model_config.check_overwrite_mode(model_name or "(this model)", merged)
        return merged

    def _profile_hudi_options(self) -> Dict[str, str]:
        creds = getattr(self.config, "credentials", None)
        return dict(getattr(creds, "hudi_options", None) or {})

    @available
    def hudi_merge_key(self, config: Any) -> List[str]:
        """The columns a merge matches on: unique_key, else the Hudi primaryKey option. None: dbt-spark's merge
        without a key matches nothing (`on false`), so every row is appended."""
        key = _key_text(config.get("unique_key"))
        if not key:
            key = self.hudi_table_options(config).get(hudi_config.PRIMARY_KEY)
        return [k for k in (key or "").split(",") if k]

    # ---------------------------------------------------------------- a model's columns

    @available
    def hudi_partition_by(self, config: Any) -> List[str]:
        return model_config.column_list(config.get("partition_by"))

    @available
    def hudi_model_columns(self, model_name: str, relation: Any, config: Any, check_key: bool = True) -> List[Any]:
        """The columns of the model's query (a temporary view) in the Hudi table's order (partition columns
        last), after checking that partition_by and unique_key name selected columns."""
        columns = [c for c in self.get_columns_in_relation(relation)
                   if c.name.lower() not in self.HUDI_METADATA_COLUMNS]
        model_config.check_columns(model_name, columns, config.get("partition_by"),
                                   config.get("unique_key") if check_key else None)
        return model_config.partition_last(columns, config.get("partition_by"))

    @available
    def hudi_check_seed_columns(self, model_name: str, names: List[str], config: Any) -> None:
        """A seed's CSV header must hold its partition_by columns and its record key (options primaryKey)."""
        key = self.hudi_table_options(config, model_name=model_name).get("primaryKey")
        model_config.check_columns(model_name, names, config.get("partition_by"), key)

    @available
    def hudi_partition_columns_of(self, relation: Any) -> List[str]:
        """The partition columns of an existing table, as its catalog entry declares them (DESCRIBE does not
        show them for data source tables)."""
        from dbt.adapters.pyhudi.session import partition_columns
        return partition_columns(self._spark(), relation.schema, relation.identifier)

    @available
    def hudi_options_comment(self, options: Dict[str, Any]) -> str:
        return model_config.options_comment(options)

    # ---------------------------------------------------------------- CALL procedures

    @available
    def hudi_call_sql(self, procedure: str, args: Dict[str, Any]) -> str:
        """`CALL procedure(name => value, ...)` with Hudi's argument names; None values are left out."""
        rendered = []
        for name, value in args.items():
            if value is None:
                continue
            rendered.append(f"{name} => {_call_literal(value)}")
        return f"call {procedure}({', '.join(rendered)})"

    @available
    def hudi_table_name(self, table: str, schema: Optional[str] = None) -> str:
        """`orders` -> `<target schema>.orders`; names with a schema or paths stay as given."""
        table = str(table).strip()
        if "." in table or "/" in table or not schema:
            return table
        return f"{schema}.{table}"

    # ---------------------------------------------------------------- Python models

    @property
    def default_python_submission_method(self) -> str:
        from dbt.adapters.pyhudi.python_model import SUBMISSION_METHOD
        return SUBMISSION_METHOD

    @property
    def python_submission_helpers(self) -> Dict[str, Any]:
        """One way to run a Python model: in this process, on the thread's Spark session (python_model.py)."""
        from dbt.adapters.pyhudi.python_model import SUBMISSION_METHOD, SessionPythonJob

        def session_job(parsed_model: Dict[str, Any], _credentials: Any) -> SessionPythonJob:
            return SessionPythonJob(parsed_model, self._spark())
        return {SUBMISSION_METHOD: session_job}

    def generate_python_submission_response(self, submission_result: Any) -> AdapterResponse:
        from dbt.adapters.pyhudi.python_model import submission_response
        return submission_response(submission_result)

    @classmethod
    def _get_adapter_specific_run_info(cls, config) -> Dict[str, Any]:
        return {"adapter_type": "pyhudi", "table_format": "hudi"}


def _call_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, dict):
        value = ",".join(f"{k}={v}" for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


# The lines SHOW TABLE EXTENDED prints after a table's `Comment: ...` (CatalogTable.toLinkedHashMap), which end it.
_AFTER_COMMENT = ("Collation: ", "View Text: ", "View Original Text: ", "View Schema Mode: ",
                  "View Catalog and Namespace: ", "View Query Output Columns: ", "Table Properties: ", "Statistics: ",
                  "Location: ", "Serde Library: ", "InputFormat: ", "Partition Provider: ", "Schema: ")


def table_comment(information: str) -> Optional[str]:
    """A table's comment in its SHOW TABLE EXTENDED text (which may span lines), or None."""
    lines = information.split("\n")
    for at, line in enumerate(lines):
        if line.startswith("Comment: "):
            text = [line[len("Comment: "):]]
            for following in lines[at + 1:]:
                if following.startswith(_AFTER_COMMENT):
                    break
                text.append(following)
            return "\n".join(text)
    return None
