"""An aws-sdk Task's error is named after the service's error code (LocalStack 4.9.2).

AWS names the error of an ``arn:aws:states:::aws-sdk:<service>:<action>`` Task
``<Service>.<ErrorCode>`` (``Exception`` appended when the code lacks it), so a Retry
on ``RedshiftData.ThrottlingException`` or ``Sfn.ThrottlingException`` matches a
throttled call. 4.9.2 names it after botocore's exception *class*: for a code the
service's botocore model does not list (the Redshift Data API's ThrottlingException,
the throttling every API answers), that class is the plain ``ClientError``, and the
error becomes ``RedshiftData.RedshiftDataException``. No Retry written for AWS
matched it: under the fault injector's throttling, every dag-aggregate task whose
statement call was throttled failed its run instead of retrying (issue 28).

The patch takes the name from the error code whenever the answer carries one.

The optimised Step Functions integration (``states:startExecution``, any mode) has the
same flaw the other way: 4.9.2 names its error ``StepFunctions.<Code>Exception``
whatever the code, so a throttled start became
``StepFunctions.ThrottlingExceptionException``, a name no retrier written for AWS
carries. The ``Exception`` suffix is now added only when the code lacks it, as for
``StepFunctions.ExecutionAlreadyExistsException``.
"""

from __future__ import annotations

import logging
from typing import Any

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


def _patch_optimised_sfn() -> bool:
    try:
        from localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service import (  # noqa: E501
            state_task_service_sfn as module,
        )
    except ImportError:
        return False
    cls = module.StateTaskServiceSfn
    current = cls.__dict__.get("_from_error")
    if current is None:
        LOG.warning("sfn-patterns: optimised Step Functions error names not patched")
        return False
    if not getattr(current, "_sfnp_error_names", False):
        cls._from_error = _suffixed_once(current)
    return True


def apply() -> bool:
    """Patch 4.9.2's aws-sdk and optimised Step Functions error names once; False if not."""
    try:
        from localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service import (  # noqa: E501
            state_task_service_aws_sdk as module,
        )
    except ImportError:
        return False
    cls = module.StateTaskServiceAwsSdk
    current = cls.__dict__.get("_normalise_exception_name")
    if current is None:
        LOG.warning("sfn-patterns: aws-sdk error names not patched (no _normalise_exception_name)")
        return False
    function = current.__func__ if isinstance(current, staticmethod) else current
    if not getattr(function, "_sfnp_error_names", False):
        cls._normalise_exception_name = staticmethod(_named(function))
    return _patch_optimised_sfn()
