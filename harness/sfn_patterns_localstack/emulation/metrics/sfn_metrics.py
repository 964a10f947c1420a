"""``AWS/States`` execution metrics (LocalStack 4.14.0 publishes none).

AWS publishes, per state machine (dimension ``StateMachineArn``, the unqualified
ARN), a count of 1 when an execution starts (``ExecutionsStarted``) and when it ends
(``ExecutionsSucceeded``, ``ExecutionsFailed``, ``ExecutionsTimedOut``,
``ExecutionsAborted``), and at the end the execution's run time
(``ExecutionTime``, milliseconds). ("Monitoring Step Functions metrics using Amazon
CloudWatch", Step Functions Developer Guide.)

LocalStack 4.14.0 announces both moments in one place:
``Execution.publish_execution_status_change_event`` (``backend/execution.py``), which
sends the "Step Functions Execution Status Change" event for RUNNING and for the final
status (the StopExecution fix ends an execution through it too, once). The patch
emits the metrics after it, once per status per execution.

``ExecutionThrottled`` (a state transition over the account's quota, held until the
bucket refills) is counted when the fault injector's ``transition_throttle`` holds
one: this module listens to :mod:`..faults.transitions`, a datum per held transition.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

from .sink import SINK, Datum, dimensions

LOG = logging.getLogger(__name__)
NAMESPACE = "AWS/States"
STATUS_METRICS = {
    "RUNNING": "ExecutionsStarted",
    "SUCCEEDED": "ExecutionsSucceeded",
    "FAILED": "ExecutionsFailed",
    "TIMED_OUT": "ExecutionsTimedOut",
    "ABORTED": "ExecutionsAborted",
}
_EMITTED = "_sfnp_metric_statuses"


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.backend import execution
    except ImportError:
        return False
    cls = execution.Execution
    if version.__version__ != LOCALSTACK_VERSION or not hasattr(
        cls, "publish_execution_status_change_event"
    ):
        LOG.warning(
            "sfn-patterns AWS/States metrics not applied (localstack %s)", version.__version__
        )
        return False
    original = cls.publish_execution_status_change_event
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.wraps(original)
    def publish(self: Any) -> None:
        original(self)
        data = status_data(self)
        if data:
            SINK.put(self.account_id, self.region_name, data)

    publish._sfnp_patched = True
    cls.publish_execution_status_change_event = publish
    from sfn_patterns_localstack.emulation.faults import transitions

    if throttled not in transitions.LISTENERS:
        transitions.LISTENERS.append(throttled)
    return True


def throttled(state_machine_arn: str, account_id: str, region: str) -> None:
    """One transition of ``state_machine_arn`` held by the quota: ``ExecutionThrottled``."""
    SINK.put(account_id, region, [throttled_datum(state_machine_arn)])


def throttled_datum(state_machine_arn: str) -> Datum:
    """The ``ExecutionThrottled`` datum of one held transition."""
    dims = dimensions(StateMachineArn=state_machine_arn)
    return Datum(NAMESPACE, "ExecutionThrottled", 1, dims, "Count")


def status_data(execution: Any) -> list[Datum]:
    """The metrics of an execution's current status, [] if already emitted for it."""
    status = str(execution.exec_status) if execution.exec_status is not None else None
    metric = STATUS_METRICS.get(status)
    emitted: set[str] = execution.__dict__.setdefault(_EMITTED, set())
    if metric is None or status in emitted:
        return []
    emitted.add(status)
    dims = dimensions(StateMachineArn=execution.state_machine_arn)
    data = [Datum(NAMESPACE, metric, 1, dims, "Count")]
    if status != "RUNNING" and execution.stop_date is not None:
        elapsed = (execution.stop_date - execution.start_date).total_seconds() * 1000
        data.append(Datum(NAMESPACE, "ExecutionTime", max(elapsed, 0.0), dims, "Milliseconds"))
    return data
