{#-- microbatch: each batch overwrites the partitions it writes (dbt runs one batch per event_time window). Only the
     dispatched pyhudi__ macro is defined here: dbt runs batches only while get_incremental_microbatch_sql is its
     own (Core) macro, unless the project sets require_batched_execution_for_custom_microbatch_strategy. --#}
{% macro pyhudi__get_incremental_microbatch_sql(arg_dict) %}
  {{ pyhudi_insert_overwrite_sql(arg_dict['target_relation'], arg_dict['temp_relation'], arg_dict['partition_by']) }}
{%- endmacro %}
