"""Calls that look through every execution see a snapshot of them (LocalStack 4.14.0).

AWS finds a task token's execution whatever else is starting at that moment.
LocalStack's ``SendTaskSuccess`` finds it by filtering every execution of the region
through a Python ``lambda`` over the live ``store.executions`` (an ``OrderedDict``),
and ``SendTaskFailure``, ``SendTaskHeartbeat`` and others loop over the same live
view. A ``StartExecution`` on another thread inserts into that dict between two
steps of the loop, and the loop raises ``RuntimeError: OrderedDict mutated during
iteration``, which the caller gets as ``InternalError``. bench_scale hit it (on 4.9.2)
with executions starting at 50 per second among 20,000 held by one LocalStack: one
job-poller completion failed after botocore's three attempts, and a semaphore
hand-over granted the slot but never woke its waiter (the benchmark sets the
waiter's fallback re-check above the run's length, so nothing rescued it). 4.14.0 is
the same: ``SFNStore.executions`` is still ``LocalAttribute(default=OrderedDict)``
(``backend/store.py``), ``StepFunctionsProvider._get_executions`` still filters the live
``store.executions.values()``, and ``send_task_failure``, ``describe_map_run`` and
``update_map_run`` still loop over it (``provider.py``).

The store's ``executions`` becomes a dict whose ``values()`` is a list copied in
one C call, during which no other Python thread runs: every loop over it then walks
a snapshot. Inserts, lookups and deletes are the ``OrderedDict``'s own.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)


class SnapshotValues(OrderedDict):
    """An ``OrderedDict`` whose ``values()`` is a copy, safe to loop over while it grows."""

    def values(self) -> list[Any]:  # type: ignore[override]
        """The values now, copied in one C call (no other thread runs meanwhile)."""
        return list(super().values())


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.backend.store import SFNStore
    except ImportError:
        return False
    attribute = SFNStore.__dict__.get("executions")
    if version.__version__ != LOCALSTACK_VERSION or getattr(attribute, "default", None) not in (
        OrderedDict,
        SnapshotValues,
    ):
        LOG.warning(
            "sfn-patterns executions snapshot not applied (localstack %s)", version.__version__
        )
        return False
    attribute.default = SnapshotValues  # each region's store, made on first use
    return True
