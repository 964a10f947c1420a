-- sfn: wait=3 timeout=900
-- One row of headline KPIs. The CTE named user_segments is local: it is not
-- agg.user_segments, and the alias daily_revenue below is not agg.daily_revenue.
WITH user_segments AS (
    SELECT SUM(n_users) AS n_users, MAX(max_revenue) AS top_user_revenue
    FROM agg.segment_summary
),
engagement AS (
    SELECT MAX(revenue_per_active_user) AS best_revenue_per_active_user
    FROM agg.engagement_ratio
)
SELECT
    us.n_users,
    us.top_user_revenue,
    daily_revenue.revenue AS total_revenue,
    daily_revenue.max_daily_revenue,
    e.best_revenue_per_active_user,
    t.n_event_types,
    b.n_batches
FROM user_segments AS us
CROSS JOIN agg.revenue_stats AS daily_revenue
CROSS JOIN engagement AS e
CROSS JOIN (SELECT COUNT(*) AS n_event_types FROM agg.event_type_totals) AS t
CROSS JOIN (SELECT COUNT(*) AS n_batches FROM agg.event_batches) AS b
