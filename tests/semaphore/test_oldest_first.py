"""End to end: examples/semaphore with ``strategy = "oldest-first"`` on LocalStack.

The seed's ListExecutions gate: an execution proceeds when it is among the
``limit`` oldest RUNNING ones, or the stopped holders whose critical work may still
run. With limit 1 the holders' own recorded times must show one holder at a time,
admitted in start order.

The wrapper's target is not the module's: a machine made here, encrypted with a
customer managed key of its own (the key policy an account has: the root statement
hands the key to IAM policies), given to the module as ``target_kms_key_arn``. Every
wrapper run (and the cleanup that stops a stopped wrapper's target) goes through that
key under the harness's IAM and KMS decisions.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sfn_patterns_localstack.executions import history
from sfn_patterns_localstack.roles import allow, delete_role, service_role
from tests.iam_denial import (
    allowed_calls,
    denial,
    expect_denials,
    require_enforcement,
    without_actions,
)
from tests.kms_keys import ROOT_STATEMENT, create_key
from tests.sfn_history import states_entered

from . import fault_run
from .support import (
    NO_ALARMS,
    deploy,
    max_overlap,
    records,
    start,
    stopped_wrappers_keep_the_limit,
    wait_done,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

LIMIT = 1
# TimeoutSeconds of the critical section's task (and its Lambda's timeout): a holder
# stopped in its critical section counts until this has passed since the task was
# scheduled, since its Lambda runs on after the stop.
CRITICAL_TIMEOUT = 20


@pytest.fixture(scope="module")
def encrypted_target(aws: Callable) -> Iterator[dict[str, str]]:
    """The wrapper's target: a machine encrypted with its own customer managed key.

    It waits ``sleep_seconds`` of its input. Its role may use the key, which Step
    Functions asks of the machine's role when an execution starts.
    """
    name = f"semo-target-{uuid.uuid4().hex[:6]}"
    kms, iam, sfn = aws("kms"), aws("iam"), aws("stepfunctions")
    key = create_key(aws, ROOT_STATEMENT, description=f"{name}: the target's own key")
    role = service_role(
        iam, name, "states", [allow(["kms:GenerateDataKey", "kms:Decrypt"], key, "OwnKey")]
    )
    machine = sfn.create_state_machine(
        name=name,
        roleArn=role,
        definition=json.dumps(
            {
                "StartAt": "Work",
                "States": {
                    "Work": {"Type": "Wait", "SecondsPath": "$.sleep_seconds", "Next": "Done"},
                    "Done": {"Type": "Pass", "Parameters": {"target": name}, "End": True},
                },
            }
        ),
        encryptionConfiguration={
            "type": "CUSTOMER_MANAGED_KMS_KEY",
            "kmsKeyId": key,
            "kmsDataKeyReusePeriodSeconds": 300,
        },
    )["stateMachineArn"]
    try:
        yield {"arn": machine, "key": key, "name": name}
    finally:
        sfn.delete_state_machine(stateMachineArn=machine)
        delete_role(iam, name)
        kms.schedule_key_deletion(KeyId=key, PendingWindowInDays=7)


@pytest.fixture(scope="module")
def deployed(
    localstack_endpoint: str,
    aws: Callable,
    tmp_path_factory: pytest.TempPathFactory,
    destroy_deployments: bool,
    encrypted_target: dict[str, str],
) -> Iterator[dict[str, Any]]:
    with deploy(
        localstack_endpoint,
        aws,
        tmp_path_factory.mktemp("semaphore-oldest-tf"),
        "semo",
        destroy=destroy_deployments,
        strategy="oldest-first",
        max_concurrency=LIMIT,
        wait_min_seconds=1,
        wait_max_seconds=2,
        acquire_timeout_seconds=300,
        critical_section_timeout_seconds=CRITICAL_TIMEOUT,
        alarms=NO_ALARMS,
        external_target_state_machine_arn=encrypted_target["arn"],
        target_kms_key_arn=encrypted_target["key"],
    ) as outputs:
        # Terraform leaves null outputs out: no lock table for this strategy.
        assert outputs.get("lock_table_name") is None
        assert outputs["gate_function_name"]
        yield outputs


def test_oldest_is_admitted_first_and_never_more_than_the_limit(
    aws: Callable, deployed: dict
) -> None:
    sfn = aws("stepfunctions")
    arns = []
    for i in range(5):
        arns.append(
            start(sfn, deployed["embedded_state_machine_arn"], {"sleep_seconds": 1, "n": i})
        )
        time.sleep(0.4)
    done = wait_done(sfn, arns, timeout=180)
    assert {d["status"] for d in done.values()} == {"SUCCEEDED"}, done
    recorded = records(aws, deployed, arns)
    assert max_overlap(list(recorded.values())) <= LIMIT
    by_start = sorted(arns, key=lambda arn: done[arn]["startDate"])
    by_admission = sorted(arns, key=lambda arn: recorded[arn][0])
    print("\nadmission order (start rank):", [by_start.index(arn) for arn in by_admission])
    assert by_admission == by_start


def test_a_holder_stopped_in_its_critical_section_keeps_its_slot_while_its_lambda_runs(
    aws: Callable, deployed: dict
) -> None:
    """The stopped holder is no longer RUNNING, but its critical section's Lambda
    runs on; the gate counts it (its history shows that task without its end) until the
    task's TimeoutSeconds has passed, so the waiter enters only after the Lambda left. The
    oracle is the Lambdas' own recorded times; the gate reads the history under its role
    (IAM enforced)."""
    sfn = aws("stepfunctions")
    machine = deployed["embedded_state_machine_arn"]
    holder = start(sfn, machine, {"sleep_seconds": CRITICAL_TIMEOUT - 8, "n": 0})
    wait_until(
        lambda: "Critical section" in states_entered(history(sfn, holder)),
        60,
        "the holder in its critical section",
    )
    waiter = start(sfn, machine, {"sleep_seconds": 1, "n": 1})
    sfn.stop_execution(executionArn=holder, error="Test.Stop", cause="stopped in its section")
    done = wait_done(sfn, [holder, waiter], timeout=CRITICAL_TIMEOUT + 90)
    assert done[holder]["status"] == "ABORTED", done[holder]
    assert done[waiter]["status"] == "SUCCEEDED", done[waiter]
    recorded = records(aws, deployed, [holder, waiter])
    assert max_overlap(list(recorded.values())) <= LIMIT, recorded
    assert recorded[waiter][0] >= recorded[holder][1], recorded


def test_stopped_wrapper_stops_its_target_before_the_slot_goes_back(
    aws: Callable, deployed: dict
) -> None:
    """The gate counts a stopped wrapper's running target; the cleanup stops it."""
    stopped_wrappers_keep_the_limit(aws, deployed, LIMIT)


