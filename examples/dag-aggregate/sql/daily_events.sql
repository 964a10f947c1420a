-- sfn: external=raw.events
-- Per day and event type: how many events and how much money moved.
SELECT
    CAST(e.created_at AS DATE) AS event_day,
    e.event_type,
    COUNT(*) AS n_events,
    SUM(e.amount) AS total_amount,
    MIN(e.amount) AS min_amount,
    MAX(e.amount) AS max_amount
FROM raw.events AS e
GROUP BY CAST(e.created_at AS DATE), e.event_type
