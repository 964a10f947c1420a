"""fixes.sfn_token_index: the task-token calls look the token up, and answer as LocalStack's walk.

Executions here are LocalStack's own workers, environments and callback pools (the
patched ``ExecutionWorker._get_evaluation_environment`` names each pool); only the
execution records around them are stand-ins. Every answer is compared with what
LocalStack's unpatched method (``__wrapped__``) gives over the same store.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from localstack.aws.api.stepfunctions import ExecutionStatus, StateMachineType
from localstack.services.stepfunctions.asl.eval.callback.callback import (
    CallbackConsumerTimeout,
    CallbackOutcomeFailure,
    CallbackOutcomeSuccess,
)
from localstack.services.stepfunctions.asl.eval.evaluation_details import (
    AWSExecutionDetails,
    EvaluationDetails,
    ExecutionDetails,
    StateMachineDetails,
)
from localstack.services.stepfunctions.backend.execution_worker import ExecutionWorker
from localstack.services.stepfunctions.provider import StepFunctionsProvider

from sfn_patterns_localstack.emulation.fixes import sfn_token_index

ACCOUNT, REGION = "000000000000", "us-east-1"
MACHINE = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:m"


class _Execution:
    """An execution record around LocalStack's own worker; counts reads of its status."""

    def __init__(self, name: str, status: str = ExecutionStatus.RUNNING) -> None:
        self.exec_arn = f"arn:aws:states:{REGION}:{ACCOUNT}:execution:m:{name}"
        self._status = status
        self.status_reads = 0
        self.exec_worker = ExecutionWorker(
            evaluation_details=EvaluationDetails(
                aws_execution_details=AWSExecutionDetails(ACCOUNT, REGION, "arn:aws:iam::0:role/r"),
                execution_details=ExecutionDetails(
                    arn=self.exec_arn, name=name, role_arn="r", inpt={}, start_time="0"
                ),
                state_machine_details=StateMachineDetails(
                    arn=MACHINE, name="m", typ=StateMachineType.STANDARD, definition="{}"
                ),
            ),
            exec_comm=None,
            cloud_watch_logging_session=None,
            activity_store={},
        )
        self.exec_worker.env = self.exec_worker._get_evaluation_environment()
        self.pool = self.exec_worker.env.callback_pool_manager

    @property
    def exec_status(self) -> str:
        self.status_reads += 1
        return self._status


class _Provider:
    """What the provider's token methods use of ``self``: its stores and ``_get_executions``."""

    def __init__(self, executions: list[_Execution]) -> None:
        self.store = SimpleNamespace(executions={e.exec_arn: e for e in executions})

    def get_store(self, context: Any) -> Any:
        return self.store

    _get_executions = StepFunctionsProvider._get_executions


def _outcome(call) -> str:
    """The call's answer: the output class, or the error's class name."""
    try:
        return type(call()).__name__
    except Exception as error:  # the error is the answer compared
        return type(error).__name__


def _calls(provider: Any, token: str) -> dict[str, Any]:
    """The three calls, patched (the provider's methods) and LocalStack's own (``__wrapped__``)."""
    made = {}
    for name, args in (
        ("send_task_success", ('{"ok": 1}',)),
        ("send_task_heartbeat", ()),
        ("send_task_failure", ("E", "cause")),
    ):
        method = getattr(StepFunctionsProvider, name)
        made[name] = (
            lambda m=method, a=args: m(provider, None, token, *a),
            lambda m=method, a=args: m.__wrapped__(provider, None, token, *a),
        )
    return made


@pytest.fixture(scope="module", autouse=True)
def patched() -> None:
    assert sfn_token_index.apply() is True
    assert sfn_token_index.apply() is True  # once or twice, the same