def test_the_wrapper_returns_its_encrypted_targets_output_through_the_granted_key(
    aws: Callable, deployed: dict, encrypted_target: dict, localstack_endpoint: str
) -> None:
    """startExecution.sync:2 reads the target's output as the wrapper's role, which
    Step Functions decrypts with the target's key: the module's DecryptTargetOutput
    statement (target_kms_key_arn) allows it, as the usage file records."""
    require_enforcement(aws, localstack_endpoint)
    role = deployed["wrapper_role_arn"]
    before = allowed_calls(role, "DecryptTargetOutput", "kms:Decrypt")
    sfn = aws("stepfunctions")
    arn = start(sfn, deployed["wrapper_state_machine_arn"], {"sleep_seconds": 0, "n": "key"})
    done = wait_done(sfn, [arn], timeout=90)
    assert done[arn]["status"] == "SUCCEEDED", done[arn]
    assert json.loads(done[arn]["output"]) == {"target": encrypted_target["name"]}
    if before is None:  # a LocalStack that writes no usage file here
        return
    wait_until(
        lambda: (allowed_calls(role, "DecryptTargetOutput", "kms:Decrypt") or 0) > before,
        30,
        "the usage file to count the wrapper's kms:Decrypt under DecryptTargetOutput",
    )


def test_without_the_target_key_the_wrapper_fails_naming_it(
    aws: Callable, deployed: dict, encrypted_target: dict, localstack_endpoint: str
) -> None:
    """The control: the wrapper's role without kms:Decrypt starts the target but cannot
    read its result; the wrapper fails with Step Functions' KMS error naming the key."""
    require_enforcement(aws, localstack_endpoint)
    role, key = deployed["wrapper_role_arn"], encrypted_target["key"]
    sfn = aws("stepfunctions")
    with (
        without_actions(aws, role, "kms:Decrypt"),
        expect_denials(denial(role, "kms:Decrypt", key)),
    ):
        arn = start(sfn, deployed["wrapper_state_machine_arn"], {"sleep_seconds": 0, "n": "no"})
        done = wait_done(sfn, [arn], timeout=90)
    assert done[arn]["status"] == "FAILED", done[arn]
    assert "KmsAccessDenied" in done[arn]["error"], done[arn]
    assert key in done[arn]["cause"], done[arn]


def test_invariants_hold_under_a_mixed_fault_plan(
    aws: Callable, deployed: dict, localstack_endpoint: str
) -> None:
    """Faults injected: the gate's ListExecutions stale (3 s) or throttled, the gate's process
    killed mid-invoke: never more than the limit, every execution admitted once
    (fault_run.py). The gate only reads, so its Task retries a crashed run
    (Runtime.ExitError)."""
    gate = deployed["gate_function_name"]
    plan = fault_run.mixed_plan(
        roles=[fault_run.function_role(aws, gate)], functions=[gate], cleanup_rule=None
    )
    plan["faults"].append(
        {
            "service": "stepfunctions",
            "operation": "ListExecutions",
            "kind": "throttle",
            "caller_role": fault_run.function_role(aws, gate),
            "probability": 0.2,
        }
    )
    # The mix kills the gate at random (a tenth of its runs); its first run dies for sure.
    kill_first = {"service": "lambda", "operation": "Invoke", "kind": "kill", "resource": gate}
    plan["faults"].insert(0, {**kill_first, "seconds": 0.2, "first": 1})
    result = fault_run.run_under_faults(
        aws, localstack_endpoint, deployed, limit=LIMIT, plan=plan, executions=4, sleep_seconds=1
    )
    assert {"stale_list", "throttle", "kill"} <= set(result["kinds"]), result["kinds"]
