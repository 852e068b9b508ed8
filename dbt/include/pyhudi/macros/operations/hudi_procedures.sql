{#-- Hudi table services as run-operations, e.g.
       dbt run-operation clean --args '{table: orders, clean_policy: KEEP_LATEST_COMMITS, retain_commits: 2}'
     Each one is a `CALL <procedure>(...)` statement with Hudi's procedure and argument names, run by pyhudi's SQL
     layer; the procedure's result is printed as a table. `table` without a schema means the target schema. --#}

{% macro pyhudi_call(procedure, args, print=true) %}
  {%- set call_args = {} -%}
  {%- for name, value in args.items() -%}
    {%- if name == 'table' and value is not none -%}
      {%- do call_args.update({'table': adapter.hudi_table_name(value, target.schema)}) -%}
    {%- else -%}
      {%- do call_args.update({name: value}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set sql = adapter.hudi_call_sql(procedure, call_args) -%}
  {%- do log(sql, info=true) -%}
  {%- set result = run_query(sql) -%}
  {%- if print and execute and result is not none -%}
    {%- do result.print_table(max_rows=none, max_columns=none, max_column_width=none) -%}
  {%- endif -%}
  {{ return(result) }}
{% endmacro %}


{#-- CALL run_compaction(op => ..., table => ..., timestamp => ...) --#}
{% macro compact(table=none, op='scheduleAndExecute', path=none, timestamp=none) %}
  {%- set args = {'op': op, 'table': table, 'path': path, 'timestamp': timestamp} -%}
  {%- do args.update(kwargs) -%}
  {%- do pyhudi_call('run_compaction', args) -%}
{% endmacro %}


{#-- CALL run_clustering(table => ..., op => ..., order => ..., predicate => ..., selected_partitions => ...,
                         order_strategy => ..., options => ..., instants => ..., show_involved_partition => ...) --#}
{% macro cluster(table=none, op=none, path=none, order=none, predicate=none) %}
  {%- set args = {'table': table, 'path': path, 'op': op, 'order': order, 'predicate': predicate} -%}
  {%- do args.update(kwargs) -%}
  {%- do pyhudi_call('run_clustering', args) -%}
{% endmacro %}


{#-- CALL show_clustering(table => ..., limit => ..., show_involved_partition => ...) --#}
{% macro show_clustering(table=none, path=none, limit=20) %}
  {%- set args = {'table': table, 'path': path, 'limit': limit} -%}
  {%- do args.update(kwargs) -%}
  {%- do pyhudi_call('show_clustering', args) -%}
{% endmacro %}


{#-- CALL run_clean(table => ..., clean_policy => ..., retain_commits => ..., hours_retained => ...,
                    file_versions_retained => ..., trigger_strategy => ..., trigger_max_commits => ..., options => ...) --#}
{% macro clean(table) %}
  {%- set args = {'table': table} -%}
  {%- do args.update(kwargs) -%}
  {%- do pyhudi_call('run_clean', args) -%}
{% endmacro %}


{#-- CALL archive_commits(table => ..., min_commits => ..., max_commits => ..., retain_commits => ...) --#}
{% macro archive(table=none, path=none) %}
  {%- set args = {'table': table, 'path': path} -%}
  {%- do args.update(kwargs) -%}
  {%- do pyhudi_call('archive_commits', args) -%}
{% endmacro %}


{#-- CALL create_savepoint(table => ..., commit_time => ..., user => ..., comments => ...);
     action: create (default) | delete | show | rollback (CALL rollback_to_savepoint) --#}
{% macro savepoint(table, commit_time=none, action='create') %}
  {%- set procedures = {'create': 'create_savepoint', 'delete': 'delete_savepoint', 'show': 'show_savepoints',
                        'rollback': 'rollback_to_savepoint', 'restore': 'rollback_to_savepoint'} -%}
  {%- if action not in procedures -%}
    {{ exceptions.raise_compiler_error("savepoint: action must be one of " ~ (procedures.keys() | list | join(', ')) ~ ", got '" ~ action ~ "'") }}
  {%- endif -%}
  {%- set args = {'table': table} -%}
  {%- if commit_time is not none -%}
    {%- do args.update({'instant_time' if action in ['rollback', 'restore'] else 'commit_time': commit_time}) -%}
  {%- endif -%}
  {%- do args.update(kwargs) -%}
  {%- do pyhudi_call(procedures[action], args) -%}
{% endmacro %}


{#-- CALL rollback_to_instant(table => ..., instant_time => ...) --#}
{% macro rollback(table, instant_time) %}
  {%- set args = {'table': table, 'instant_time': instant_time} -%}
  {%- do args.update(kwargs) -%}
  {%- do pyhudi_call('rollback_to_instant', args) -%}
{% endmacro %}


{#-- CALL show_commits(table => ..., limit => ...) --#}
{% macro show_commits(table, limit=10) %}
  {%- set args = {'table': table, 'limit': limit} -%}
  {%- do args.update(kwargs) -%}
  {%- do pyhudi_call('show_commits', args) -%}
{% endmacro %}
