"""A Task attempt has one outcome (fixes.sfn_task_timeout), in-process.

LocalStack runs a task in a thread and waits TimeoutSeconds for it; the thread goes
on after the wait runs out. These tests drive LocalStack's own
``ExecutionState._evaluate_with_timeout`` and ``StateTaskService._after_eval_execution``
on a real Environment, with a pause where each race is, so they fail without the patch
whatever the machine's load. (tests/harness/test_step_functions_fixes.py shows the
same on a real execution: a waitForTaskToken task submitted after its timeout.)
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from sfn_patterns_localstack.emulation.fixes import sfn_task_timeout

from .test_sfn_stop_dating import _environment

TIMEOUT = 0.2  # the state's TimeoutSeconds
PAUSE = 0.4  # how long the task's last step takes


@pytest.fixture(scope="module", autouse=True)
def _patched() -> None:
    assert sfn_task_timeout.apply() is True


def _state(task_starts_at: float, recording_takes: float) -> SimpleNamespace:
    """A Task state whose task returns after ``task_starts_at`` s, its event then taking a while."""
    from localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service.state_task_service import (  # noqa: E501
        StateTaskService,
    )

    state = SimpleNamespace(
        timeout=SimpleNamespace(eval=lambda env: env.stack.append(TIMEOUT)),
        assign_decl=None,
        result_selector=None,
        result_path=None,
        _is_language_query_jsonpath=lambda: True,
        _get_sfn_resource=lambda: "lambda:invoke",
        _get_sfn_resource_type=lambda: "lambda",
        # Called inside _after_eval_execution, before the TaskSucceeded event.
        _verify_size_quota=lambda env, value: time.sleep(recording_takes),
    )

    def _eval_execution(frame: Any) -> None:
        time.sleep(task_starts_at)
        frame.stack.append({"ok": 1})
        StateTaskService._after_eval_execution(
            state,
            frame,
            resource_runtime_part=None,
            normalised_parameters={},
            state_credentials=None,
        )

    state._eval_execution = _eval_execution
    return state


def _events(env: Any) -> list[str]:
    return [str(e["type"]) for e in env.event_manager.get_event_history()]


def _evaluate(state: SimpleNamespace, env: Any) -> str:
    from localstack.services.stepfunctions.asl.component.state.state_execution.execute_state import (  # noqa: E501
        ExecutionState,
    )

    try:
        ExecutionState._evaluate_with_timeout(state, env)
    except TimeoutError:
        return "timed_out"
    return "succeeded"


def test_a_task_that_claimed_success_before_the_timeout_succeeds_only() -> None:
    """Done just before the timeout, still recording its event when the wait runs out."""
    env = _environment()
    env.stack.append({"input": 1})
    outcome = _evaluate(_state(task_starts_at=TIMEOUT / 2, recording_takes=PAUSE), env)
    assert outcome == "succeeded"  # plain 4.14.0: timed_out, after TaskSucceeded was recorded
    assert _events(env) == ["TaskSucceeded"]
    assert env.states.get_input() == {"ok": 1}


def test_a_task_that_returns_after_its_timeout_records_nothing() -> None:
    env = _environment()
    env.stack.append({"input": 1})
    assert _evaluate(_state(task_starts_at=TIMEOUT + 0.1, recording_takes=0), env) == "timed_out"
    time.sleep(TIMEOUT + 0.3)  # the task thread has returned meanwhile
    assert _events(env) == []  # plain 4.14.0: TaskSucceeded, after the state had moved on
