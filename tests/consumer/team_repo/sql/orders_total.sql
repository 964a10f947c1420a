-- sfn: mode=reload wait=0
SELECT SUM(d.n_orders) AS n_orders, SUM(d.revenue) AS revenue FROM agg.orders_daily AS d
