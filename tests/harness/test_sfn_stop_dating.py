"""An execution that ended on its own is dated when its program ended (fixes.sfn_stop).

LocalStack stamps stopDate when the execution's thread records the final status,
after the final history event. A StopExecution arriving between the end and that
record changed nothing (the program had ended), yet returned a stop date earlier than
the SUCCEEDED execution's own: a semaphore fault run saw a stopped holder "succeed
after its stop". These tests drive LocalStack's own Environment and worker
communication in-process, with a pause where the race was, so they fail without the
patch whatever the machine's load.
"""

from __future__ import annotations

import datetime
import time
from types import SimpleNamespace

import pytest

from sfn_patterns_localstack.emulation.fixes import sfn_stop

PAUSE = 0.2  # seconds between the program's end and the status record


def _environment():
    from localstack.services.stepfunctions.asl.eval.environment import Environment
    from localstack.services.stepfunctions.asl.eval.event.event_manager import (
        EventHistoryContext,
    )
    from localstack.services.stepfunctions.asl.eval.program_state import ProgramRunning

    env = Environment(
        aws_execution_details=None,
        execution_type="STANDARD",
        context={
            "Execution": {"Id": "arn:x", "Input": {}, "Name": "x", "RoleArn": "r", "StartTime": ""},
            "StateMachine": {"Id": "arn:sm", "Name": "sm"},
        },
        event_history_context=EventHistoryContext.of_program_start(),
        cloud_watch_logging_session=None,
        activity_store={},
    )
    env._program_state = ProgramRunning()
    return env


def _recorded(env) -> SimpleNamespace:
    """Record the final status as the execution thread does, on a stand-in execution."""
    from localstack.services.stepfunctions.backend.execution import (
        BaseExecutionWorkerCommunication,
    )

    execution = SimpleNamespace(
        exec_worker=SimpleNamespace(env=env), stop_date=None, exec_status=None, output=None
    )
    BaseExecutionWorkerCommunication(execution)._reflect_execution_status()
    return execution


@pytest.fixture(scope="module", autouse=True)
def _patched() -> None:
    assert sfn_stop.apply() is True


@pytest.mark.parametrize("end", ["ended", "error", "timed_out"])
def test_an_execution_is_dated_when_its_program_ended(end: str) -> None:
    env = _environment()
    before = datetime.datetime.now(tz=datetime.UTC)
    if end == "ended":
        env.set_ended()
    elif end == "error":
        env.set_error({"error": "E", "cause": "c"})
    else:
        env.set_timed_out()
    after_end = datetime.datetime.now(tz=datetime.UTC)
    time.sleep(PAUSE)
    stop_requested = datetime.datetime.now(tz=datetime.UTC)  # a StopExecution here
    env.set_stop(stop_date=stop_requested, cause=None, error=None)  # changes nothing
    execution = _recorded(env)
    assert execution.exec_status in {"SUCCEEDED", "FAILED", "TIMED_OUT"}
    assert before <= execution.stop_date <= after_end < stop_requested


def test_a_stopped_execution_is_still_dated_at_its_record() -> None:
    env = _environment()
    stop_requested = datetime.datetime.now(tz=datetime.UTC)
    env.set_stop(stop_date=stop_requested, cause=None, error=None)
    env.set_error({"error": "late", "cause": "a lingering thread"})  # stays stopped
    time.sleep(PAUSE)
    execution = _recorded(env)
    assert execution.exec_status == "ABORTED"
    assert execution.stop_date >= stop_requested + datetime.timedelta(seconds=PAUSE)
