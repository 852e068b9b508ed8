{#-- incremental on Hudi tables, with dbt-spark's semantics (Hudi operation in brackets):
      merge            MERGE INTO on unique_key                       [upsert]
                       without any key: every row appended, as dbt-spark's `on false`  [insert]
      append           INSERT INTO                                    [Hudi's INSERT INTO rule]
      insert_overwrite INSERT OVERWRITE: with partition_by the partitions written (dynamic), else the table (static)
                                                                      [insert_overwrite / insert_overwrite_table]
      microbatch       insert_overwrite of each batch's partitions; needs partition_by
    Default: merge when the model has a unique_key, else append. The overwrite mode travels with its statement
    (`/* pyhudi.options ... */`), never as session state.
    Each strategy is a macro `pyhudi__get_incremental_<strategy>_sql(arg_dict)` (incremental_strategy/), reached the
    way dbt reaches it: adapter.get_incremental_strategy_macro -> get_incremental_<strategy>_sql -> dispatch. A
    project's own `get_incremental_<name>_sql(arg_dict)` is a custom strategy (`incremental_strategy='<name>'`).
    The strategies pyhudi ships are listed once: PyhudiAdapter.valid_incremental_strategies. --#}

{#-- The model's strategy, checked before anything runs: a known name (or a project macro for a custom one), and
     the configs a built-in strategy needs. --#}
{% macro pyhudi_incremental_strategy(file_format) %}
  {%- set strategy = config.get('incremental_strategy') -%}
  {%- if strategy is none or strategy == 'default' -%}
    {%- set strategy = 'merge' if (file_format == 'hudi' and config.get('unique_key')) else 'append' -%}
  {%- endif -%}
  {%- if strategy == 'merge' and file_format not in ['hudi', 'delta', 'iceberg'] -%}
    {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": incremental_strategy 'merge' needs file_format 'hudi' (got '" ~ file_format ~ "')") }}
  {%- endif -%}
  {%- if strategy == 'microbatch' and not config.get('partition_by') -%}
    {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": incremental_strategy 'microbatch' overwrites each batch's partitions and needs partition_by (a column of the batch's grain, e.g. the event date)") }}
  {%- endif -%}
  {{ return(strategy) }}
{% endmacro %}


{#-- An incremental run writes into the table as it was created: partition_by must still name its partitions. --#}
{% macro pyhudi_check_partitions(relation, partition_by) %}
  {%- set existing = adapter.hudi_partition_columns_of(relation) -%}
  {%- if (existing | map('lower') | list) != (partition_by | map('lower') | list) -%}
    {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": partition_by [" ~ (partition_by | join(', ')) ~ "] differs from the partition columns of " ~ relation ~ " [" ~ (existing | join(', ')) ~ "]; a Hudi table's partitioning is fixed when it is created: rebuild it with --full-refresh. Nothing was written.") }}
  {%- endif -%}
{% endmacro %}


{% materialization incremental, adapter='pyhudi', supported_languages=['sql', 'python'] -%}
  {%- set language = model['language'] -%}
  {%- set file_format = dbt_spark_validate_get_file_format(pyhudi_file_format()) -%}
  {%- set strategy = pyhudi_incremental_strategy(file_format) -%}
  {%- set strategy_sql_macro = adapter.get_incremental_strategy_macro(context, strategy) -%}  {#-- unknown: fails here, before anything runs --#}
  {%- set grant_config = config.get('grants') -%}
  {%- set partition_by = adapter.hudi_partition_by(config) -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- set incremental_predicates = config.get('predicates', none) or config.get('incremental_predicates', none) -%}
  {%- set target_relation = this.incorporate(type='table', is_hudi=(file_format == 'hudi')) -%}  {#-- cached as Hudi for later batches --#}
  {%- set existing_relation = load_relation(this) -%}
  {%- set tmp_relation = make_temp_relation(this, '__dbt_tmp') -%}

  {{ run_hooks(pre_hooks) }}

  {#-- the model's rows as a temporary view: its query, or a Python model's DataFrame (python_model.sql) --#}
  {%- set model_code = pyhudi_py_write_view(compiled_code, tmp_relation) if language == 'python' else create_temporary_view(tmp_relation, compiled_code) -%}
  {%- call statement('create_tmp_relation', language=language) -%}
    {{ model_code }}
  {%- endcall -%}
  {#-- checked before anything is written: partition_by / unique_key / clustered_by name selected columns --#}
  {%- set columns = pyhudi_model_columns(tmp_relation) -%}

  {%- if existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
    {%- if existing_relation is not none -%}
      {% do adapter.drop_relation(existing_relation) %}
    {%- endif -%}
    {%- call statement('main') -%}
      {{ create_table_as(False, target_relation, pyhudi_select_columns(tmp_relation, columns)) }}
    {%- endcall -%}
  {%- else -%}
    {%- if file_format == 'hudi' and not existing_relation.is_hudi -%}
      {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": " ~ existing_relation ~ " exists but is not a Hudi table; rebuild it with --full-refresh") }}
    {%- endif -%}
    {%- do pyhudi_check_partitions(existing_relation, partition_by) -%}
    {%- set dest_columns = process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
    {%- if not dest_columns -%}
      {%- set dest_columns = adapter.get_columns_in_relation(existing_relation) -%}
    {%- endif -%}
    {#-- dbt's arguments of a strategy macro, then pyhudi's (partition_by as a list, the relation as it exists) --#}
    {%- set strategy_arg_dict = {'target_relation': target_relation, 'temp_relation': tmp_relation,
                                 'unique_key': config.get('unique_key'), 'dest_columns': dest_columns,
                                 'incremental_predicates': incremental_predicates, 'partition_by': partition_by,
                                 'existing_relation': existing_relation, 'file_format': file_format} -%}
    {%- call statement('main') -%}
      {{ strategy_sql_macro(strategy_arg_dict) }}
    {%- endcall -%}
  {%- endif -%}
  {% do adapter.drop_relation(tmp_relation.incorporate(type='view')) %}
  {%- if language == 'python' -%}
    {% do write(model_code) %}  {#-- target/run holds the script that ran, not the SQL that wrote its rows --#}
  {%- endif -%}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
