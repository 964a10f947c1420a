"""examples/dag-aggregate on LocalStack: every strategy computes what a sequential run computes.

The SQL really runs: the harness serves the Redshift Data API from DuckDB. Each
strategy's state machine runs the 12 tasks through executeStatement /
batchExecuteStatement and a describeStatement poll loop; the oracles are in
example_run.py (the hand-declared edges of ``example_edges.json``, a sequential run
in a fresh DuckDB). The level strategies each apply the example here; the dependency
strategy runs on the deployment test_dependency_on_localstack.py shares among its
tests (test_the_example_matches_a_sequential_run there), which also keeps the
example's alarms: no test here reads alarms, so these two deployments apply none.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_variables
from sfn_patterns_localstack.terraform.workspace import Workspace

from .example_run import EXAMPLE, prepare, run_and_check

pytestmark = [pytest.mark.integration, pytest.mark.terraform]


@pytest.mark.parametrize("strategy", ["simple-level", "parent-level"])
def test_example_matches_a_sequential_run(
    strategy: str, localstack_endpoint: str, aws: Callable, tmp_path: Path
) -> None:
    workgroup = f"wg-{strategy}-{int(time.time()) % 100000}"
    plan = prepare(aws, workgroup)
    variables = {
        "name_prefix": f"dag-{int(time.time()) % 100000}",
        "strategy": strategy,
        **workgroup_variables(workgroup),
        "max_concurrency": 3,
        "alarms": {"create": False},
    }
    workspace = Workspace(EXAMPLE, localstack_endpoint, tmp_path / "tf")
    try:
        workspace.init()
        workspace.apply(variables)
        run_and_check(aws, workspace.outputs(), workgroup, strategy, plan)
        code, output = workspace.plan_exit_code(variables)
        assert code == 0, f"second plan is not empty:\n{output}"
    finally:
        workspace.destroy(variables)
        workspace.close()
