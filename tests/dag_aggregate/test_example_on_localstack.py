"""examples/dag-aggregate on LocalStack: every strategy computes what a sequential run computes.

The SQL really runs: the harness serves the Redshift Data API from DuckDB. Each
strategy's state machine runs the 12 tasks through executeStatement /
batchExecuteStatement and a describeStatement poll loop; the oracles are in
example_run.py (the hand-declared edges of ``example_edges.json``, a sequential run
in a fresh DuckDB). The level strategies share ONE deployment here: the example's
module call once per strategy, each on a workgroup of its own (tests/dag_aggregate/
level_strategies), applied, run at once, second-plan-checked and destroyed once (two
deployments of the example cost two of each). The dependency strategy runs on the
deployment test_dependency_on_localstack.py shares among its tests
(test_the_example_matches_a_sequential_run there), which applies the example itself
and keeps its alarms: no test here reads alarms, so this deployment applies none.

Both runs meet injected faults for the level strategies (fault_plan): the state
machines' Data API calls throttled, their first completion events delivered twice,
their completion function's first invocation killed.
The oracles above are the invariants: every task ran once (one statement each, the
tables a sequential run's), and the run succeeded.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_variables
from sfn_patterns_localstack.terraform.workspace import Workspace

from .example_run import prepare, run_and_check

# Every run executes its statements through the Redshift Data API (tests/portable.py).
pytestmark = [pytest.mark.integration, pytest.mark.terraform, pytest.mark.needs("redshift-data")]

CONFIG = Path(__file__).resolve().parent / "level_strategies"
STRATEGIES = ("simple-level", "parent-level")


def fault_plan(deployments: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The injected faults for each level strategy's run.

    Its Data API calls throttled (the first of each kind for sure, then one in five),
    its first two completion events delivered twice, its completion function's first
    invocation killed mid-invoke (a park, whose Runtime.ExitError the Task retries, or
    an event's delivery, which Lambda's asynchronous retries repeat).
    """
    faults_: list[dict[str, Any]] = []
    for deployment in deployments.values():
        role = deployment["role_arn"]
        for operation in ("ExecuteStatement", "BatchExecuteStatement"):
            throttle = {
                "service": "redshift-data",
                "operation": operation,
                "kind": "throttle",
                "caller_role": role,
            }
            faults_ += [{**throttle, "first": 1}, {**throttle, "probability": 0.2}]
        faults_.append(
            {
                "service": "events",
                "operation": "PutEvents",
                "kind": "event_duplicate",
                "resource": deployment["completion_rule_name"],
                "first": 2,
            }
        )
        faults_.append(
            {
                "service": "lambda",
                "operation": "Invoke",
                "kind": "kill",
                "resource": f"*{deployment['completion_function']}",
                "first": 1,
            }
        )
    return {"seed": 28, "faults": faults_}


@pytest.fixture(scope="module")
def level_strategies(
    localstack_endpoint: str, aws: Callable, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Both level strategies applied; each strategy's run, what it raised (None: held).

    Both run at once, each on its own workgroup (the oracles list a workgroup's
    statements: each run sees only its own). Then the second plan, then the destroy
    and its leftover check (Workspace.applied).
    """
    suffix = uuid.uuid4().hex[:6]
    workgroups = {strategy: f"wg-{strategy}-{suffix}" for strategy in STRATEGIES}
    plans = {strategy: prepare(aws, workgroup) for strategy, workgroup in workgroups.items()}
    variables = {
        "name_prefix": f"dag-{suffix}",
        "strategies": {
            strategy: {
                "workgroup_name": wg["redshift_workgroup_name"],
                "workgroup_id": wg["redshift_workgroup_id"],
            }
            for strategy, wg in ((s, workgroup_variables(w)) for s, w in workgroups.items())
        },
    }
    workspace = Workspace(CONFIG, localstack_endpoint, tmp_path_factory.mktemp("level") / "tf")
    with workspace.applied(variables) as outputs:
        deployments = outputs["deployments"]
        assert sorted(deployments) == sorted(STRATEGIES)
        with (
            faults.applied(localstack_endpoint, fault_plan(deployments)),
            ThreadPoolExecutor(max_workers=len(STRATEGIES)) as pool,
        ):
            futures = {
                strategy: pool.submit(
                    run_and_check,
                    aws,
                    deployments[strategy],
                    workgroups[strategy],
                    strategy,
                    plans[strategy],
                )
                for strategy in STRATEGIES
            }
            raised = {strategy: future.exception() for strategy, future in futures.items()}
            log = faults.log(localstack_endpoint)
        code, output = workspace.plan_exit_code(variables)
        yield {"raised": raised, "plan": (code, output), "log": log, "deployments": deployments}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_example_matches_a_sequential_run(strategy: str, level_strategies: dict[str, Any]) -> None:
    error = level_strategies["raised"][strategy]
    if error is not None:
        raise error


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_run_met_the_fault_plan(strategy: str, level_strategies: dict[str, Any]) -> None:
    """The runs above held under the faults they are about (else they proved nothing)."""
    deployment = level_strategies["deployments"][strategy]
    met = {
        (entry["operation"], entry["kind"])
        for entry in level_strategies["log"]
        if deployment["role_arn"].rsplit("/", 1)[-1] in str(entry.get("caller"))
        or entry.get("resource") == deployment["completion_rule_name"]
        or str(entry.get("resource")).endswith(deployment["completion_function"])
    }
    assert ("PutEvents", "event_duplicate") in met, met
    assert ("Invoke", "kill") in met, met
    assert {"ExecuteStatement", "BatchExecuteStatement"} & {
        op for op, kind in met if kind == "throttle"
    }, met


def test_the_level_strategies_plan_no_change(level_strategies: dict[str, Any]) -> None:
    code, output = level_strategies["plan"]
    assert code == 0, f"second plan is not empty:\n{output}"
