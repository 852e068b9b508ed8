-- copy-on-write dimension, rebuilt every run (a rerun is an insert_overwrite_table commit on the same timeline)
{{ config(materialized='table', unique_key='customer_id', table_type='cow') }}

select c.customer_id, c.name, c.country, count(o.order_id) as orders
from {{ ref('stg_customers') }} c
left join {{ ref('fct_orders') }} o on o.customer_id = c.customer_id
group by c.customer_id, c.name, c.country
