"""Bad settings of modules/semaphore fail `terraform plan` with a message a user can act on.

The cross-variable rules (fifo fairness needs the dynamodb strategy; the wait
loop's worst-case history fits the 25,000-event limit) are only checked at plan
time, with the values known, so they are tested by planning the example.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "semaphore"


@pytest.fixture(scope="module")
def workspace(
    localstack_endpoint: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    ws = Workspace(EXAMPLE, localstack_endpoint, tmp_path_factory.mktemp("semaphore-plan-errors"))
    ws.init()
    try:
        yield ws
    finally:
        ws.close()


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"strategy": "oldest-first", "fairness": "fifo"},
            'fairness "fifo" needs strategy "dynamodb"',
        ),
        ({"fairness": "random"}, 'fairness must be "none" or "fifo"'),
        ({"semaphore_limit": 0}, "semaphore_limit must be a whole number >= 1"),
        ({"strategy": "polling"}, 'strategy must be "callback", "dynamodb" or "oldest-first"'),
        # The history budget: 16 events per 1 s wait for an hour is 57,620 > 24,000.
        (
            {"strategy": "dynamodb", "wait_min_seconds": 1, "acquire_timeout_seconds": 3600},
            "the dynamodb wait loop can write up to 57620 history events (16 per wait x 3600",
        ),
        (
            {"fallback_seconds": 1, "acquire_timeout_seconds": 31536000},
            "raise fallback_seconds",
        ),
    ],
)
def test_bad_settings_fail_the_plan_by_name(
    workspace: Workspace, variables: dict[str, object], message: str
) -> None:
    code, output = workspace.plan_exit_code({"name_prefix": "sem-plan-errors", **variables})
    assert code == 1, output
    assert message in " ".join(output.split()), output
