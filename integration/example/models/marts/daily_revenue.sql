-- partitioned by day; an incremental run replaces only the days its batch touches (Hudi insert_overwrite)
-- depends_on: {{ ref('stg_orders') }}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['order_date'],
    unique_key='order_date',
    table_type='cow'
) }}

select
    count(*) as orders,
    cast(sum(case when status <> 'cancelled' then amount else 0 end) as decimal(12, 2)) as revenue,
    order_date
from {{ ref('fct_orders') }}
{% if is_incremental() %}
where order_date in (select distinct order_date from {{ ref('stg_orders') }})
{% endif %}
group by order_date
