{#-- append: INSERT INTO, Hudi's INSERT INTO rule decides insert or upsert by the table's key. --#}
{% macro pyhudi__get_incremental_append_sql(arg_dict) %}
  insert into table {{ arg_dict['target_relation'] }}
  {{ pyhudi_source_select(arg_dict['temp_relation'], arg_dict['target_relation']) }}
{%- endmacro %}
