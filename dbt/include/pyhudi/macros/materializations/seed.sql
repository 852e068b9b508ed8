{#-- seeds: `create table (...) using hudi tblproperties (...)` then dbt-spark's batched INSERT INTO ... VALUES
      (each batch one Hudi insert commit). Bindings become SQL literals in the cursor (None -> NULL).
      Partition columns are declared last (a Hudi table's layout), so the inserts name their columns. --#}

{% macro pyhudi_seed_columns(model, agate_table) -%}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set columns = [] -%}
  {%- for col_name in agate_table.column_names -%}
    {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
    {%- do columns.append({'name': (col_name | string), 'type': column_override.get(col_name, inferred_type)}) -%}
  {%- endfor -%}
  {%- do adapter.hudi_check_seed_columns(model.name, columns | map(attribute='name') | list, config) -%}
  {{ return(columns) }}
{%- endmacro %}


{% macro pyhudi__create_csv_table(model, agate_table) %}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set columns = pyhudi_seed_columns(model, agate_table) -%}
  {%- set partition_by = adapter.hudi_partition_by(config) | map('lower') | list -%}
  {%- set ordered = [] -%}
  {%- for column in columns if column.name | lower not in partition_by -%}{%- do ordered.append(column) -%}{%- endfor -%}
  {%- for name in partition_by -%}
    {%- for column in columns if column.name | lower == name -%}{%- do ordered.append(column) -%}{%- endfor -%}
  {%- endfor -%}
  {% set sql %}
    create table {{ this.render() }} (
        {%- for column in ordered -%}
            {{ adapter.quote_seed_column(column.name, quote_seed_column) }} {{ column.type }} {%- if not loop.last -%}, {%- endif -%}
        {%- endfor -%}
    )
    {{ file_format_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ clustered_cols(label="clustered by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    {{ tblproperties_clause() }}
  {% endset %}

  {% call statement('_') -%}
    {{ sql }}
  {%- endcall %}

  {{ return(sql) }}
{% endmacro %}


{% macro pyhudi__load_csv_rows(model, agate_table) %}
  {%- set batch_size = get_batch_size() -%}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set columns = pyhudi_seed_columns(model, agate_table) -%}
  {%- set statements = [] -%}

  {%- for chunk in agate_table.rows | batch(batch_size) -%}
    {%- set bindings = [] -%}
    {%- for row in chunk -%}
      {%- do bindings.extend(row) -%}
    {%- endfor -%}
    {%- set sql -%}
      insert into {{ this.render() }} (
        {%- for column in columns -%}
          {{ adapter.quote_seed_column(column.name, quote_seed_column) }}{{ ", " if not loop.last }}
        {%- endfor -%}
      ) values
      {% for row in chunk -%}
        ({%- for column in columns -%}
          cast({{ get_binding_char() }} as {{ column.type }}){{ "," if not loop.last }}
        {%- endfor -%}){{ "," if not loop.last }}
      {%- endfor %}
    {%- endset -%}
    {%- do adapter.add_query(sql, bindings=bindings, abridge_sql_log=True) -%}
    {%- if loop.index0 == 0 -%}
      {%- do statements.append(sql) -%}
    {%- endif -%}
  {%- endfor -%}

  {{ return(statements[0] if statements else '') }}
{% endmacro %}
