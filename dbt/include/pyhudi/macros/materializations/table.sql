{#-- table: the first run is Hudi's CTAS (bulk_insert); a rerun replaces the rows with INSERT OVERWRITE in static
      mode (Hudi's insert_overwrite_table), so the table keeps its timeline, time travel and incremental readers.
      The table is recreated instead when its columns or partitioning changed, when it is not a Hudi table, or on
      --full-refresh. Partition columns go last, as in every Hudi table. --#}
{% materialization table, adapter='pyhudi', supported_languages=['sql', 'python'] %}
  {%- set language = model['language'] -%}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set file_format = pyhudi_file_format() -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database,
                                                type='table', is_hudi=(file_format == 'hudi')) -%}

  {{ run_hooks(pre_hooks) }}

  {%- if file_format == 'hudi' or language == 'python' -%}
    {#-- the model's rows as a temporary view: its query, or a Python model's DataFrame (python_model.sql) --#}
    {%- set tmp_relation = make_temp_relation(target_relation, '__dbt_tmp') -%}
    {%- set model_code = pyhudi_py_write_view(compiled_code, tmp_relation) if language == 'python' else create_temporary_view(tmp_relation, compiled_code) -%}
    {%- call statement('create_tmp_relation', language=language) -%}
      {{ model_code }}
    {%- endcall -%}
  {%- endif -%}

  {%- if file_format == 'hudi' -%}
    {#-- checked before anything is written: partition_by / unique_key / clustered_by name selected columns --#}
    {%- set new_columns = pyhudi_model_columns(tmp_relation) -%}

    {%- set overwrite = false -%}
    {%- if old_relation is not none and old_relation.is_hudi and old_relation.is_table and not should_full_refresh() -%}
      {%- set old_columns = adapter.get_columns_in_relation(old_relation) -%}
      {%- set overwrite = (new_columns | map(attribute='name') | map('lower') | list) == (old_columns | map(attribute='name') | map('lower') | list)
                          and (new_columns | map(attribute='data_type') | list) == (old_columns | map(attribute='data_type') | list)
                          and (adapter.hudi_partition_columns_of(old_relation) | map('lower') | list) == (adapter.hudi_partition_by(config) | map('lower') | list) -%}
    {%- endif -%}

    {%- if overwrite -%}
      {#-- the whole table, whatever the session's partitionOverwriteMode: Hudi's insert_overwrite_table --#}
      {%- call statement('main') -%}
        {{ pyhudi_statement_options({'hoodie.datasource.overwrite.mode': 'static'}) }}
        insert overwrite table {{ target_relation }}
        {{ pyhudi_select_columns(tmp_relation, new_columns) }}
      {%- endcall -%}
    {%- else -%}
      {%- if old_relation is not none -%}
        {{ adapter.drop_relation(old_relation) }}
      {%- endif -%}
      {%- call statement('main') -%}
        {{ create_table_as(False, target_relation, pyhudi_select_columns(tmp_relation, new_columns)) }}
      {%- endcall -%}
    {%- endif -%}
    {% do adapter.drop_relation(tmp_relation.incorporate(type='view')) %}
  {%- else -%}
    {%- if old_relation is not none -%}
      {{ adapter.drop_relation(old_relation) }}
    {%- endif -%}
    {%- call statement('main') -%}
      {{ create_table_as(False, target_relation, ('select * from ' ~ tmp_relation) if language == 'python' else compiled_code) }}
    {%- endcall -%}
    {%- if language == 'python' -%}
      {% do adapter.drop_relation(tmp_relation.incorporate(type='view')) %}
    {%- endif -%}
  {%- endif -%}
  {%- if language == 'python' -%}
    {% do write(model_code) %}  {#-- target/run holds the script that ran, not the SQL that wrote its rows --#}
  {%- endif -%}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
