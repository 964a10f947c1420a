"""StopExecution ends an execution at once, whatever it is doing (LocalStack 4.14.0).

On AWS an execution is ABORTED by the time StopExecution returns: its history ends
with ExecutionAborted, no later state is entered, and its task tokens are dead (a
late SendTaskSuccess fails). A task that was running (a Lambda invoke, a ``.sync``
child) is not interrupted; its result is simply never recorded.

LocalStack 4.14.0's ``ExecutionWorker.stop`` (``backend/execution_worker.py``) only
calls ``env.set_stop``, which flips the program state to ProgramStopped, and leaves the
execution RUNNING until the thread evaluating it notices, which is when the blocking
call of its current state returns: a Lambda task when the function
returns (its TaskSucceeded is then written after the stop), a task parked on a token
when the token times out (and the timeout then overwrote the stop with FAILED,
States.Timeout), a Retry when its back-off sleep ends. Meanwhile the execution stays
RUNNING, so a SendTaskSuccess to its token is accepted.

The patch ends the execution from the StopExecution request itself:

* the ExecutionAborted event is written and the execution's status set (ABORTED,
  with the "Execution Status Change" event) before StopExecution returns;
* the history is closed after ExecutionAborted: whatever the still-running task
  thread records later (TaskSucceeded, TaskFailed, a retry) is dropped, and the
  program's own end-of-run bookkeeping (a second ExecutionAborted, a second status
  event) becomes a no-op;
* a stopped program stays stopped: an error or timeout that its lingering threads
  raise afterwards no longer turns it into FAILED or TIMED_OUT;
* threads parked on a task token, a heartbeat or an activity are woken, and a state
  whose task was interrupted returns quietly (no TaskTimedOut, no Retry or Catch), so
  they end now instead of at the token's timeout. No later state is entered: the
  state loops (program, Map, Parallel, Retry) all stop on ProgramStopped.

An execution that ended on its own is dated when its program ended, not when its
thread got round to recording the status. LocalStack 4.14.0 stamps ``stopDate`` in
``BaseExecutionWorkerCommunication._reflect_execution_status`` (``backend/execution.py``),
after the final history event; a StopExecution that came between (the program had
ended, so it changes nothing) then returned a stop date earlier than the SUCCEEDED
execution's own, as if the stop had been ignored. On AWS
the end and the stop are ordered: a SUCCEEDED execution ended before a later stop.
"""

from __future__ import annotations

