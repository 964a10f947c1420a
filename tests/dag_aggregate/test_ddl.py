"""Empty agg tables are created from their own queries, parents first."""

from __future__ import annotations

from pathlib import Path

import duckdb

from sfn_patterns_cli.dag_aggregate import ddl
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dag-aggregate"


def test_self_reading_tasks_need_hand_written_ddl() -> None:
    assert ddl.tables_needing_ddl(plan_from_dir(EXAMPLE / "sql")) == ["event_batches"]


def test_statements_create_every_other_table_empty_in_dependency_order() -> None:
    plan = plan_from_dir(EXAMPLE / "sql")
    statements = ddl.create_table_statements(plan)
    created = [s.split()[5].removeprefix("agg.") for s in statements]
    assert sorted(created) == sorted(set(plan.tasks) - {"event_batches"})
    for parent, child in plan.reduced.edges:
        if parent in created and child in created:
            assert created.index(parent) < created.index(child)

    con = duckdb.connect()
    con.execute("CREATE SCHEMA raw")
    con.execute("CREATE SCHEMA agg")
    con.execute(
        "CREATE TABLE raw.events (event_id BIGINT, user_id VARCHAR, event_type VARCHAR,"
        " amount DECIMAL(12, 2), created_at TIMESTAMP)"
    )
    # The self-reading task's table is created by hand first (as setup.sql does).
    con.execute(
        "CREATE TABLE agg.event_batches (n_events BIGINT, total_amount DECIMAL(38, 2),"
        " min_created_at TIMESTAMP, max_created_at TIMESTAMP)"
    )
    for statement in statements:
        con.execute(statement)
    for table in created:
        assert con.execute(f"SELECT COUNT(*) FROM agg.{table}").fetchone() == (0,)


def test_split_script_drops_comment_only_pieces() -> None:
    script = (
        "-- raw tables\nCREATE TABLE raw.a (x INT);\n\n"
        "-- seed\nINSERT INTO raw.a VALUES (1);\n-- end\n"
    )
    assert ddl.split_script(script) == [
        "-- raw tables\nCREATE TABLE raw.a (x INT)",
        "-- seed\nINSERT INTO raw.a VALUES (1)",
    ]
