"""Create the tables a DAG's tasks write into, in dependency order.

The tasks only INSERT (append) or DELETE + INSERT (reload): the target tables must
exist first. A task's columns are exactly its SELECT's, so each table can be
created empty from its own query (``CREATE TABLE ... AS SELECT ... LIMIT 0``) once
the tables that query reads exist: parents first, in topological order.

A task that reads its own table (``append`` self-read, e.g. an incremental batch)
cannot be derived that way: its table must be created by hand beforehand, and it
is listed in :func:`tables_needing_ddl`.
"""

from __future__ import annotations

import networkx as nx

from sfn_patterns_cli.dag_aggregate.planner import Plan


def tables_needing_ddl(plan: Plan) -> list[str]:
    """Tasks whose SQL reads their own table: create these tables before the rest."""
    return sorted(
        name for name, task in plan.tasks.items() if f"{plan.schema}.{name}" in task.reads
    )


def create_table_statements(plan: Plan) -> list[str]:
    """``CREATE TABLE IF NOT EXISTS <schema>.<task> AS <select> LIMIT 0``, parents first."""
    manual = set(tables_needing_ddl(plan))
    statements = []
    for name in nx.topological_sort(plan.reduced):
        if name in manual:
            continue
        select = plan.tasks[name].select_sql.strip().rstrip(";")
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {plan.schema}.{name} AS "
            f"SELECT * FROM (\n{select}\n) AS sfnp_shape LIMIT 0"
        )
    return statements


def split_script(script: str) -> list[str]:
    """Split a SQL script on ';' into statements, dropping comment-only pieces.

    The Data API runs one statement per call, so a set-up script (raw tables, seed
    rows, hand-made self-read tables) is sent piece by piece. Enough for set-up
    scripts without ';' inside strings or comments.
    """
    pieces = []
    for piece in script.split(";"):
        code = [ln for ln in piece.splitlines() if ln.strip() and not ln.strip().startswith("--")]
        if code:
            pieces.append(piece.strip())
    return pieces


def setup_statements(setup_script: str, plan: Plan) -> list[str]:
    """The set-up script's statements, then the tasks' CREATE TABLEs: a ready warehouse."""
    return split_script(setup_script) + create_table_statements(plan)
