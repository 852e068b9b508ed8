-- merge-on-read fact table: every run upserts the batch by order_id; the latest updated_at wins
{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key='order_id',
    table_type='mor',
    precombine_key='updated_at',
    post_hook="call run_clean(table => '{{ this }}', clean_policy => 'KEEP_LATEST_COMMITS', retain_commits => 2)"
) }}

select order_id, customer_id, amount, status, order_date, updated_at
from {{ ref('stg_orders') }}
{% if is_incremental() %}
where updated_at > (select coalesce(max(updated_at), timestamp'1900-01-01') from {{ this }})
{% endif %}
