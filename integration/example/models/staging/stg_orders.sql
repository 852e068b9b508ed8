-- the raw batch the runner points at (var batch)
select order_id, customer_id, amount, status, order_date, updated_at
from {{ ref('raw_orders_batch_' ~ var('batch')) }}
