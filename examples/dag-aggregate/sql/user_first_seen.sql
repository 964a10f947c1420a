-- sfn: external=raw.events
-- First and last activity of every user.
SELECT
    user_id,
    MIN(created_at) AS first_seen,
    MAX(created_at) AS last_seen,
    COUNT(*) AS n_events
FROM raw.events
GROUP BY user_id
