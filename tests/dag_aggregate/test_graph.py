"""DAG building, fast transitive reduction, levels, L_ij groups and strategies."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from sfn_patterns_cli.dag_aggregate import graph as g
from sfn_patterns_cli.dag_aggregate.errors import CycleError
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dependencies
from sfn_patterns_cli.dag_aggregate.strategies import check_order
from sfn_patterns_cli.dag_aggregate.synthetic import random_dag

# The seed's worked example, written as "task -> tasks it reads", including two
# transitively redundant reads (4 reads 1, 5 reads 1) that the reduction must drop.
SEED = {
    "1": set(),
    "6": set(),
    "2": {"1"},
    "3": {"1"},
    "4": {"2", "6", "1"},
    "5": {"3", "4", "1"},
}


def test_seed_example_levels_groups_and_stages() -> None:
    plan = plan_from_dependencies(SEED)
    assert sorted(plan.reduced.edges) == [
        ("1", "2"), ("1", "3"), ("2", "4"), ("3", "5"), ("4", "5"), ("6", "4"),
    ]  # fmt: skip
    assert plan.level == {"1": 1, "6": 1, "2": 2, "3": 2, "4": 3, "5": 4}
    assert plan.groups == {
        "L_12": ["1"],
        "L_13": ["6"],
        "L_23": ["2"],
        "L_24": ["3"],
        "L_34": ["4"],
        "L_4E": ["5"],
    }
    stages = plan.to_json()["stages"]
    assert stages["simple-level"] == [["1", "6"], ["2", "3"], ["4"], ["5"]]
    # stage k = union_i L_ik: k=2 {1}, k=3 {6, 2}, k=4 {3, 4}, then E {5}
    assert stages["parent-level"] == [["1"], ["2", "6"], ["3", "4"], ["5"]]


def test_group_key_for_deep_levels() -> None:
    assert g.group_key(3, 4) == "L_34"
    assert g.group_key(3, "E") == "L_3E"
    assert g.group_key(9, 12) == "L_9_12"
    assert g.group_key(12, "E") == "L_12_E"


@pytest.mark.parametrize("seed", range(25))
def test_fast_reduction_equals_networkx(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 120)
    graph = g.build_graph(
        random_dag(n, seed, max_parents=rng.randint(0, 8), window=rng.randint(1, 60))
    )
    ours = g.transitive_reduction(graph)
    theirs = nx.transitive_reduction(graph)
    assert set(ours.nodes) == set(theirs.nodes)
    assert set(ours.edges) == set(theirs.edges)


def test_fast_reduction_on_dense_dag() -> None:
    # every i -> j for i < j: the reduction is the chain
    graph = nx.DiGraph((str(i), str(j)) for i in range(30) for j in range(i + 1, 30))
    assert set(g.transitive_reduction(graph).edges) == {(str(i), str(i + 1)) for i in range(29)}


def test_levels_are_longest_paths() -> None:
    graph = g.build_graph({"a": set(), "b": {"a"}, "c": {"b"}, "d": {"a"}, "e": {"d", "c"}})
    assert g.levels(graph) == {"a": 1, "b": 2, "d": 2, "c": 3, "e": 4}


@pytest.mark.parametrize("seed", range(30))
def test_both_strategies_respect_every_dependency(seed: int) -> None:
    rng = random.Random(1000 + seed)
    parents = random_dag(rng.randint(1, 300), seed, rng.randint(0, 6), rng.randint(1, 50))
    plan = plan_from_dependencies(parents)
    full = g.build_graph(parents)  # check against every read, not only reduced edges
    for name, stages in plan.stages.items():
        assert check_order(full, stages) == [], name


def test_check_order_detects_violations() -> None:
    from sfn_patterns_cli.dag_aggregate.strategies import Stage

    graph = g.build_graph({"a": set(), "b": {"a"}})
    assert check_order(graph, [Stage("x", ("a", "b"))]) == [("a", "b")]
    assert check_order(graph, [Stage("x", ("b",)), Stage("y", ("a",))]) == [("a", "b")]
    assert check_order(graph, [Stage("x", ("a",))]) == [("b", "b"), ("a", "b")]


def test_cycle_error_names_the_cycle_in_order() -> None:
    with pytest.raises(CycleError) as info:
        g.build_graph({"a": {"c"}, "b": {"a"}, "c": {"b"}, "d": {"a"}, "e": set()})
    assert info.value.cycle == ["a", "b", "c"]
    assert str(info.value).startswith("cycle: a -> b -> c -> a")


def test_two_node_cycle() -> None:
    with pytest.raises(CycleError, match=r"^cycle: x -> y -> x"):
        g.build_graph({"x": {"y"}, "y": {"x"}})
