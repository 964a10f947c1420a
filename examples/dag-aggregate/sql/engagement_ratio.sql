-- Revenue per active user, per day.
SELECT
    a.event_day,
    a.active_users,
    COALESCE(r.revenue, 0) AS revenue,
    CAST(COALESCE(r.revenue, 0) AS DOUBLE PRECISION) / NULLIF(a.active_users, 0)
        AS revenue_per_active_user
FROM agg.daily_active_users AS a
LEFT JOIN agg.daily_revenue AS r ON r.event_day = a.event_day
