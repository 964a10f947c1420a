-- Segment every user by spend; users without purchases are 'browser'.
SELECT
    f.user_id,
    CASE
        WHEN u.revenue IS NULL THEN 'browser'
        WHEN u.revenue >= 1000 THEN 'whale'
        WHEN u.revenue >= 100 THEN 'regular'
        ELSE 'light'
    END AS segment,
    COALESCE(u.revenue, 0) AS revenue,
    COALESCE(u.n_purchases, 0) AS n_purchases,
    f.first_seen
FROM agg.user_first_seen AS f
LEFT JOIN agg.user_purchases AS u ON u.user_id = f.user_id
