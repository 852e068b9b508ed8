{#-- pyhudi: dbt-spark's macros with Hudi as the default table format. Every statement below is Hudi's Spark SQL,
      run by pyhudi's SQL layer (pyhudi.sql). --#}

{% macro pyhudi_file_format() -%}
  {{ return((config.get('file_format') or 'hudi') | lower) }}
{%- endmacro %}


{% macro pyhudi_tblproperties_clause(record_key=none) -%}
  {%- set props = adapter.hudi_table_options(config, record_key, none, model.name) -%}
  {%- if props %}
    tblproperties (
      {%- for name, value in props.items() %}
      '{{ name }}' = '{{ value | replace("\\", "\\\\") | replace("'", "\\'") }}'{{ "," if not loop.last }}
      {%- endfor %}
    )
  {%- endif %}
{%- endmacro %}


{#-- `select <columns> from <relation>`: the model's columns without Hudi's _hoodie_* meta columns, so a model that
     selects * from another Hudi table (dbt-spark#791) writes only its data columns; partition columns last, in
     partition_by order (the layout of a Hudi table, whatever their place in the model's select). --#}
{% macro pyhudi_select_columns(relation, columns=none) -%}
  {%- set columns = columns if columns is not none else pyhudi_model_columns(relation) -%}
  select {% for column in columns %}{{ adapter.quote(column.name) }}{{ ", " if not loop.last }}{% endfor %} from {{ relation }}
{%- endmacro %}


{#-- The columns of the model's query (a temp view) in table order, after checking partition_by, unique_key and
     clustered_by name selected columns (an error naming the model and column, before anything is written). --#}
{% macro pyhudi_model_columns(relation, check_key=true) -%}
  {%- do adapter.hudi_table_options(config, none, none, model.name) -%}  {#-- options checked before any write --#}
  {%- set columns = adapter.hudi_model_columns(model.name, relation, config, check_key) -%}
  {%- set clustered = config.get('clustered_by') -%}
  {%- if clustered and not config.get('buckets') -%}
    {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": clustered_by needs buckets (config(clustered_by=..., buckets=4)), as in dbt-spark") }}
  {%- endif -%}
  {%- set names = columns | map(attribute='name') | map('lower') | list -%}
  {%- for column in ([clustered] if clustered is string else (clustered or [])) -%}
    {%- if column | lower not in names -%}
      {{ exceptions.raise_compiler_error("pyhudi: model " ~ model.name ~ ": clustered_by column " ~ column ~ " not in the model's select; select it or change clustered_by. Nothing was written.") }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(columns) }}
{%- endmacro %}


{#-- `/* pyhudi.options {...} */`: Hudi settings of this one statement (never session state: dbt threads share the
     session). --#}
{% macro pyhudi_statement_options(options) -%}
  {{ adapter.hudi_options_comment(options) }}
{%- endmacro %}


{% macro pyhudi__file_format_clause() %}
  using {{ pyhudi_file_format() }}
{%- endmacro %}


{% macro pyhudi__options_clause() -%}
  {%- if pyhudi_file_format() != 'hudi' -%}
    {{ spark__options_clause() }}
  {%- endif -%}
{%- endmacro %}


{% macro pyhudi__tblproperties_clause() -%}
  {%- if pyhudi_file_format() == 'hudi' -%}
    {{ pyhudi_tblproperties_clause() }}
  {%- else -%}
    {{ spark__tblproperties_clause() }}
  {%- endif -%}
{%- endmacro %}


{#-- CREATE TABLE ... USING hudi ... AS SELECT: Hudi's CTAS (a bulk_insert commit). --#}
{% macro pyhudi__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language != 'sql' -%}
    {#-- Python models reach the table through their temporary view (python_model.sql), never here --#}
    {{ exceptions.raise_compiler_error("pyhudi: create_table_as takes SQL; the " ~ language ~ " model " ~ relation ~ " is written from its temporary view by the table and incremental materializations") }}
  {%- elif temporary -%}
    {{ create_temporary_view(relation, compiled_code) }}
  {%- elif pyhudi_file_format() != 'hudi' -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- else -%}
    {%- set contract_config = config.get('contract') -%}
    {%- if contract_config.enforced -%}
      {{ get_assert_columns_equivalent(compiled_code) }}
      {%- set compiled_code = get_select_subquery(compiled_code) %}
    {%- endif %}
    create table {{ relation }}
    using hudi
    {{ partition_cols(label="partitioned by") }}
    {{ clustered_cols(label="clustered by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    {{ pyhudi_tblproperties_clause() }}
    as
    {{ compiled_code }}
  {%- endif -%}
{%- endmacro %}


{#-- Hudi tables keep their timeline: ALTER TABLE for schema changes goes through the SQL layer too. Dropping
     columns is refused before any change (as dbt-spark does for non-Delta tables): pyhudi cannot drop a column from
     a Hudi table's schema, and changing only the catalog would make the next write fail. --#}
{% macro pyhudi__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {% if remove_columns and relation.is_hudi %}
    {{ exceptions.raise_compiler_error("pyhudi: cannot drop column(s) " ~ (remove_columns | map(attribute='name') | join(', ')) ~ " from Hudi table " ~ relation ~ " (on_schema_change='sync_all_columns'); use on_schema_change='append_new_columns' or rebuild the model with --full-refresh") }}
  {% endif %}
  {% if add_columns %}
    {% set sql -%}
      alter table {{ relation }} add columns (
        {%- for column in add_columns %}
        {{ adapter.quote(column.name) }} {{ column.data_type }}{{ ',' if not loop.last }}
        {%- endfor %}
      )
    {%- endset %}
    {% do run_query(sql) %}
  {% endif %}
  {% if remove_columns %}
    {% set sql -%}
      alter table {{ relation }} drop columns (
        {%- for column in remove_columns %}
        {{ adapter.quote(column.name) }}{{ ',' if not loop.last }}
        {%- endfor %}
      )
    {%- endset %}
    {% do run_query(sql) %}
  {% endif %}
{% endmacro %}


{% macro pyhudi__persist_constraints(relation, model) %}
  {#-- constraints are not enforced on Hudi tables (dbt-spark only applies them to delta) --#}
{% endmacro %}


{#-- `select *` from a Hudi table returns its _hoodie_* meta columns; they are per-table bookkeeping, not model
     columns (snapshots with check_cols='all' would otherwise see every row as changed). --#}
{% macro pyhudi__get_columns_in_query(select_sql) %}
  {%- set names = [] -%}
  {%- for name in default__get_columns_in_query(select_sql) -%}
    {%- if not (name | lower).startswith('_hoodie_') -%}
      {%- do names.append(name) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(names) }}
{% endmacro %}


{#-- persist_docs as dbt-spark does it for Hudi: column comments by ALTER TABLE ... CHANGE COLUMN ... COMMENT (catalog
     only), the table comment as the catalog's `comment` property (what CREATE TABLE ... COMMENT sets). Hudi is the
     default format here, so a model need not say file_format='hudi' (dbt-spark's macro checks that config). --#}
{% macro pyhudi__persist_docs(relation, model, for_relation, for_columns) -%}
  {%- if pyhudi_file_format() not in ['hudi', 'delta', 'iceberg'] -%}
    {{ return(spark__persist_docs(relation, model, for_relation, for_columns)) }}
  {%- endif -%}
  {%- if for_relation and config.persist_relation_docs() and model.description -%}
    {%- call statement('persist_relation_docs') -%}
      alter table {{ relation }} set tblproperties ('comment' = '{{ pyhudi_escape(model.description) }}')
    {%- endcall -%}
  {%- endif -%}
  {%- if for_columns and config.persist_column_docs() and model.columns -%}
    {#-- dbt's validate_doc_columns: documented columns the relation lacks are named in a warning and skipped; a
         quoted column name matches case-sensitively --#}
    {%- set existing = adapter.get_columns_in_relation(relation) | map(attribute='name') | list -%}
    {%- set present = validate_doc_columns(relation, model.columns, existing) -%}
    {%- for column_name, column in present.items() -%}
      {%- if column.get('description') -%}
        {%- call statement('persist_column_docs') -%}
          alter table {{ relation }} change column {{ adapter.quote(column_name) if column.get('quote') else column_name }} comment '{{ pyhudi_escape(column['description']) }}'
        {%- endcall -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
{%- endmacro %}


{% macro pyhudi_escape(text) -%}
  {{ text | replace("\\", "\\\\") | replace("'", "\\'") }}
{%- endmacro %}
