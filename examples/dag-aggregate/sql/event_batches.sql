-- sfn: mode=append wait=2 external=raw.events
-- Incremental: each run appends one row summarising the events that arrived since the
-- previous run. Reading its own table is a self-read (append mode), not a cycle.
SELECT
    COUNT(*) AS n_events,
    SUM(e.amount) AS total_amount,
    MIN(e.created_at) AS min_created_at,
    MAX(e.created_at) AS max_created_at
FROM raw.events AS e
WHERE e.created_at > (
    SELECT COALESCE(MAX(b.max_created_at), TIMESTAMP '1970-01-01 00:00:00')
    FROM agg.event_batches AS b
)
HAVING COUNT(*) > 0
