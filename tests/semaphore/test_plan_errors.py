"""Bad settings of modules/semaphore fail `terraform plan` with a message a user can act on.

The cross-variable rules (a strategy-specific setting under a strategy it does nothing
for, such as fairness outside dynamodb; the wait loop's worst-case history fits the
25,000-event limit) are only checked at plan
time, with the values known, so they are tested by planning the example.

Cases whose variables do not overlap share one plan (Terraform reports every failed
validation of a plan, each with its own message), and the plans run at once: four
plans instead of six, one after another.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.terraform.workspace import Workspace

from .. import result_cache

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "semaphore"

# name -> (the bad settings, the message the plan must give)
CASES: dict[str, tuple[dict[str, object], str]] = {
    "fifo-needs-dynamodb": (
        {"strategy": "oldest-first", "fairness": "fifo"},
        'fairness applies only to strategy "dynamodb"; strategy is "oldest-first"',
    ),
    "polling-waits-under-callback": (
        {"wait_min_seconds": 2, "wait_max_seconds": 4},
        'wait_min_seconds applies only to the polling strategies, "dynamodb" and "oldest-first"',
    ),
    "unknown-fairness": ({"fairness": "random"}, 'fairness must be "none" or "fifo"'),
    "limit-zero": ({"max_concurrency": 0}, "max_concurrency must be a whole number >= 1"),
    "unknown-strategy": (
        {"strategy": "polling"},
        'strategy must be "callback", "dynamodb" or "oldest-first"',
    ),
    # The history budget: 16 events per 1 s wait for an hour is 57,620 > 24,000.
    "dynamodb-history-budget": (
        {"strategy": "dynamodb", "wait_min_seconds": 1, "acquire_timeout_seconds": 3600},
        "the dynamodb wait loop can write up to 57620 history events (16 per wait x 3600",
    ),
    "callback-history-budget": (
        {"fallback_seconds": 1, "acquire_timeout_seconds": 31536000},
        "raise fallback_seconds",
    ),
}
# The cases planned together (no variable set twice in a plan).
PLANS = [
    ("fifo-needs-dynamodb", "limit-zero"),
    ("unknown-fairness", "unknown-strategy"),
    ("dynamodb-history-budget",),
    ("callback-history-budget", "polling-waits-under-callback"),
]


def plan_variables(names: tuple[str, ...]) -> dict[str, object]:
    merged: dict[str, object] = {"name_prefix": "sem-plan-errors"}
    for name in names:
        variables = CASES[name][0]
        assert not set(variables) & set(merged), f"{name} sets a variable twice in its plan"
        merged.update(variables)
    return merged


@pytest.fixture(scope="module")
def planned(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """case name -> (exit code, output) of the plan it was in.

    The plans depend only on the code (the example, the module) and on this file:
    tests/result_cache.py keeps them under exactly those inputs, and the checks below
    run on the kept outputs all the same.
    """
    name = f"semaphore plan errors {result_cache.files_digest(Path(__file__))}"
    yield from result_cache.built_once(request, name, lambda: _plan_all(request))


def _plan_all(request: pytest.FixtureRequest) -> dict[str, tuple[int, str]]:
    ws = Workspace(
        EXAMPLE,
        request.getfixturevalue("localstack_endpoint"),
        request.getfixturevalue("tmp_path_factory").mktemp("semaphore-plan-errors"),
    )
    ws.init()

    def plan(names: tuple[str, ...]) -> tuple[int, str]:
        # -lock=false: there is no state to protect, and the plans run at once.
        args = [
            f"-var={key}={value if isinstance(value, str) else json.dumps(value)}"
            for key, value in plan_variables(names).items()
        ]
        proc = ws.run("plan", "-input=false", "-no-color", "-lock=false", *args, check=False)
        return proc.returncode, proc.stdout + proc.stderr

    try:
        with ThreadPoolExecutor(len(PLANS)) as pool:
            results = list(pool.map(plan, PLANS))
        return {
            name: result for names, result in zip(PLANS, results, strict=True) for name in names
        }
    finally:
        ws.close()


@pytest.mark.parametrize("case", list(CASES))
def test_bad_settings_fail_the_plan_by_name(planned: dict[str, Any], case: str) -> None:
    code, output = planned[case]
    assert code == 1, output
    assert CASES[case][1] in " ".join(output.split()), output
