"""Dependency extraction: what is and is not a read, config comments, file errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sfn_patterns_cli.dag_aggregate.errors import (
    DuplicateTableError,
    SqlDirError,
    SqlParseError,
    TaskConfigError,
)
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir
from sfn_patterns_cli.dag_aggregate.resolve import Rules, resolve
from sfn_patterns_cli.dag_aggregate.sql_deps import load_tasks

from .helpers import EXAMPLES, write_sql

RAW = Rules(external=("raw.*",))


def dependencies(tasks: dict, rules: Rules = RAW) -> tuple[dict, dict]:
    resolution = resolve(tasks, rules)
    return resolution.parents, resolution.external


def deps_of(tmp_path: Path, files: dict[str, str], rules: Rules = RAW) -> tuple[dict, dict]:
    return dependencies(load_tasks(write_sql(tmp_path / "sql", files)), rules)


BASE = {"a": "SELECT 1 AS x", "b": "SELECT 2 AS x", "c": "SELECT 3 AS x"}


def test_qualified_reads_are_dependencies_declared_tables_external(tmp_path: Path) -> None:
    parents, external = deps_of(
        tmp_path,
        {
            **BASE,
            "d": "SELECT a.x FROM agg.a AS a JOIN agg.b ON TRUE "
            "JOIN raw.events e ON TRUE JOIN agg.made_elsewhere u ON TRUE",
        },
        Rules(external=("raw.*", "agg.made_elsewhere")),
    )
    assert parents["d"] == {"a", "b"}
    assert external["d"] == {"raw.events", "agg.made_elsewhere"}
    assert parents["a"] == set()


def test_comments_literals_ctes_and_aliases_are_not_reads(tmp_path: Path) -> None:
    sql = """
    -- reads agg.a? no, this is a comment
    /* agg.b in a block comment */
    WITH c AS (SELECT 'agg.a' AS s FROM raw.events)
    SELECT c.s, b.x FROM c JOIN raw.other AS b ON TRUE  -- alias b is not agg.b
    """
    parents, external = deps_of(tmp_path, {**BASE, "d": sql})
    assert parents["d"] == set()
    assert external["d"] == {"raw.events", "raw.other"}


def test_subqueries_unions_and_case_folding(tmp_path: Path) -> None:
    sql = (
        'SELECT x FROM "AGG"."A" UNION ALL SELECT x FROM AGG.B '
        "WHERE x IN (SELECT x FROM agg.c WHERE EXISTS (SELECT 1 FROM agg.c))"
    )
    parents, _ = deps_of(tmp_path, {**BASE, "d": sql})
    assert parents["d"] == {"a", "b", "c"}


def test_schema_option_changes_what_counts(tmp_path: Path) -> None:
    directory = write_sql(tmp_path / "sql", {**BASE, "d": "SELECT x FROM mart.a, agg.b"})
    parents, external = dependencies(
        load_tasks(directory, schema="mart"), Rules(external=("agg.*",))
    )
    assert parents["d"] == {"a"}
    assert external["d"] == {"agg.b"}


def test_append_self_read_is_dropped_not_a_cycle(tmp_path: Path) -> None:
    sql = "-- sfn: mode=append wait=7 timeout=60 duration=12.5\nSELECT x FROM agg.d, agg.a"
    tasks = load_tasks(write_sql(tmp_path / "sql", {**BASE, "d": sql}))
    parents, _ = dependencies(tasks)
    assert parents["d"] == {"a"}
    task = tasks["d"]
    assert (task.mode, task.wait_seconds, task.timeout_seconds, task.duration_seconds) == (
        "append",
        7,
        60,
        12.5,
    )
    assert tasks["a"].mode == "reload"


def test_reload_self_read_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(TaskConfigError, match=r"d\.sql:1: reads its own table agg\.d"):
        resolve(load_tasks(write_sql(tmp_path / "sql", {"d": "SELECT x FROM agg.d"})))


def test_sidecar_overrides_comment(tmp_path: Path) -> None:
    directory = write_sql(tmp_path / "sql", {"d": "-- sfn: mode=reload\nSELECT 1 AS x"})
    (directory / "d.json").write_text('{"mode": "append", "wait": 3}')
    task = load_tasks(directory)["d"]
    assert (task.mode, task.wait_seconds) == ("append", 3)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("mode=upsert", "mode must be one of reload, append"),
        ("speed=3", "unknown key 'speed'"),
        ("tags=a,b/c", "bad tags entry 'b/c'"),
        ("external=raw", "bad external entry 'raw'"),
        ("wait=soon", "wait must be a number"),
        ("append", "expected key=value"),
    ],
)
def test_bad_config_names_file_and_line(tmp_path: Path, config: str, message: str) -> None:
    directory = write_sql(tmp_path / "sql", {"d": f"-- about d\n-- sfn: {config}\nSELECT 1"})
    with pytest.raises(TaskConfigError, match=message) as info:
        load_tasks(directory)
    assert f"{directory / 'd.sql'}:2:" in str(info.value)


def test_invalid_sql_names_file_line_and_column(tmp_path: Path) -> None:
    directory = write_sql(
        tmp_path / "sql", {"a": "SELECT 1", "bad": "SELECT x\nFROM agg.a\nWHERE ("}
    )
    with pytest.raises(SqlParseError) as info:
        load_tasks(directory)
    err = info.value
    assert err.path == directory / "bad.sql"
    assert err.line == 3
    assert str(err).startswith(f"{directory / 'bad.sql'}:3:{err.column}: invalid SQL")


def test_unterminated_string_position(tmp_path: Path) -> None:
    directory = write_sql(tmp_path / "sql", {"bad": "SELECT 1\nFROM raw.t WHERE s = 'oops"})
    with pytest.raises(SqlParseError) as info:
        load_tasks(directory)
    assert (info.value.line, info.value.column) == (2, 22)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("INSERT INTO agg.x SELECT 1", "expected a SELECT"),
        ("SELECT 1; SELECT 2", "exactly one statement"),
        ("   \n", "file is empty"),
    ],
)
def test_non_select_files_are_rejected(tmp_path: Path, sql: str, message: str) -> None:
    with pytest.raises(SqlParseError, match=message):
        load_tasks(write_sql(tmp_path / "sql", {"x": sql}))


def test_duplicate_table_names_both_files(tmp_path: Path) -> None:
    directory = write_sql(tmp_path / "sql", {"a": "SELECT 1"})
    (directory / "A.SQL").write_text("SELECT 2")
    with pytest.raises(DuplicateTableError) as info:
        load_tasks(directory)
    message = str(info.value)
    assert "agg.a" in message
    assert "a.sql" in message
    assert "A.SQL" in message


def test_missing_and_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(SqlDirError, match="does not exist"):
        load_tasks(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hi")
    with pytest.raises(SqlDirError, match=r"no \*\.sql files"):
        load_tasks(tmp_path / "empty")


def test_example_reads_are_exactly_the_hand_declared_edges() -> None:
    declared = json.loads((Path(__file__).with_name("example_edges.json")).read_text())
    parents, external = dependencies(load_tasks(EXAMPLES), Rules())
    assert {(p, c) for c, ps in parents.items() for p in ps} == {
        tuple(edge) for edge in declared["edges"]
    }
    assert set().union(*external.values()) == set(declared["external"])


def test_example_sql_dir_matches_its_documented_shape() -> None:
    plan = plan_from_dir(EXAMPLES)
    assert len(plan.level) == 12
    assert max(plan.level.values()) >= 4
    assert plan.external_sources == {"raw.events": sorted(plan.external_sources["raw.events"])}
    assert set(plan.external_sources) == {"raw.events"}
    # comment / literal / CTE / alias traps in the examples create no edge:
    edges = set(plan.reduced.edges)
    assert ("daily_revenue", "user_purchases") not in edges
    assert ("user_segments", "kpi_overview") not in edges
    # the redundant read daily_events -> revenue_stats is removed by the reduction
    assert ("daily_events", "revenue_stats") not in edges
    assert ("daily_revenue", "revenue_stats") in edges
    assert plan.tasks["event_batches"].mode == "append"
    assert any(len(list(plan.reduced.predecessors(t))) >= 3 for t in plan.level)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "SELECT a FROM raw.x WHERE",
            "invalid SQL: incomplete WHERE clause: nothing valid follows 'WHERE'",
        ),
        (
            "SELECT a FROM raw.x WHERE a =",
            "invalid SQL: incomplete comparison: nothing valid follows '='",
        ),
        ("SELEC a FROM raw.x", "invalid SQL: unexpected 'FROM' (a misspelled keyword"),
        ("SELECT (a FROM raw.x", "invalid SQL: Expecting ) near 'FROM'"),
    ],
)
def test_a_syntax_error_is_said_in_sql_words_not_the_parsers(
    tmp_path: Path, sql: str, message: str
) -> None:
    """sqlglot names what it could not complete by its Python class; the user wrote SQL."""
    with pytest.raises(SqlParseError) as info:
        load_tasks(write_sql(tmp_path / "sql", {"bad": sql}))
    assert message in str(info.value)
    assert "<class" not in str(info.value) and "sqlglot" not in str(info.value)
