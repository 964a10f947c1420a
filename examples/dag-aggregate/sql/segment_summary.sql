-- Size and spend of each segment.
SELECT
    s.segment,
    COUNT(*) AS n_users,
    SUM(s.revenue) AS revenue,
    MIN(s.revenue) AS min_revenue,
    MAX(s.revenue) AS max_revenue
FROM agg.user_segments AS s
GROUP BY s.segment
