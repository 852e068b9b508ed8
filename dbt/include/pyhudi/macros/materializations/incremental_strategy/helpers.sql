{#-- Shared by the strategy macros (and usable by a project's own get_incremental_<name>_sql). --#}

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


{#-- INSERT OVERWRITE of the source rows: with partition_by the partitions written (dynamic), else the whole table
     (static). The mode travels with the statement (`/* pyhudi.options ... */`), never as session state. --#}
{% macro pyhudi_insert_overwrite_sql(target, source, partition_by) %}
  {{ pyhudi_statement_options({'hoodie.datasource.overwrite.mode': 'dynamic' if partition_by else 'static'}) }}
  insert overwrite table {{ target }}
  {%- if partition_by %} partition ({{ partition_by | join(', ') }}){% endif %}
  {{ pyhudi_source_select(source, target) }}
{%- endmacro %}
