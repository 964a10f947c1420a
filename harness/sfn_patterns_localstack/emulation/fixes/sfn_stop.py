"""StopExecution must abort an execution parked on a task token (LocalStack 4.9.2).

LocalStack's ExecutionWorker.stop only flips the program state to ProgramStopped; the
task thread stays blocked in CallbackEndpoint.wait (and the state thread in
ExecutionState._evaluate_with_timeout) until a callback arrives or the task times out,
and a timeout then overwrites the stop with ProgramError (FAILED, States.Timeout).
The patch wakes every callback endpoint of the stopped execution, and lets the state
whose task was interrupted return quietly, so the program ends ABORTED at once
(ExecutionAborted history event, "Execution Status Change" ABORTED event).
"""

from __future__ import annotations

import functools
import logging

LOG = logging.getLogger(__name__)
_STOPPED = "_sfnp_execution_stopped"  # flag set on the execution's CallbackPoolManager


def apply() -> bool:
    """Patch LocalStack 4.9.2 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.asl.component.state.state_execution import (
            execute_state,
        )
        from localstack.services.stepfunctions.asl.eval.callback import callback
        from localstack.services.stepfunctions.asl.eval.program_state import ProgramStopped
        from localstack.services.stepfunctions.backend import execution_worker
    except ImportError:
        return False
    worker_cls = execution_worker.ExecutionWorker
    state_cls = execute_state.ExecutionState
    if (
        version.__version__ != "4.9.2"
        or "_pool" not in getattr(callback.CallbackPoolManager, "__annotations__", {})
        or not hasattr(callback.CallbackEndpoint, "interrupt_all")
        or not hasattr(state_cls, "_evaluate_with_timeout")
    ):
        LOG.warning(
            "sfn-patterns StopExecution patch not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(worker_cls.stop, "_sfnp_patched", False):
        return True

    original_stop = worker_cls.stop
    original_evaluate = state_cls._evaluate_with_timeout

    @functools.wraps(original_stop)
    def stop(self, stop_date, error, cause):
        original_stop(self, stop_date=stop_date, error=error, cause=cause)
        env = self.env
        if env is None or not isinstance(env.program_state(), ProgramStopped):
            return
        pool = env.callback_pool_manager  # shared by every frame (Map, Parallel) of the run
        setattr(pool, _STOPPED, True)
        for endpoint in list(pool._pool.values()):
            endpoint.interrupt_all()  # CallbackEndpoint.wait / heartbeat wait return now
            if isinstance(endpoint, callback.ActivityCallbackEndpoint):  # not yet fetched
                start = endpoint.get_activity_task_start_endpoint()
                start._outcome = getattr(start, "_outcome", None)
                start._next_activity_task_start_event.set()

    @functools.wraps(original_evaluate)
    def _evaluate_with_timeout(self, env):
        try:
            original_evaluate(self, env)
        except Exception:
            # The task was interrupted by StopExecution: no TaskTimedOut/TaskFailed, no
            # Retry/Catch; the state ends and Program records ExecutionAborted.
            if getattr(env.callback_pool_manager, _STOPPED, False) and isinstance(
                env.program_state(), ProgramStopped
            ):
                return
            raise

    stop._sfnp_patched = True
    worker_cls.stop = stop
    state_cls._evaluate_with_timeout = _evaluate_with_timeout
    return True
