-- Test fixture: reads events_daily, so it runs after it.
SELECT event_day, n_events * 2 AS revenue
FROM agg.events_daily
