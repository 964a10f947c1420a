-- sfn: external=raw.events
-- Distinct active users per day.
SELECT
    CAST(created_at AS DATE) AS event_day,
    COUNT(DISTINCT user_id) AS active_users,
    COUNT(*) AS n_events
FROM raw.events
GROUP BY CAST(created_at AS DATE)
