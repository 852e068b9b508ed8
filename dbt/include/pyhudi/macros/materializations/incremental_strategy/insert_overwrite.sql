{#-- insert_overwrite: the partitions the run writes when the model has partition_by (dynamic)
     [insert_overwrite], else the whole table (static) [insert_overwrite_table]. --#}
{% macro pyhudi__get_incremental_insert_overwrite_sql(arg_dict) %}
  {{ pyhudi_insert_overwrite_sql(arg_dict['target_relation'], arg_dict['temp_relation'], arg_dict['partition_by']) }}
{%- endmacro %}
