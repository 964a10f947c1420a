"""SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat look a task token up (LocalStack 4.14.0).

AWS finds a token's execution from the token. LocalStack 4.14.0's provider finds it by
walking every execution of the region: SendTaskSuccess and SendTaskHeartbeat filter
them all down to the RUNNING ones (a Python ``lambda`` per execution, after a copy of
the store's values) and ask each one's callback pool in turn; SendTaskFailure asks
every execution's pool. Each call therefore cost a pass over every execution the
LocalStack process had ever run, under the interpreter lock: 0.34 ms with 1,000
executions and 1.39 ms with 6,000 (the filter alone, timed on its own on 4.9.2; 4.14.0's
``provider.py`` keeps ``_get_executions`` and the three methods as they were), and
bench_scale's dag-aggregate makes one SendTaskSuccess per task (when its Data API
statement's event arrives), after the earlier sizes' executions.

Here each callback pool (one per execution: its Map and Parallel frames share it)
records every token it issues (``CallbackPoolManager.add``, ``add_activity_task``)
in a process-wide index, token -> pool, held weakly, and each pool knows its
execution's ARN (set when the execution's worker builds its environment). The three
calls look the token up, take that ARN's execution from the caller's own store (so
another account's or region's token stays invalid), and run LocalStack's own loop
over that one execution: SendTaskSuccess and SendTaskHeartbeat only if it is
RUNNING, every outcome and error (InvalidToken, TaskDoesNotExist, TaskTimedOut) as
LocalStack's. A token the index cannot place (an environment built elsewhere, such
as TestState's, or a pool no longer in the store) takes LocalStack's own walk, so
the answer never differs from it: a token belongs to one pool (a uuid, and a pool
refuses a duplicate), so the walk could only have found that execution.
"""

from __future__ import annotations

import functools
import logging
import weakref
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
_ARN = "_sfnp_execution_arn"  # set on an execution's CallbackPoolManager
_POOLS: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def pool_for(token: str) -> Any | None:
    """The callback pool that issued ``token``, or None (unknown, or its execution is gone)."""
    return _POOLS.get(token)


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions import provider
        from localstack.services.stepfunctions.asl.eval.callback import callback
        from localstack.services.stepfunctions.backend import execution_worker
    except ImportError:
        return False
    provider_cls = provider.StepFunctionsProvider
    worker_cls = execution_worker.ExecutionWorker
    if (
        version.__version__ != LOCALSTACK_VERSION
        or "_pool" not in getattr(callback.CallbackPoolManager, "__annotations__", {})
        or not hasattr(worker_cls, "_get_evaluation_environment")
        or not hasattr(provider_cls, "_get_executions")
    ):
        LOG.warning(
            "sfn-patterns task token index not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(provider_cls.send_task_success, "_sfnp_patched", False):
        return True
    _index_tokens(callback.CallbackPoolManager)
    _name_pools(worker_cls)
    _look_up(provider_cls)
    return True


def _index_tokens(pool_cls: Any) -> None:
    """Every token a pool issues goes into the index."""
    original_add = pool_cls.add
    original_add_activity = pool_cls.add_activity_task

    @functools.wraps(original_add)
    def add(self, callback_id):
        endpoint = original_add(self, callback_id)
        _POOLS[callback_id] = self
        return endpoint

    @functools.wraps(original_add_activity)
    def add_activity_task(self, callback_id, *args, **kwargs):
        endpoint = original_add_activity(self, callback_id, *args, **kwargs)
        _POOLS[callback_id] = self
        return endpoint

    pool_cls.add = add
    pool_cls.add_activity_task = add_activity_task


def _name_pools(worker_cls: Any) -> None:
    """An execution's pool knows the execution's ARN (its context object's Execution.Id)."""
    original = worker_cls._get_evaluation_environment

    @functools.wraps(original)
    def _get_evaluation_environment(self):
        env = original(self)
        arn = self._evaluation_details.execution_details.arn
        setattr(env.callback_pool_manager, _ARN, arn)
        return env

    worker_cls._get_evaluation_environment = _get_evaluation_environment


def indexed_execution(provider: Any, context: Any, token: str) -> Any | None:
    """The execution of the caller's store whose pool issued ``token``; None: walk them all."""
    pool = pool_for(token)
    arn = getattr(pool, _ARN, None)
    if arn is None:
        return None
    execution = provider.get_store(context).executions.get(arn)
    worker = getattr(execution, "exec_worker", None)
    env = getattr(worker, "env", None)
    if env is None or env.callback_pool_manager is not pool:
        return None
    return execution


def _look_up(provider_cls: Any) -> None:
    """The three token calls run LocalStack's own loop over the token's execution only."""
    for name in ("send_task_success", "send_task_heartbeat", "send_task_failure"):
        setattr(provider_cls, name, _narrowed(getattr(provider_cls, name)))


class _OneExecution:
    """The provider as LocalStack's loop sees it: a store that holds one execution.

    LocalStack's methods reach the executions through ``self._get_executions`` (its own
    code, RUNNING filter included, run here over this view) or ``self.get_store``;
    everything else is the provider's.
    """

    def __init__(self, provider: Any, execution: Any) -> None:
        self._provider = provider
        self._execution = execution

    def __getattr__(self, name: str) -> Any:
        return getattr(self._provider, name)

    def get_store(self, context: Any) -> Any:
        return _Store(self._provider.get_store(context), self._execution)

    def _get_executions(self, context: Any, execution_status: Any = None) -> list[Any]:
        return type(self._provider)._get_executions(self, context, execution_status)


class _Store:
    """A store whose ``executions`` is one execution (everything else is the real store's)."""

    def __init__(self, store: Any, execution: Any) -> None:
        self._store = store
        self.executions = {execution.exec_arn: execution}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _narrowed(original: Any) -> Any:
    @functools.wraps(original)
    def method(self, context, task_token, *args, **kwargs):
        execution = indexed_execution(self, context, task_token)
        if execution is None:
            return original(self, context, task_token, *args, **kwargs)
        view = _OneExecution(self, execution)
        return original(view, context, task_token, *args, **kwargs)

    method._sfnp_patched = True  # type: ignore[attr-defined]
    return method
