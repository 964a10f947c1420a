"""A state machine's ``encryptionConfiguration`` is kept and returned (LocalStack 4.14.0).

AWS keeps the key a state machine's definition, executions and history are encrypted
with: ``CreateStateMachine`` and ``UpdateStateMachine`` take ``encryptionConfiguration``
(``type`` ``CUSTOMER_MANAGED_KMS_KEY`` with ``kmsKeyId`` and
``kmsDataKeyReusePeriodSeconds``, or ``AWS_OWNED_KEY``), and ``DescribeStateMachine`` and
``DescribeStateMachineForExecution`` answer it until an update changes it
([EncryptionConfiguration](https://docs.aws.amazon.com/step-functions/latest/apireference/API_EncryptionConfiguration.html)).
The Terraform provider reads it back into ``encryption_configuration``, so without it
every plan of a machine with a customer managed key shows a change.

LocalStack 4.14.0 takes the field and drops it: ``create_state_machine`` never reads
it, ``update_state_machine`` accepts and ignores it, and neither describe renders it.
The patch remembers the configuration per machine ARN from the requests that set it
(an update without one keeps it, as on AWS), forgets it when the machine is deleted,
and adds it to both describes. The emulated KMS decisions (``emulation.kms``) keep
their own record of the key, from the same requests.
"""

from __future__ import annotations

import copy
import functools
import logging
import threading
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)

_CONFIGURATIONS: dict[str, dict[str, Any]] = {}  # state machine ARN -> its configuration
_LOCK = threading.Lock()


def _remember(arn: str, configuration: Any) -> None:
    """Keep ``configuration`` for the machine ``arn`` (None: the request left it alone)."""
    if not arn or configuration is None:
        return
    with _LOCK:
        _CONFIGURATIONS[arn] = dict(configuration)


def configuration_of(arn: str) -> dict[str, Any] | None:
    """The configuration a request set on the machine ``arn`` (None: none was set)."""
    with _LOCK:
        found = _CONFIGURATIONS.get(arn)
    return copy.deepcopy(found) if found is not None else None


def _with_configuration(answer: Any, arn: str) -> Any:
    found = configuration_of(arn)
    if found is not None:
        answer["encryptionConfiguration"] = found
    return answer


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.provider import StepFunctionsProvider
    except ImportError:
        return False
    if version.__version__ != LOCALSTACK_VERSION:
        LOG.warning(
            "sfn-patterns encryptionConfiguration patch not applied (localstack %s)",
            version.__version__,
        )
        return False
    provider = StepFunctionsProvider
    if getattr(provider.describe_state_machine, "_sfnp_encryption", False):
        return True

    create = provider.create_state_machine
    update = provider.update_state_machine
    delete = provider.delete_state_machine
    describe = provider.describe_state_machine
    describe_for_execution = provider.describe_state_machine_for_execution

    @functools.wraps(create)
    def create_state_machine(self: Any, context: Any, request: Any, **kwargs: Any) -> Any:
        answer = create(self, context, request, **kwargs)
        _remember(str(answer.get("stateMachineArn") or ""), request.get("encryptionConfiguration"))
        return answer

    @functools.wraps(update)
    def update_state_machine(
        self: Any, context: Any, state_machine_arn: str, *args: Any, **kwargs: Any
    ) -> Any:
        answer = update(self, context, state_machine_arn, *args, **kwargs)
        _remember(state_machine_arn, kwargs.get("encryption_configuration"))
        return answer

    @functools.wraps(delete)
    def delete_state_machine(self: Any, context: Any, state_machine_arn: str, **kwargs: Any) -> Any:
        answer = delete(self, context, state_machine_arn, **kwargs)
        with _LOCK:
            _CONFIGURATIONS.pop(state_machine_arn, None)
        return answer

    @functools.wraps(describe)
    def describe_state_machine(
        self: Any, context: Any, state_machine_arn: str, *args: Any, **kwargs: Any
    ) -> Any:
        answer = describe(self, context, state_machine_arn, *args, **kwargs)
        return _with_configuration(answer, state_machine_arn)

    @functools.wraps(describe_for_execution)
    def describe_state_machine_for_execution(
        self: Any, context: Any, execution_arn: str, *args: Any, **kwargs: Any
    ) -> Any:
        answer = describe_for_execution(self, context, execution_arn, *args, **kwargs)
        return _with_configuration(answer, str(answer.get("stateMachineArn") or ""))

    describe_state_machine._sfnp_encryption = True  # type: ignore[attr-defined]
    provider.create_state_machine = create_state_machine
    provider.update_state_machine = update_state_machine
    provider.delete_state_machine = delete_state_machine
    provider.describe_state_machine = describe_state_machine
    provider.describe_state_machine_for_execution = describe_state_machine_for_execution
    return True
