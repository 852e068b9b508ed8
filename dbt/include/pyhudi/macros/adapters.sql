{#-- pyhudi: dbt-spark's macros with Hudi as the default table format. Every statement below is Hudi's Spark SQL,
      run by pyhudi's SQL layer (pyhudi.sql). --#}

{% macro pyhudi_file_format() -%}
  {{ return((config.get('file_format') or 'hudi') | lower) }}
{%- endmacro %}


{% macro pyhudi_tblproperties_clause(record_key=none) -%}
  {%- set props = adapter.hudi_table_options(config, record_key) -%}
  {%- if props %}
    tblproperties (
      {%- for name, value in props.items() %}
      '{{ name }}' = '{{ value | replace("\\", "\\\\") | replace("'", "\\'") }}'{{ "," if not loop.last }}
      {%- endfor %}
    )
  {%- endif %}
{%- endmacro %}


{#-- `select <columns> from <relation>`: the model's columns without Hudi's _hoodie_* meta columns, so a model that
     selects * from another Hudi table (dbt-spark#791) writes only its data columns. --#}
{% macro pyhudi_select_columns(relation, columns=none) -%}
  {%- set columns = columns if columns is not none else adapter.get_columns_in_relation(relation) -%}
  select {% for column in columns %}{{ adapter.quote(column.name) }}{{ ", " if not loop.last }}{% endfor %} from {{ relation }}
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
    {{ exceptions.raise_compiler_error("pyhudi: only SQL models are supported (" ~ language ~ " model " ~ relation ~ ")") }}
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
