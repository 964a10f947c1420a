"""An aws-sdk Task's error is named after the service's error code (LocalStack 4.14.0).

AWS names the error of an ``arn:aws:states:::aws-sdk:<service>:<action>`` Task
``<Service>.<ErrorCode>`` (``Exception`` appended when the code lacks it), so a Retry
on ``RedshiftData.ThrottlingException`` or ``Sfn.ThrottlingException`` matches a
throttled call. 4.14.0 (``StateTaskServiceAwsSdk._normalise_exception_name``) names it
after botocore's exception *class*: for a code the service's botocore model does not
list (the Redshift Data API's ThrottlingException, the throttling every API answers),
that class is the plain ``ClientError``, and the error becomes
``RedshiftData.RedshiftDataException``. No Retry written for AWS matched it: under the
fault injector's throttling, every dag-aggregate task whose statement call was
throttled failed its run instead of retrying.

The patch takes the name from the error code whenever the answer carries one.

The optimised Step Functions integration (``states:startExecution``, any mode) has the
same flaw the other way: 4.14.0 (``StateTaskServiceSfn._from_error``) names its error
``StepFunctions.<Code>Exception`` whatever the code, so a throttled start became
``StepFunctions.ThrottlingExceptionException``, a name no retrier written for AWS
carries. The ``Exception`` suffix is now added only when the code lacks it, as for
``StepFunctions.ExecutionAlreadyExistsException``.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)


def _named(original: Any) -> Any:
    def normalise(norm_service_name: str, ex: Exception) -> str:
        code = getattr(ex, "response", {}).get("Error", {}).get("Code")
        if not code:
            return original(norm_service_name, ex)
        name = f"{norm_service_name}.{code}"
        return name if name.endswith("Exception") else name + "Exception"

    normalise._sfnp_error_names = True  # type: ignore[attr-defined]
    return normalise


def _suffixed_once(original: Any) -> Any:
    def _from_error(self: Any, env: Any, ex: Exception) -> Any:
        event = original(self, env, ex)
        name = getattr(event.error_name, "error_name", None)
        if isinstance(name, str) and name.endswith("ExceptionException"):
            from localstack.services.stepfunctions.asl.component.common.error_name.custom_error_name import (  # noqa: E501
                CustomErrorName,
            )

            fixed = name[: -len("Exception")]
            event.error_name = CustomErrorName(fixed)
            details = (event.event_details or {}).get("taskFailedEventDetails")
            if details is not None:
                details["error"] = fixed
        return event

    _from_error._sfnp_error_names = True  # type: ignore[attr-defined]
    return _from_error


_SERVICE_TASKS = (
    "localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service"
)


def _patchable(module: str, class_name: str, attribute: str) -> tuple[Any, Any] | None:
    """LocalStack's service-task class and its own ``attribute``; None (warned) when gone."""
    try:
        imported = importlib.import_module(f"{_SERVICE_TASKS}.{module}")
    except ImportError:
        return None
    cls = getattr(imported, class_name, None)
    current = cls.__dict__.get(attribute) if cls is not None else None
    if current is None:
        LOG.warning("sfn-patterns: %s.%s not patched (LocalStack changed)", class_name, attribute)
        return None
    return cls, current


def apply() -> bool:
    """Patch 4.14.0's aws-sdk and optimised Step Functions error names once; False if not."""
    try:
        from localstack import version
    except ImportError:
        return False
    if version.__version__ != LOCALSTACK_VERSION:
        LOG.warning("sfn-patterns error names not patched (localstack %s)", version.__version__)
        return False
    found = _patchable(
        "state_task_service_aws_sdk", "StateTaskServiceAwsSdk", "_normalise_exception_name"
    )
    if found is None:
        return False
    cls, current = found
    function = current.__func__ if isinstance(current, staticmethod) else current
    if not getattr(function, "_sfnp_error_names", False):
        cls._normalise_exception_name = staticmethod(_named(function))
    found = _patchable("state_task_service_sfn", "StateTaskServiceSfn", "_from_error")
    if found is None:
        return False
    cls, current = found
    if not getattr(current, "_sfnp_error_names", False):
        cls._from_error = _suffixed_once(current)
    return True
