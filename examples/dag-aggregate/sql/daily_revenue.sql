-- Revenue per day, from the per-day event aggregate.
SELECT
    d.event_day,
    SUM(d.total_amount) AS revenue,
    SUM(d.n_events) AS n_purchases,
    MAX(d.max_amount) AS max_purchase
FROM agg.daily_events AS d
WHERE d.event_type = 'purchase'
GROUP BY d.event_day
