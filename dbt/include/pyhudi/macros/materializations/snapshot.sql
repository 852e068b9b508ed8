{#-- snapshot: a Hudi table keyed by dbt_scd_id; each run MERGEs the staged changes into it (dbt-spark's merge:
      close changed rows by setting dbt_valid_to, insert new versions). --#}
{% materialization snapshot, adapter='pyhudi' %}
  {%- set target_table = model.get('alias', model.get('name')) -%}
  {%- set strategy_name = config.get('strategy') -%}
  {%- set file_format = pyhudi_file_format() -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() -%}

  {%- if file_format != 'hudi' -%}
    {#-- delta / iceberg snapshots are dbt-spark's business; pyhudi only writes Hudi --#}
    {{ exceptions.raise_compiler_error("pyhudi: snapshots are Hudi tables; remove file_format='" ~ file_format ~ "' from snapshot " ~ target_table) }}
  {%- endif -%}

  {% set target_relation_exists, target_relation = get_or_create_relation(
          database=none, schema=model.schema, identifier=target_table, type='table') -%}

  {%- if target_relation_exists and not target_relation.is_hudi -%}
    {{ exceptions.raise_compiler_error("pyhudi: snapshot target " ~ target_relation ~ " exists but is not a Hudi table") }}
  {%- endif -%}
  {%- if not target_relation.is_table -%}
    {% do exceptions.relation_wrong_type(target_relation, 'table') %}
  {%- endif -%}

  {% if not adapter.check_schema_exists(model.database, model.schema) %}
    {% do create_schema(model.schema) %}
  {% endif %}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {% set strategy_macro = strategy_dispatch(strategy_name) %}
  {% set strategy = strategy_macro(model, "snapshotted_data", "source_data", model['config'], target_relation_exists) %}

  {% if not target_relation_exists %}
    {% set build_sql = build_snapshot_table(strategy, model['compiled_code']) %}
    {#-- the first snapshot through a view, so partition columns go last (a Hudi table's layout) --#}
    {% set build_relation = make_temp_relation(target_relation, '__dbt_snapshot_build') %}
    {% call statement('create_build_relation') %}
      {{ create_temporary_view(build_relation, build_sql) }}
    {% endcall %}
    {% set build_columns = pyhudi_model_columns(build_relation, check_key=false) %}
    {% set final_sql %}
      create table {{ target_relation }}
      using hudi
      {{ partition_cols(label="partitioned by") }}
      {{ location_clause() }}
      {{ pyhudi_tblproperties_clause(record_key=columns.dbt_scd_id) }}
      as
      {{ pyhudi_select_columns(build_relation, build_columns) }}
    {% endset %}
  {% else %}
    {{ adapter.valid_snapshot_target(target_relation, columns) }}
    {% set staging_table = spark_build_snapshot_staging_table(strategy, sql, target_relation) %}
    {% set missing_columns = adapter.get_missing_columns(staging_table, target_relation)
                               | rejectattr('name', 'equalto', 'dbt_change_type')
                               | rejectattr('name', 'equalto', 'DBT_CHANGE_TYPE')
                               | rejectattr('name', 'equalto', 'dbt_unique_key')
                               | rejectattr('name', 'equalto', 'DBT_UNIQUE_KEY')
                               | list %}
    {% do create_columns(target_relation, missing_columns) %}
    {% set final_sql = snapshot_merge_sql(target=target_relation, source=staging_table, insert_cols=[]) %}
  {% endif %}

  {% call statement('main') %}
    {{ final_sql }}
  {% endcall %}

  {% set should_revoke = should_revoke(target_relation_exists, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ adapter.commit() }}

  {% if staging_table is defined %}
    {% do post_snapshot(staging_table) %}
  {% endif %}
  {% if build_relation is defined %}
    {% do adapter.drop_relation(build_relation.incorporate(type='view')) %}
  {% endif %}

  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
