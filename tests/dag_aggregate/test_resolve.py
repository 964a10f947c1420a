"""Strict resolution: a task, a declared external table, or an error naming file, line and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from sfn_patterns_cli.dag_aggregate.errors import UnresolvedTableError
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir
from sfn_patterns_cli.dag_aggregate.resolve import Rules, resolve
from sfn_patterns_cli.dag_aggregate.sql_deps import load_tasks

from .helpers import write_sql

TASKS = {"daily_revenue": "SELECT 1 AS x", "daily_events": "SELECT 2 AS x"}


def _resolve(tmp_path: Path, files: dict[str, str], rules: Rules | None = None):  # type: ignore[no-untyped-def]
    return resolve(load_tasks(write_sql(tmp_path / "sql", {**TASKS, **files})), rules)


def test_a_misspelled_task_is_an_error_naming_file_line_table_and_the_closest_task(
    tmp_path: Path,
) -> None:
    sql = "SELECT x\nFROM agg.daily_events\nJOIN agg.daily_revnue ON TRUE"
    with pytest.raises(UnresolvedTableError) as info:
        _resolve(tmp_path, {"kpi": sql}, Rules(external=("raw.*",)))
    err = info.value
    assert (err.path.name, err.line, err.table) == ("kpi.sql", 3, "agg.daily_revnue")
    message = str(err)
    assert message.startswith(
        f"{tmp_path / 'sql' / 'kpi.sql'}:3: unresolved table agg.daily_revnue"
    )
    assert "did you mean agg.daily_revenue?" in message
    assert "\n" not in message  # Terraform shows it as one line


@pytest.mark.parametrize(
    ("rules", "declaration"),
    [
        (None, "--external 'staging.*'"),  # the CLI's flag
        (Rules(declare_with="external_tables"), 'external_tables = ["staging.*"]'),  # module
    ],
)
def test_an_undeclared_table_of_another_schema_is_an_error_saying_how_to_declare_it(
    tmp_path: Path, rules: Rules | None, declaration: str
) -> None:
    with pytest.raises(UnresolvedTableError) as info:
        _resolve(tmp_path, {"kpi": "SELECT 1 FROM staging.orders"}, rules)
    assert declaration in str(info.value)
    assert "-- sfn: external=staging.orders" in str(info.value)


def test_every_unresolved_read_is_counted_in_one_message(tmp_path: Path) -> None:
    files = {
        "k1": "SELECT 1 FROM raw.a",
        "k2": "SELECT 1 FROM raw.b",
        "k3": "SELECT 1 FROM agg.nope",
    }
    with pytest.raises(UnresolvedTableError, match=r"and 2 more unresolved: k2\.sql:1 raw\.b"):
        _resolve(tmp_path, files)


def test_declared_patterns_from_the_module_and_from_the_file(tmp_path: Path) -> None:
    files = {
        "kpi": "-- sfn: external=public.dim_*,shop.sales.orders\n"
        "SELECT 1 FROM raw.events, public.dim_user, shop.sales.orders, agg.daily_events",
    }
    resolution = _resolve(tmp_path, files, Rules(external=("raw.*",)))
    assert resolution.parents["kpi"] == {"daily_events"}
    assert resolution.external["kpi"] == {"raw.events", "public.dim_user", "shop.sales.orders"}


def test_a_file_pattern_applies_to_that_file_only(tmp_path: Path) -> None:
    files = {
        "one": "-- sfn: external=raw.*\nSELECT 1 FROM raw.events",
        "two": "SELECT 1 FROM raw.events",
    }
    with pytest.raises(UnresolvedTableError, match=r"two\.sql:1: unresolved table raw\.events"):
        _resolve(tmp_path, files)


def test_unqualified_names_resolve_through_the_search_path(tmp_path: Path) -> None:
    files = {"kpi": "SELECT 1 FROM daily_events, dim_user, orders"}
    rules = Rules(
        external=("public.dim_*", "etl_user.orders"),
        search_path=("$user", "agg", "public"),
        user="etl_user",
    )
    resolution = _resolve(tmp_path, files, rules)
    assert resolution.parents["kpi"] == {"daily_events"}
    assert resolution.external["kpi"] == {"public.dim_user", "etl_user.orders"}


def test_an_unqualified_task_name_off_the_search_path_is_an_error_not_external(
    tmp_path: Path,
) -> None:
    # Redshift's default search path has no agg: "daily_events" is not agg.daily_events.
    with pytest.raises(UnresolvedTableError) as info:
        _resolve(tmp_path, {"kpi": "SELECT 1 FROM daily_events"}, Rules(external=("raw.*",)))
    message = str(info.value)
    assert "unqualified table daily_events is not found on the search path ($user, public)" in (
        message
    )
    assert "did you mean the task agg.daily_events? qualify it" in message


def test_a_wildcard_before_a_task_on_the_search_path_is_ambiguous(tmp_path: Path) -> None:
    rules = Rules(external=("public.*",), search_path=("public", "agg"))
    with pytest.raises(UnresolvedTableError, match="ambiguous: daily_events resolves to public"):
        _resolve(tmp_path, {"kpi": "SELECT 1 FROM daily_events"}, rules)
    # An exact declaration is a decision, not a guess.
    exact = Rules(external=("public.daily_events",), search_path=("public", "agg"))
    resolution = _resolve(tmp_path, {"kpi": "SELECT 1 FROM daily_events"}, exact)
    assert resolution.external["kpi"] == {"public.daily_events"}


def test_cte_scope_decides_what_an_unqualified_name_is(tmp_path: Path) -> None:
    rules = Rules(external=("raw.*",), search_path=("agg",))
    sql = (
        "WITH first AS (SELECT 1 AS x FROM raw.events),\n"
        "     second AS (SELECT x FROM first)\n"  # an earlier sibling: the CTE
        "SELECT * FROM second\n"
        "UNION ALL SELECT * FROM (\n"
        "  WITH daily_events AS (SELECT 1 AS x) SELECT * FROM daily_events) s\n"
        "UNION ALL SELECT x FROM daily_revenue"  # no CTE of that name is visible here
    )
    resolution = _resolve(tmp_path, {"kpi": sql}, rules)
    assert resolution.parents["kpi"] == {"daily_revenue"}
    # A CTE of one subquery does not hide a table in another subquery.
    other = (
        "SELECT * FROM (WITH daily_events AS (SELECT 1 AS x) SELECT * FROM daily_events) a, "
        "(SELECT x FROM daily_events) b"
    )
    assert _resolve(tmp_path / "2", {"kpi": other}, rules).parents["kpi"] == {"daily_events"}


def test_a_recursive_cte_reads_itself_not_a_task(tmp_path: Path) -> None:
    sql = (
        "WITH RECURSIVE daily_revenue (n) AS (\n"
        "  SELECT 1 UNION ALL SELECT n + 1 FROM daily_revenue WHERE n < 3)\n"
        "SELECT n FROM daily_revenue"
    )
    rules = Rules(search_path=("agg",))
    assert _resolve(tmp_path, {"kpi": sql}, rules).parents["kpi"] == set()


def test_the_plan_lists_the_external_tables_actually_read(tmp_path: Path) -> None:
    files = {
        "kpi": "SELECT 1 FROM raw.events, agg.daily_events",
        "other": "SELECT 1 FROM raw.users",
    }
    directory = write_sql(tmp_path / "sql", {**TASKS, **files})
    plan = plan_from_dir(directory, rules=Rules(external=("raw.*", "never.read")))
    assert plan.external_sources == {"raw.events": ["kpi"], "raw.users": ["other"]}
    assert plan.to_json()["external_sources"] == plan.external_sources