def test_a_token_reaches_its_execution_without_reading_the_others() -> None:
    executions = [_Execution(f"e{i}") for i in range(500)]
    target = executions[250]
    token = target.pool.generate().callback_id
    endpoint = target.pool.get(token)
    provider = _Provider(executions)

    StepFunctionsProvider.send_task_success(provider, None, token, '{"ok": 1}')

    assert isinstance(endpoint.wait(timeout=0), CallbackOutcomeSuccess)
    assert sum(e.status_reads for e in executions if e is not target) == 0
    # LocalStack's own walk reads every execution's status for the same call.
    other = _Execution("other")
    token = other.pool.generate().callback_id
    walked = _Provider([*executions, other])
    StepFunctionsProvider.send_task_success.__wrapped__(walked, None, token, "{}")
    assert all(e.status_reads >= 1 for e in executions if e is not target)


def test_pools_are_named_after_their_execution() -> None:
    execution = _Execution("named")
    token = execution.pool.generate().callback_id
    assert sfn_token_index.pool_for(token) is execution.pool
    assert sfn_token_index.indexed_execution(_Provider([execution]), None, token) is execution
    # Another store (another account or region) does not hold it: no indexed answer.
    assert sfn_token_index.indexed_execution(_Provider([]), None, token) is None
    assert sfn_token_index.pool_for("no-such-token") is None


@pytest.mark.parametrize(
    "status", [ExecutionStatus.RUNNING, ExecutionStatus.SUCCEEDED, ExecutionStatus.ABORTED]
)
@pytest.mark.parametrize("call", ["send_task_success", "send_task_heartbeat", "send_task_failure"])
def test_every_answer_is_localstacks(status: str, call: str) -> None:
    """Same outcome as the walk, for a live token of an execution in each status."""
    answers = []
    for variant in (0, 1):  # patched, then LocalStack's own, each on a fresh execution
        execution = _Execution(f"{call}-{status}-{variant}", status)
        endpoint = execution.pool.generate()
        endpoint.setup_heartbeat_endpoint(60)  # a state with HeartbeatSeconds
        token = endpoint.callback_id
        provider = _Provider([_Execution("before"), execution, _Execution("after")])
        answers.append(_outcome(_calls(provider, token)[call][variant]))
    assert answers[0] == answers[1]
    # Accepted (the output, a dict) for a running execution; failure also for an ended one.
    accepted = status == ExecutionStatus.RUNNING or call == "send_task_failure"
    assert (answers[0] == "dict") is accepted, answers


@pytest.mark.parametrize("call", ["send_task_success", "send_task_heartbeat", "send_task_failure"])
def test_tokens_the_index_cannot_place_get_localstacks_answers(call: str) -> None:
    execution = _Execution(f"elsewhere-{call}")
    token = execution.pool.generate().callback_id
    # Unknown token; a token whose execution another store holds; a consumer that timed out.
    unknown = _calls(_Provider([execution]), "not-a-token")[call]
    assert _outcome(unknown[0]) == _outcome(unknown[1]) == "InvalidToken"
    other_store = _calls(_Provider([_Execution("x")]), token)[call]
    assert _outcome(other_store[0]) == _outcome(other_store[1]) == "InvalidToken"
    timed_out = _Execution(f"timed-out-{call}")
    late = timed_out.pool.generate()
    late.report(CallbackConsumerTimeout())  # the state stopped waiting: its consumer error
    answers = [_outcome(c) for c in _calls(_Provider([timed_out]), late.callback_id)[call]]
    assert answers[0] == answers[1]
    assert answers[0] in {"TaskTimedOut", "TaskDoesNotExist"}


def test_a_failure_reaches_its_execution() -> None:
    execution = _Execution("fails")
    token = execution.pool.generate().callback_id
    endpoint = execution.pool.get(token)
    StepFunctionsProvider.send_task_failure(_Provider([execution]), None, token, "E", "why")
    outcome = endpoint.wait(timeout=0)
    assert isinstance(outcome, CallbackOutcomeFailure)
    assert (outcome.error, outcome.cause) == ("E", "why")
