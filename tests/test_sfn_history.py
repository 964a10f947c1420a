"""tests/sfn_history.py on a hand-written history (the shape boto3 returns)."""

from __future__ import annotations

from tests.sfn_history import states_entered


def _entered(kind: str, name: str) -> dict[str, object]:
    return {"type": f"{kind}StateEntered", "stateEnteredEventDetails": {"name": name}}


def _exited(kind: str, name: str) -> dict[str, object]:
    return {"type": f"{kind}StateExited", "stateExitedEventDetails": {"name": name}}


HISTORY = [
    {"type": "ExecutionStarted", "executionStartedEventDetails": {"input": "{}"}},
    _entered("Task", "Acquire"),
    {"type": "TaskScheduled", "taskScheduledEventDetails": {"resource": "invoke"}},
    {"type": "TaskFailed", "taskFailedEventDetails": {"error": "Lambda.ServiceException"}},
    {"type": "TaskScheduled", "taskScheduledEventDetails": {"resource": "invoke"}},
    {"type": "TaskSucceeded", "taskSucceededEventDetails": {"output": "{}"}},
    _exited("Task", "Acquire"),
    _entered("Map", "Stage 1"),
    {"type": "MapIterationStarted", "mapIterationStartedEventDetails": {"name": "Stage 1"}},
    _entered("Pass", "S1 SQL 0: a"),
    _exited("Pass", "S1 SQL 0: a"),
    {"type": "MapIterationSucceeded", "mapIterationSucceededEventDetails": {"name": "Stage 1"}},
    _exited("Map", "Stage 1"),
    _entered("Choice", "Done?"),
    {"type": "WaitStateEntered"},  # no details: names no state
    _entered("Succeed", "Done"),
    {"type": "ExecutionSucceeded", "executionSucceededEventDetails": {"output": "{}"}},
]


def test_states_entered_lists_each_entered_state_once_in_order() -> None:
    # The retried task is entered once; iteration and exit events name no entry.
    assert states_entered(HISTORY) == ["Acquire", "Stage 1", "S1 SQL 0: a", "Done?", "Done"]


def test_an_empty_history_entered_nothing() -> None:
    assert states_entered([]) == []
