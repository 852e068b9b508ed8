{#-- merge: MERGE INTO on unique_key (else the Hudi primaryKey option) [Hudi upsert]; without any key every row is
     appended, as dbt-spark's `on false` does. --#}
{% macro pyhudi__get_incremental_merge_sql(arg_dict) %}
  {%- set keys = adapter.hudi_merge_key(config) -%}
  {%- if keys -%}
    {{ pyhudi_merge_sql(arg_dict['target_relation'], arg_dict['temp_relation'], keys, arg_dict['incremental_predicates']) }}
  {%- else -%}
    {{ pyhudi__get_incremental_append_sql(arg_dict) }}
  {%- endif -%}
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
