-- sfn: external=raw.events
-- Purchases per user. Mentions of agg.daily_revenue in this comment, or in the string
-- literal below, must not make this task depend on it.
WITH purchases AS (
    SELECT user_id, amount
    FROM raw.events
    WHERE event_type = 'purchase' AND 'agg.daily_revenue' <> ''
)
SELECT
    p.user_id,
    COUNT(*) AS n_purchases,
    SUM(p.amount) AS revenue,
    MIN(p.amount) AS min_purchase,
    MAX(p.amount) AS max_purchase
FROM purchases AS p
GROUP BY p.user_id
