-- sfn: mode=reload wait=0
SELECT CAST(o.created_at AS DATE) AS day, COUNT(*) AS n_orders, SUM(o.amount) AS revenue
FROM raw.orders AS o
GROUP BY CAST(o.created_at AS DATE)
