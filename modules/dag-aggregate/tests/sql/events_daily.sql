-- sfn: external=raw.events
-- Test fixture: events per day, read from the declared external table.
SELECT CAST(created_at AS DATE) AS event_day, COUNT(*) AS n_events
FROM raw.events
GROUP BY 1