import datetime
import functools
import logging
import threading

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
_STOPPED = "_sfnp_execution_stopped"  # flag set on the execution's CallbackPoolManager
_CLOSED = "_sfnp_history_closed"  # set on an EventManager once ExecutionAborted is in
_GUARD = "_sfnp_history_guard"
_TERMINATED = "_sfnp_terminated"  # set on the worker communication once status is final
_TERMINATED_LOCK = threading.Lock()
_ENDED_AT = "_sfnp_ended_at"  # set on an Environment when its program leaves Running


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.asl.component.state.state_execution import (
            execute_state,
        )
        from localstack.services.stepfunctions.asl.eval import environment
        from localstack.services.stepfunctions.asl.eval.callback import callback
        from localstack.services.stepfunctions.backend import execution, execution_worker
    except ImportError:
        return False
    worker_cls = execution_worker.ExecutionWorker
    if (
        version.__version__ != LOCALSTACK_VERSION
        or "_pool" not in getattr(callback.CallbackPoolManager, "__annotations__", {})
        or not hasattr(callback.CallbackEndpoint, "interrupt_all")
        or not hasattr(execute_state.ExecutionState, "_evaluate_with_timeout")
        or "_execution_communication" not in getattr(worker_cls, "__annotations__", {})
        or not hasattr(execution.BaseExecutionWorkerCommunication, "terminated")
        or "_state_mutex" not in getattr(environment.Environment, "__annotations__", {})
    ):
        LOG.warning(
            "sfn-patterns StopExecution patch not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(worker_cls.stop, "_sfnp_patched", False):
        return True
    _close_history_after_abort()
    _keep_stopped_final()
    _date_the_end()
    _stop_at_once()
    return True


def _close_history_after_abort() -> None:
    """Nothing is recorded after ExecutionAborted, and the final status is set once."""
    from localstack.aws.api.stepfunctions import HistoryEventType
    from localstack.services.stepfunctions.asl.eval.event import event_manager
    from localstack.services.stepfunctions.backend import execution

    manager_cls = event_manager.EventManager
    comm_cls = execution.BaseExecutionWorkerCommunication
    original_add_event = manager_cls.add_event
    original_terminated = comm_cls.terminated

    @functools.wraps(original_add_event)
    def add_event(self, context, event_type, *args, **kwargs):
        # dict.setdefault is atomic: every caller gets the same lock.
        with self.__dict__.setdefault(_GUARD, threading.Lock()):
            if getattr(self, _CLOSED, False):
                return context.last_published_event_id
            event_id = original_add_event(self, context, event_type, *args, **kwargs)
            if event_type == HistoryEventType.ExecutionAborted:
                setattr(self, _CLOSED, True)  # nothing follows ExecutionAborted
            return event_id

    @functools.wraps(original_terminated)
    def terminated(self) -> None:
        with _TERMINATED_LOCK:
            if getattr(self, _TERMINATED, False):
                return
            setattr(self, _TERMINATED, True)
        original_terminated(self)

    manager_cls.add_event = add_event
    comm_cls.terminated = terminated


def _keep_stopped_final() -> None:
    """A stopped program stays stopped: its lingering threads' errors change nothing."""
    from localstack.services.stepfunctions.asl.eval import environment
    from localstack.services.stepfunctions.asl.eval.program_state import ProgramStopped

    env_cls = environment.Environment

    def unless_stopped(original):
        @functools.wraps(original)
        def patched(self, *args, **kwargs):
            with self._state_mutex:  # an RLock: the original takes it again
                if isinstance(self._program_state, ProgramStopped):
                    return
                original(self, *args, **kwargs)

        return patched

    env_cls.set_error = unless_stopped(env_cls.set_error)
    env_cls.set_timed_out = unless_stopped(env_cls.set_timed_out)


def _date_the_end() -> None:
    """An execution that ended on its own is dated when its program ended."""
    from localstack.aws.api.stepfunctions import ExecutionStatus
    from localstack.services.stepfunctions.asl.eval import environment
    from localstack.services.stepfunctions.asl.eval.program_state import (
        ProgramRunning,
        ProgramStopped,
    )
    from localstack.services.stepfunctions.backend import execution

    env_cls = environment.Environment
    comm_cls = execution.BaseExecutionWorkerCommunication

    def dated(original):
        @functools.wraps(original)
        def patched(self, *args, **kwargs):
            with self._state_mutex:  # an RLock: the original takes it again
                was_running = isinstance(self._program_state, ProgramRunning)
                original(self, *args, **kwargs)
                state = self._program_state
                if was_running and not isinstance(state, (ProgramRunning, ProgramStopped)):
                    setattr(self, _ENDED_AT, datetime.datetime.now(tz=datetime.UTC))

        return patched

    env_cls.set_ended = dated(env_cls.set_ended)
    env_cls.set_error = dated(env_cls.set_error)
    env_cls.set_timed_out = dated(env_cls.set_timed_out)
    original_reflect = comm_cls._reflect_execution_status

    @functools.wraps(original_reflect)
    def _reflect_execution_status(self) -> None:
        original_reflect(self)
        ended_at = getattr(self.execution.exec_worker.env, _ENDED_AT, None)
        if ended_at is not None and self.execution.exec_status != ExecutionStatus.ABORTED:
            self.execution.stop_date = ended_at

    comm_cls._reflect_execution_status = _reflect_execution_status


def _wake(env) -> None:
    """Wake the threads parked on the execution's tokens, heartbeats or activities."""
    from localstack.services.stepfunctions.asl.eval.callback import callback

    pool = env.callback_pool_manager  # shared by every frame (Map, Parallel) of the run
    setattr(pool, _STOPPED, True)
    for endpoint in list(pool._pool.values()):
        endpoint.interrupt_all()  # CallbackEndpoint.wait / heartbeat wait return now
        if isinstance(endpoint, callback.ActivityCallbackEndpoint):  # not yet fetched
            start = endpoint.get_activity_task_start_endpoint()
            start._outcome = getattr(start, "_outcome", None)
            start._next_activity_task_start_event.set()


def _stop_at_once() -> None:
    """StopExecution records ExecutionAborted and ABORTED itself, then wakes the waits."""
    from localstack.aws.api.stepfunctions import ExecutionAbortedEventDetails, HistoryEventType
    from localstack.services.stepfunctions.asl.component.state.state_execution import (
        execute_state,
    )
    from localstack.services.stepfunctions.asl.eval.event.event_detail import EventDetails
    from localstack.services.stepfunctions.asl.eval.program_state import ProgramStopped
    from localstack.services.stepfunctions.backend import execution_worker

    worker_cls = execution_worker.ExecutionWorker
    state_cls = execute_state.ExecutionState
    original_stop = worker_cls.stop
    original_evaluate = state_cls._evaluate_with_timeout

    @functools.wraps(original_stop)
    def stop(self, stop_date, error, cause):
        original_stop(self, stop_date=stop_date, error=error, cause=cause)
        env = self.env
        if env is None:
            return
        state = env.program_state()
        if not isinstance(state, ProgramStopped):
            return  # it had ended already: its own thread reports how
        _wake(env)
        # End it now, as the program thread would once its current state returned.
        env.event_history_context.source_event_id = 0
        env.event_manager.add_event(
            context=env.event_history_context,
            event_type=HistoryEventType.ExecutionAborted,
            event_details=EventDetails(
                executionAbortedEventDetails=ExecutionAbortedEventDetails(
                    error=state.error, cause=state.cause
                )
            ),
        )
        self._execution_communication.terminated()  # ABORTED, and the status event

    @functools.wraps(original_evaluate)
    def _evaluate_with_timeout(self, env):
        try:
            original_evaluate(self, env)
        except Exception:
            # The task was interrupted by StopExecution: no TaskTimedOut/TaskFailed, no
            # Retry/Catch; the state ends and the program with it.
            if getattr(env.callback_pool_manager, _STOPPED, False) and isinstance(
                env.program_state(), ProgramStopped
            ):
                return
            raise

    stop._sfnp_patched = True
    worker_cls.stop = stop
    state_cls._evaluate_with_timeout = _evaluate_with_timeout
