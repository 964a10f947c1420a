-- sfn: external=raw.events
-- Test fixture: level 1 like events_daily, but its only child (kpi) is at level 3.
SELECT event_type, COUNT(*) AS n_events
FROM raw.events
GROUP BY 1
