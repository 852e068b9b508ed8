select customer_id, name, country, updated_at
from {{ ref('raw_customers_batch_' ~ var('batch')) }}
