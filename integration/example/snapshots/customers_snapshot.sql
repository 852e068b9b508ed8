{% snapshot customers_snapshot %}
{{ config(unique_key='customer_id', strategy='timestamp', updated_at='updated_at') }}
select customer_id, name, country, updated_at from {{ ref('stg_customers') }}
{% endsnapshot %}
