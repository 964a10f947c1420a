-- Overall revenue statistics. It also reads agg.daily_events, a dependency that the
-- transitive reduction drops (daily_revenue already depends on it).
SELECT
    COUNT(*) AS n_days,
    SUM(r.revenue) AS revenue,
    MIN(r.revenue) AS min_daily_revenue,
    MAX(r.revenue) AS max_daily_revenue,
    (SELECT COUNT(DISTINCT d.event_type) FROM agg.daily_events AS d) AS n_event_types
FROM agg.daily_revenue AS r
