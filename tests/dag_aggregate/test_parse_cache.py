"""The parse cache and parallel parsing change how fast a plan is made, never what it says."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from sfn_patterns_cli.dag_aggregate.dependency import document_json, plan_document
from sfn_patterns_cli.dag_aggregate.options import RenderOptions, Target
from sfn_patterns_cli.dag_aggregate.parse_cache import ParseCache
from sfn_patterns_cli.dag_aggregate.planner import Plan, plan_from_dir
from sfn_patterns_cli.dag_aggregate.resolve import Rules
from sfn_patterns_cli.dag_aggregate.sql_deps import PARALLEL_MIN_FILES, parse_many
from sfn_patterns_cli.dag_aggregate.synthetic import sql_project

from .helpers import EXAMPLES, write_sql

RAW = Rules(external=("raw.*",))
OPTIONS = RenderOptions(target=Target(database="dev", workgroup_name="wg"))
N = 150  # above PARALLEL_MIN_FILES, so the cold plan parses in worker processes


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, set[str]]]:
    generated = sql_project(N, seed=3, window=20)
    directory = write_sql(
        tmp_path_factory.mktemp("project") / "sql", {n: s for n, (s, _) in generated.items()}
    )
    return directory, {n: parents for n, (_, parents) in generated.items()}


def _everything(plan: Plan) -> str:
    """What Terraform gets from a plan: the plan JSON and the dependency document."""
    return json.dumps(plan.to_json(), sort_keys=True) + document_json(plan_document(plan, OPTIONS))


def test_the_generated_project_plans_to_the_edges_the_generator_wrote(
    project: tuple[Path, dict[str, set[str]]],
) -> None:
    directory, parents = project
    plan = plan_from_dir(directory, rules=RAW, workers=2)
    assert N >= PARALLEL_MIN_FILES
    reads = {(p, c) for c, ps in parents.items() for p in ps}
    # Every written read is an edge of the full DAG: the reduced edges' closure.
    closure = {(p, c) for p in plan.reduced for c in nx.descendants(plan.reduced, p)}
    assert reads <= closure
    assert set(plan.reduced.edges) <= reads  # and nothing the generator did not write
    assert plan.external_sources == {"raw.events": sorted(parents)}


def test_cold_warm_and_uncached_plans_are_identical(
    project: tuple[Path, dict[str, set[str]]], tmp_path: Path
) -> None:
    directory, _ = project
    uncached = plan_from_dir(directory, rules=RAW, workers=1)
    cold = plan_from_dir(directory, rules=RAW, cache_dir=tmp_path, workers=2)
    warm = plan_from_dir(directory, rules=RAW, cache_dir=tmp_path, workers=2)
    assert cold.parse_stats == {"files": N, "parsed": N, "cached": 0}
    assert warm.parse_stats == {"files": N, "parsed": 0, "cached": N}
    assert _everything(uncached) == _everything(cold) == _everything(warm)


def test_one_changed_file_is_the_only_one_parsed(tmp_path: Path) -> None:
    directory = write_sql(
        tmp_path / "sql", {"a": "SELECT 1 AS x", "b": "SELECT x FROM agg.a", "c": "SELECT 2 AS x"}
    )
    cache = tmp_path / "cache"
    plan_from_dir(directory, cache_dir=cache)
    (directory / "c.sql").write_text("SELECT x FROM agg.b")
    changed = plan_from_dir(directory, cache_dir=cache)
    assert changed.parse_stats == {"files": 3, "parsed": 1, "cached": 2}
    assert sorted(changed.reduced.edges) == [("a", "b"), ("b", "c")]
    fresh = plan_from_dir(directory)
    assert _everything(changed) == _everything(fresh)


def test_a_cache_of_another_planner_version_or_a_corrupt_one_is_ignored(tmp_path: Path) -> None:
    directory = write_sql(tmp_path / "sql", {"a": "SELECT 1 AS x", "b": "SELECT x FROM agg.a"})
    cache_dir = tmp_path / "cache"
    plan_from_dir(directory, cache_dir=cache_dir)
    (path,) = cache_dir.glob("parse-*.json")
    data = json.loads(path.read_text())
    # A planner version that read "b" differently must not be trusted.
    for entry in data["entries"].values():
        entry["refs"] = []
    data["version"] = "0.0.0+other"
    path.write_text(json.dumps(data))
    assert plan_from_dir(directory, cache_dir=cache_dir).parse_stats["parsed"] == 2
    assert sorted(plan_from_dir(directory, cache_dir=cache_dir).reduced.edges) == [("a", "b")]
    path.write_text("{not json")
    again = plan_from_dir(directory, cache_dir=cache_dir)
    assert again.parse_stats["parsed"] == 2 and sorted(again.reduced.edges) == [("a", "b")]


def test_entries_of_deleted_files_are_dropped(tmp_path: Path) -> None:
    directory = write_sql(tmp_path / "sql", {"a": "SELECT 1 AS x", "b": "SELECT 2 AS x"})
    plan_from_dir(directory, cache_dir=tmp_path / "cache")
    (directory / "b.sql").unlink()
    plan_from_dir(directory, cache_dir=tmp_path / "cache")
    cache = ParseCache(tmp_path / "cache", directory)
    assert len(cache.entries) == 1


def test_parallel_parsing_returns_what_serial_parsing_does() -> None:
    texts = [sql for sql, _ in sql_project(PARALLEL_MIN_FILES + 10, seed=9).values()]
    texts[5] = "SELECT FROM WHERE"  # an error travels back from a worker too
    assert parse_many(texts, workers=2) == parse_many(texts, workers=1)
    assert "error" in parse_many(texts, workers=2)[5]


def test_the_example_plans_the_same_with_a_cache(tmp_path: Path) -> None:
    assert _everything(plan_from_dir(EXAMPLES)) == _everything(
        plan_from_dir(EXAMPLES, cache_dir=tmp_path)
    )
