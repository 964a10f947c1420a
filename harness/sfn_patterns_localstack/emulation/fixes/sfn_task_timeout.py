"""A Task state ends once: a task that lost to its timeout records nothing more (LocalStack 4.14.0).

On AWS a Task attempt has one outcome. Its ``TimeoutSeconds`` covers the whole task,
the call that submits it included; once ``TaskTimedOut`` is in the history, nothing
that task does later is recorded.

LocalStack 4.14.0 (``ExecutionState._evaluate_with_timeout``) runs the task in a thread
and waits ``TimeoutSeconds`` for it. When the wait runs out it records ``TaskTimedOut``
and moves on, but the thread goes on too:

* a ``.waitForTaskToken`` task whose submitting call (the Lambda invoke that stores
  the token) returns after the timeout then records ``TaskSubmitted``, waits on its
  token once more, and records ``TaskSucceeded`` when a ``SendTaskSuccess`` comes;
* a task that finishes as the timeout runs out records ``TaskSucceeded`` while the
  timeout records ``TaskTimedOut``: one attempt, two outcomes.

Either puts an event in the history that AWS never writes (a dag-aggregate history
test, whose event-completion parks time out every 3 s, saw 100 events where AWS's
formula gives 99), and hands a result to a state that has already moved on.

The patch makes each attempt's outcome one decision. The task thread claims it before
recording ``TaskSucceeded``; the timeout claims it when the wait runs out; whoever
comes second yields. A task that finished first is waited for and its result used,
as if it had finished a moment earlier; a task that lost records neither
``TaskSubmitted`` nor ``TaskSucceeded`` any more.
"""

from __future__ import annotations

import copy
import functools
import logging
import threading
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
_DECISION = "_sfnp_attempt_decision"  # on the task's frame: None, "succeeded" or "timed_out"
_LOCK = "_sfnp_attempt_lock"
# A task that claimed success has only its event and a return left: wait this long at most.
_FINISH_SECONDS = 60.0


class Superseded(Exception):
    """Raised in a task thread whose attempt already timed out: it records nothing more."""


def _claim(env: Any, outcome: str) -> bool:
    """Decide the attempt's outcome unless already decided; whether ``outcome`` is it."""
    lock = env.__dict__.get(_LOCK)
    if lock is None:  # not a frame of a timed task (another code path): as LocalStack does
        return True
    with lock:
        decided = env.__dict__.get(_DECISION)
        if decided is None:
            env.__dict__[_DECISION] = outcome
            return True
        return decided == outcome


def _timed(frame: Any) -> None:
    frame.__dict__[_LOCK] = threading.Lock()
    frame.__dict__[_DECISION] = None


def _evaluate_with_timeout(self: Any, env: Any) -> None:
    """LocalStack 4.14.0's ExecutionState._evaluate_with_timeout; changes marked "one outcome"."""
    from localstack.services.stepfunctions.asl.component.common.timeouts.timeout import (
        EvalTimeoutError,
    )
    from localstack.utils.common import TMP_THREADS

    self.timeout.eval(env=env)
    timeout_seconds: int = env.stack.pop()

    frame = env.open_frame()
    frame.states.reset(input_value=env.states.get_input())
    frame.stack = copy.deepcopy(env.stack)
    _timed(frame)  # one outcome
    execution_outputs: list[Any] = []
    execution_exceptions: list[Exception | None] = [None]
    terminated_event = threading.Event()

    def _exec_and_notify() -> None:
        try:
            self._eval_execution(frame)
            execution_outputs.extend(frame.stack)
        except Superseded:  # one outcome: the timeout decided it
            pass
        except Exception as ex:
            execution_exceptions.append(ex)
        terminated_event.set()

    thread = threading.Thread(target=_exec_and_notify, daemon=True)
    TMP_THREADS.append(thread)
    thread.start()

    finished_on_time: bool = terminated_event.wait(timeout_seconds)
    if not finished_on_time and not _claim(frame, "timed_out"):
        # One outcome: the task claimed success first and is recording it.
        finished_on_time = terminated_event.wait(_FINISH_SECONDS)
    frame.set_ended()
    env.close_frame(frame)

    execution_exception = execution_exceptions.pop()
    if execution_exception:
        raise execution_exception

    if not finished_on_time:
        raise EvalTimeoutError()

    execution_output = execution_outputs.pop()
    env.stack.append(execution_output)

    if not self._is_language_query_jsonpath():
        env.states.set_result(execution_output)

    if self.assign_decl:
        self.assign_decl.eval(env=env)

    if self.result_selector:
        self.result_selector.eval(env=env)

    if self.result_path:
        self.result_path.eval(env)
    else:
        res = env.stack.pop()
        env.states.reset(input_value=res)


def _succeeded_once(original: Any) -> Any:
    """TaskSucceeded only when the attempt's outcome is still open (or already success)."""

    @functools.wraps(original)
    def _after_eval_execution(self: Any, env: Any, *args: Any, **kwargs: Any) -> None:
        if not _claim(env, "succeeded"):
            raise Superseded
        original(self, env, *args, **kwargs)

    return _after_eval_execution


def _submitted_unless_timed_out(original: Any) -> Any:
    """No TaskSubmitted, and no wait on the token, once the attempt timed out."""

    @functools.wraps(original)
    def _after_eval_execution(self: Any, env: Any, *args: Any, **kwargs: Any) -> None:
        lock = env.__dict__.get(_LOCK)
        if lock is not None:
            with lock:
                if env.__dict__.get(_DECISION) == "timed_out":
                    raise Superseded
        original(self, env, *args, **kwargs)

    return _after_eval_execution


def apply() -> bool:
    """Patch 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.asl.component.state.state_execution import (
            execute_state,
        )
        from localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service import (  # noqa: E501
            state_task_service,
            state_task_service_callback,
        )
    except ImportError:
        return False
    state_cls = execute_state.ExecutionState
    service_cls = state_task_service.StateTaskService
    callback_cls = state_task_service_callback.StateTaskServiceCallback
    if version.__version__ != LOCALSTACK_VERSION or not all(
        hasattr(cls, name)
        for cls, name in (
            (state_cls, "_evaluate_with_timeout"),
            (service_cls, "_after_eval_execution"),
            (callback_cls, "_after_eval_execution"),
        )
    ):
        LOG.warning(
            "sfn-patterns task timeout patch not applied (localstack %s)", version.__version__
        )
        return False
    if state_cls._evaluate_with_timeout is _evaluate_with_timeout:
        return True
    state_cls._evaluate_with_timeout = _evaluate_with_timeout
    service_cls._after_eval_execution = _succeeded_once(service_cls._after_eval_execution)
    callback_cls._after_eval_execution = _submitted_unless_timed_out(
        callback_cls._after_eval_execution
    )
    return True
