{#-- incremental on Hudi tables, with dbt-spark's semantics (Hudi operation in brackets):
      merge            MERGE INTO on unique_key                       [upsert]
                       without any key: every row appended, as dbt-spark's `on false`  [insert]
      append           INSERT INTO                                    [Hudi's INSERT INTO rule]
      insert_overwrite INSERT OVERWRITE: with partition_by the partitions written (dynamic), else the table (static)
                                                                      [insert_overwrite / insert_overwrite_table]
      microbatch       insert_overwrite of each batch's partitions; needs partition_by
    Default: merge when the model has a unique_key, else append. The overwrite mode travels with its statement
    (`/* pyhudi.options ... */`), never as session state. --#}

{% macro pyhudi_incremental_strategy(file_format) %}
  {%- set strategy = config.get('incremental_strategy') -%}
  {%- if strategy is none -%}
    {%- set strategy = 'merge' if (file_format == 'hudi' and config.get('unique_key')) else 'append' -%}
  {%- endif -%}
  {%- if strategy not in ['append', 'merge', 'insert_overwrite', 'microbatch'] -%}
    {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": unknown incremental_strategy '" ~ strategy ~ "'; use merge, append, insert_overwrite or microbatch") }}
  {%- endif -%}
  {%- if strategy == 'merge' and file_format not in ['hudi', 'delta', 'iceberg'] -%}
    {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": incremental_strategy 'merge' needs file_format 'hudi' (got '" ~ file_format ~ "')") }}
  {%- endif -%}
  {%- if strategy == 'microbatch' and not config.get('partition_by') -%}
    {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": incremental_strategy 'microbatch' overwrites each batch's partitions and needs partition_by (a column of the batch's grain, e.g. the event date)") }}
  {%- endif -%}
  {{ return(strategy) }}
{% endmacro %}


{#-- The source rows in the target's column order: columns the target lacks are left out (on_schema_change=ignore),
     columns the source lacks become typed NULLs, Hudi meta columns never reach the writer. --#}
{% macro pyhudi_source_select(source_relation, target_relation) -%}
  {%- set source_names = adapter.get_columns_in_relation(source_relation) | map(attribute='name') | map('lower') | list -%}
  {%- set target_columns = adapter.get_columns_in_relation(target_relation) -%}
  select
  {%- for column in target_columns %}
    {% if column.name | lower in source_names -%}
      {{ adapter.quote(column.name) }}
    {%- else -%}
      cast(null as {{ column.data_type }}) as {{ adapter.quote(column.name) }}
    {%- endif %}{{ "," if not loop.last }}
  {%- endfor %}
  from {{ source_relation }}
{%- endmacro %}


{% macro pyhudi_merge_sql(target, source, keys, incremental_predicates) %}
  {%- set dest_columns = adapter.get_columns_in_relation(target) -%}
  {%- set update_columns = get_merge_update_columns(config.get('merge_update_columns'), config.get('merge_exclude_columns'), dest_columns) -%}
  {%- set predicates = [] -%}
  {%- for key in keys -%}
    {%- do predicates.append("DBT_INTERNAL_SOURCE." ~ adapter.quote(key) ~ " = DBT_INTERNAL_DEST." ~ adapter.quote(key)) -%}
  {%- endfor -%}
  {%- for predicate in (incremental_predicates or []) -%}
    {%- do predicates.append(predicate) -%}
  {%- endfor %}
  merge into {{ target }} as DBT_INTERNAL_DEST
  using ({{ pyhudi_source_select(source, target) }}) as DBT_INTERNAL_SOURCE
  on {{ predicates | join('\n    and ') }}
  when matched then update set
  {%- if update_columns %}
    {%- for column_name in update_columns %}
    {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}{{ "," if not loop.last }}
    {%- endfor %}
  {%- else %} *
  {%- endif %}
  when not matched then insert *
{% endmacro %}


{% macro pyhudi_get_incremental_sql(strategy, source, target, partition_by, incremental_predicates) %}
  {%- set keys = adapter.hudi_merge_key(config) if strategy == 'merge' else [] -%}
  {%- if strategy == 'append' or (strategy == 'merge' and not keys) -%}
    insert into table {{ target }}
    {{ pyhudi_source_select(source, target) }}
  {%- elif strategy in ['insert_overwrite', 'microbatch'] -%}
    {{ pyhudi_statement_options({'hoodie.datasource.overwrite.mode': 'dynamic' if partition_by else 'static'}) }}
    insert overwrite table {{ target }}
    {%- if partition_by %} partition ({{ partition_by | join(', ') }}){% endif %}
    {{ pyhudi_source_select(source, target) }}
  {%- elif strategy == 'merge' -%}
    {{ pyhudi_merge_sql(target, source, keys, incremental_predicates) }}
  {%- endif -%}
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
    {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
    {%- call statement('main') -%}
      {{ pyhudi_get_incremental_sql(strategy, tmp_relation, target_relation, partition_by, incremental_predicates) }}
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
