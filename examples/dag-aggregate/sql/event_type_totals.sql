-- Totals per event type over all days.
SELECT
    event_type,
    SUM(n_events) AS n_events,
    SUM(total_amount) AS total_amount,
    MIN(event_day) AS first_day,
    MAX(event_day) AS last_day,
    COUNT(*) AS n_days
FROM agg.daily_events
GROUP BY event_type
