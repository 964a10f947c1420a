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


def apply() -> bool:
    """Patch 4.9.2's aws-sdk Task error naming once; False (nothing changed) otherwise."""
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
    if getattr(function, "_sfnp_error_names", False):
        return True
    cls._normalise_exception_name = staticmethod(_named(function))
    return True
