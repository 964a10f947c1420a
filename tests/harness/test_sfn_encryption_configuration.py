"""sfn_encryption_configuration (fixes/): a machine's encryptionConfiguration is kept, as on AWS.

Plain LocalStack 4.14.0 drops it, so DescribeStateMachine answers none and Terraform
plans a change to ``encryption_configuration`` of every machine with a customer managed
key on every plan.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator

import pytest

from sfn_patterns_localstack.emulation.fixes import sfn_encryption_configuration
from sfn_patterns_localstack.executions import wait_stopped
from sfn_patterns_localstack.roles import allow, delete_role, service_role

PASS = json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})


def test_it_applies_to_the_pinned_version() -> None:
    assert sfn_encryption_configuration.apply() is True


@pytest.fixture
def key_and_machine(aws: Callable) -> Iterator[tuple[str, str, dict]]:
    key = aws("kms").create_key(Description="sfn-encryption test")["KeyMetadata"]["Arn"]
    name = f"sfn-enc-{uuid.uuid4().hex[:8]}"
    # AWS's documented grant for a machine's own key: its role generates and decrypts
    # data keys for executions of this machine.
    role = service_role(
        aws("iam"),
        name,
        "states",
        [allow(["kms:GenerateDataKey", "kms:Decrypt"], [key])],
    )
    configuration = {
        "type": "CUSTOMER_MANAGED_KMS_KEY",
        "kmsKeyId": key,
        "kmsDataKeyReusePeriodSeconds": 300,
    }
    arn = aws("stepfunctions").create_state_machine(
        name=name, definition=PASS, roleArn=role, encryptionConfiguration=configuration
    )["stateMachineArn"]
    yield key, arn, configuration
    aws("stepfunctions").delete_state_machine(stateMachineArn=arn)
    delete_role(aws("iam"), name)


@pytest.mark.integration
def test_the_configuration_is_returned_until_an_update_changes_it(
    aws: Callable, key_and_machine: tuple[str, str, dict]
) -> None:
    _, arn, configuration = key_and_machine
    sfn = aws("stepfunctions")
    assert sfn.describe_state_machine(stateMachineArn=arn)["encryptionConfiguration"] == (
        configuration
    )
    execution = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
    assert wait_stopped(sfn, [execution], 30)[execution]["status"] == "SUCCEEDED"
    described = sfn.describe_state_machine_for_execution(executionArn=execution)
    assert described["encryptionConfiguration"] == configuration

    sfn.update_state_machine(stateMachineArn=arn, definition=PASS)  # leaves the key alone
    assert sfn.describe_state_machine(stateMachineArn=arn)["encryptionConfiguration"] == (
        configuration
    )
    sfn.update_state_machine(
        stateMachineArn=arn, definition=PASS, encryptionConfiguration={"type": "AWS_OWNED_KEY"}
    )
    assert sfn.describe_state_machine(stateMachineArn=arn)["encryptionConfiguration"] == {
        "type": "AWS_OWNED_KEY"
    }


@pytest.mark.integration
def test_a_machine_made_again_under_a_deleted_ones_name_has_no_key_of_it(
    aws: Callable, key_and_machine: tuple[str, str, dict]
) -> None:
    _, arn, _ = key_and_machine
    sfn = aws("stepfunctions")
    role = sfn.describe_state_machine(stateMachineArn=arn)["roleArn"]
    sfn.delete_state_machine(stateMachineArn=arn)
    again = sfn.create_state_machine(name=arn.rsplit(":", 1)[1], definition=PASS, roleArn=role)
    assert again["stateMachineArn"] == arn
    described = sfn.describe_state_machine(stateMachineArn=arn)
    assert described.get("encryptionConfiguration", {}).get("type") != "CUSTOMER_MANAGED_KMS_KEY"
