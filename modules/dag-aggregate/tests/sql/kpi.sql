-- sfn: mode=append
-- Test fixture: reads the three tasks above; the edge events_daily -> kpi is implied
-- by revenue_daily and removed by the transitive reduction.
SELECT e.event_day, e.n_events, r.revenue, (SELECT COUNT(*) FROM agg.events_by_type) AS n_types
FROM agg.events_daily AS e
JOIN agg.revenue_daily AS r ON r.event_day = e.event_day
