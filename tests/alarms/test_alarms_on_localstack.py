"""On LocalStack: every kind of baseline alarm modules/alarms builds fires, notifies and recovers.

The pattern modules hand their own resources to modules/alarms, and each pattern's
tests check that every alarm points at the deployed resource and prove the pattern's
own signals (a poison message, a stopped schedule, a leaked slot, a lost event, a
failed execution). What this file proves is each remaining kind, once, on resources
of its own: an execution timed out or aborted, a function failing, throttled or
running close to its timeout, a table's reads or writes throttled, a rule that could
not deliver. Each fault is a real one: a machine's ``TimeoutSeconds``, StopExecution,
a function's reserved concurrency set to 0, a handler that sleeps, a DynamoDB call the
fault injector throttles, a rule whose target does not exist.

Oracles are CloudWatch's own (tests/alarm_check.py): the alarm's state and
``StateUpdatedTimestamp``, and the SNS notice read through an SQS subscription.
The proofs run side by side, each on its own alarm.
"""

from __future__ import annotations

import io
import json
import threading
import uuid
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from sfn_patterns_localstack.emulation.faults import client as faults
from sfn_patterns_localstack.executions import history, wait_stopped
from sfn_patterns_localstack.roles import allow, delete_role, function_role, service_role
from sfn_patterns_localstack.terraform.workspace import Workspace
from tests.alarm_check import Inbox, prove_alarm

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

WATCHED = Path(__file__).resolve().parent / "watched"
FUNCTION_TIMEOUT = 2  # seconds; the Duration alarm's threshold is 90 % of it
HANDLER = """
import time
def handler(event, context):
    time.sleep(event.get("sleep", 0))
    if event.get("fail"):
        raise RuntimeError("asked to fail")
    return "ok"
"""
GONE = "gone"  # the rule's target: a state machine name nothing creates
HELD = 1.0  # seconds a throttled state transition waits


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", source)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def watched(
    aws: Callable,
    localstack_endpoint: str,
    tmp_path_factory: pytest.TempPathFactory,
    destroy_deployments: bool,
) -> Iterator[dict[str, Any]]:
    """The watched resources (made here, as a pattern module makes its own) and the inbox."""
    prefix = f"sfnp-alarms-{uuid.uuid4().hex[:6]}"
    region, account = "us-east-1", "000000000000"
    iam = aws("iam")
    function_role_arn = function_role(iam, f"{prefix}-fn", [f"{prefix}*"])
    lam = aws("lambda")
    # Two functions of one handler: the throttle proof refuses every invoke of its own,
    # while the error and duration proofs invoke the other at the same time.
    functions = (f"{prefix}-fn", f"{prefix}-throttled")
    for function in functions:
        lam.create_function(
            FunctionName=function,
            Runtime="python3.12",
            Role=function_role_arn,
            Handler="app.handler",
            Code={"ZipFile": _zip(HANDLER)},
            Timeout=FUNCTION_TIMEOUT,
        )
    for function in functions:
        lam.get_waiter("function_active_v2").wait(FunctionName=function)
    # A machine that waits as long as it is told, with a 5-s TimeoutSeconds: the
    # aborted proof's StopExecution must come before it, even on a loaded machine.
    machine_role = service_role(iam, f"{prefix}-sm", "states", [])  # Wait states need nothing
    definition = {
        "TimeoutSeconds": 5,
        "StartAt": "Wait",
        "States": {"Wait": {"Type": "Wait", "SecondsPath": "$.seconds", "End": True}},
    }
    machine = aws("stepfunctions").create_state_machine(
        name=f"{prefix}-sm", definition=json.dumps(definition), roleArn=machine_role
    )["stateMachineArn"]
    aws("dynamodb").create_table(
        TableName=f"{prefix}-table",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    # A rule whose target machine does not exist (deleted, or a wrong ARN): the role
    # may start it, so each delivery fails with StateMachineDoesNotExist.
    gone = f"arn:aws:states:{region}:{account}:stateMachine:{prefix}-{GONE}"
    rule_role = service_role(
        iam, f"{prefix}-rule", "events", [allow("states:StartExecution", gone)]
    )
    events = aws("events")
    source = f"sfnp.alarms-test.{prefix}"
    events.put_rule(Name=f"{prefix}-rule", EventPattern=json.dumps({"source": [source]}))
    events.put_targets(
        Rule=f"{prefix}-rule", Targets=[{"Id": "gone", "Arn": gone, "RoleArn": rule_role}]
    )
    inbox = Inbox.create(aws, prefix)
    workspace = Workspace(WATCHED, localstack_endpoint, tmp_path_factory.mktemp("alarms-tf"))
    variables = {
        "name": prefix,
        "state_machine_arn": machine,
        "function_name": functions[0],
        "throttled_function_name": functions[1],
        "function_timeout_seconds": FUNCTION_TIMEOUT,
        "table_name": f"{prefix}-table",
        "rule_name": f"{prefix}-rule",
        "topic_arn": inbox.topic_arn,
    }
    with workspace.applied(variables, destroy=destroy_deployments) as outputs:
        yield {
            "prefix": prefix,
            "machine": machine,
            "function": functions[0],
            "throttled": functions[1],
            "table": f"{prefix}-table",
            "source": source,
            "inbox": inbox,
            "alarms": {key: value["name"] for key, value in outputs["alarms"].items()},
            "workspace": workspace,
            "variables": variables,
        }
    if destroy_deployments:  # a shared LocalStack keeps nothing of this test
        inbox.delete()
        events.remove_targets(Rule=f"{prefix}-rule", Ids=["gone"])
        events.delete_rule(Name=f"{prefix}-rule")
        aws("dynamodb").delete_table(TableName=f"{prefix}-table")
        aws("stepfunctions").delete_state_machine(stateMachineArn=machine)
        for function in functions:
            lam.delete_function(FunctionName=function)
        for role in ("fn", "sm", "rule"):
            delete_role(iam, f"{prefix}-{role}")


class Faults:
    """The fault plan of this test: faults added and removed by proofs running at once."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self._active: dict[str, dict] = {}
        self._lock = threading.Lock()

    def add(self, key: str, fault: dict) -> None:
        with self._lock:
            self._active[key] = fault
            self._load()

    def remove(self, key: str) -> None:
        with self._lock:
            self._active.pop(key, None)
            self._load()

    def _load(self) -> None:
        """The active faults as LocalStack's plan (none: the plan cleared)."""
        if self._active:
            faults.set_plan(self.endpoint, {"seed": 1, "faults": list(self._active.values())})
        else:
            faults.clear(self.endpoint)


def _wait_status(sfn: Any, arn: str, status: str, timeout: float = 60) -> None:
    done = wait_stopped(sfn, [arn], timeout)
    assert arn in done, f"{arn} still RUNNING after {timeout} s"
    assert done[arn]["status"] == status, done[arn]["status"]


def test_the_plan_has_one_alarm_of_each_kind(watched: dict) -> None:
    assert sorted(watched["alarms"]) == sorted(
        [
            "machine-executions-failed",
            "machine-executions-timed-out",
            "machine-executions-aborted",
            "machine-execution-throttled",
            "function-errors",
            "function-throttles",
            "function-duration",
            "throttled-errors",
            "throttled-throttles",
            "throttled-duration",
            "table-read-throttles",
            "table-write-throttles",
            "table-system-errors",
            "rule-failed-invocations",
        ]
    )
    second = watched["workspace"].run(
        "plan",
        "-detailed-exitcode",
        "-input=false",
        "-no-color",
        *Workspace.var_args(watched["variables"]),
        check=False,
    )
    assert second.returncode == 0, second.stdout[-3000:]


def proofs(aws: Callable, watched: dict, plan: Faults) -> dict[str, tuple[Callable, Callable]]:
    """Each alarm key's fault: (inject, clear)."""
    sfn, lam = aws("stepfunctions"), aws("lambda")
    # One attempt per call: DynamoDB's SDK default (10 attempts, backing off up to 25 s)
    # would stretch a 500's injection over two alarm periods.
    ddb = aws("dynamodb", config=Config(retries={"mode": "standard", "max_attempts": 1}))
    table = watched["table"]

    def timed_out() -> None:
        arn = sfn.start_execution(
            stateMachineArn=watched["machine"], input=json.dumps({"seconds": 30})
        )["executionArn"]
        _wait_status(sfn, arn, "TIMED_OUT")

    def aborted() -> None:
        arn = sfn.start_execution(
            stateMachineArn=watched["machine"], input=json.dumps({"seconds": 30})
        )["executionArn"]
        sfn.stop_execution(executionArn=arn, error="Test.Stop", cause="alarm proof")
        _wait_status(sfn, arn, "ABORTED")

    def invoke(payload: dict, function: str = watched["function"]) -> dict:
        return lam.invoke(FunctionName=function, Payload=json.dumps(payload).encode())

    def failing() -> None:
        assert invoke({"fail": True}).get("FunctionError") == "Unhandled"

    def throttled() -> None:
        # Reserved concurrency 0: Lambda refuses every invoke (TooManyRequestsException).
        lam.put_function_concurrency(
            FunctionName=watched["throttled"], ReservedConcurrentExecutions=0
        )
        with pytest.raises(ClientError) as refused:
            invoke({}, watched["throttled"])
        assert refused.value.response["Error"]["Code"] == "TooManyRequestsException"

    def unthrottled() -> None:
        lam.delete_function_concurrency(FunctionName=watched["throttled"])
        invoke({}, watched["throttled"])  # runs again

    def slow() -> None:
        # 1.9 s of a 2-s timeout: over the alarm's 90 % (1,800 ms).
        invoke({"sleep": FUNCTION_TIMEOUT * 0.95})

    def table_fault(
        operation: str, kind: str, code: str, call: Callable[[], object]
    ) -> tuple[Callable, Callable]:
        """A fault on one operation of the table (each proof its own operation)."""
        fault = {"service": "dynamodb", "operation": operation, "kind": kind, "resource": table}

        def inject() -> None:
            plan.add(operation, fault)
            with pytest.raises(ClientError) as refused:
                call()
            assert refused.value.response["Error"]["Code"] == code

        return inject, lambda: plan.remove(operation)

    key = {"pk": {"S": "a"}}
    read = table_fault(
        "GetItem",
        "throttle",
        "ProvisionedThroughputExceededException",
        lambda: ddb.get_item(TableName=table, Key=key),
    )
    write = table_fault(
        "PutItem",
        "throttle",
        "ProvisionedThroughputExceededException",
        lambda: ddb.put_item(TableName=table, Item=key),
    )
    # The system-errors alarm adds up GetItem, PutItem and UpdateItem (metric math):
    # a 500 on the third alone must fire it.
    system = table_fault(
        "UpdateItem",
        "internal_error",
        "InternalServerError",
        lambda: ddb.update_item(
            TableName=table,
            Key=key,
            UpdateExpression="SET n = :n",
            ExpressionAttributeValues={":n": {"N": "1"}},
        ),
    )

    def undeliverable() -> None:
        entries = [{"Source": watched["source"], "DetailType": "alarm proof", "Detail": "{}"}]
        assert aws("events").put_events(Entries=entries)["FailedEntryCount"] == 0

    def nothing() -> None:
        """The fault was a single event: nothing to clear, the next periods are clean."""

    def over_quota() -> None:
        # The account's state-transition bucket is empty for this machine: each of its
        # transitions is held a second (not refused: the execution goes on). Every
        # transition, not the first only: the other proofs' executions of this machine
        # may enter a state first (held too; their outcomes do not change).
        plan.add(
            "transitions",
            {
                "service": "stepfunctions",
                "operation": "StateTransition",
                "kind": "transition_throttle",
                "resource": watched["machine"],
                "seconds": HELD,
            },
        )
        arn = sfn.start_execution(
            stateMachineArn=watched["machine"], input=json.dumps({"seconds": 0})
        )["executionArn"]
        _wait_status(sfn, arn, "SUCCEEDED")
        events = history(sfn, arn)
        started, entered = events[0]["timestamp"], events[1]["timestamp"]
        assert events[1]["type"] == "WaitStateEntered", events[1]
        assert (entered - started).total_seconds() >= HELD, (started, entered)

    return {
        "machine-executions-timed-out": (timed_out, nothing),
        "machine-executions-aborted": (aborted, nothing),
        "machine-execution-throttled": (over_quota, lambda: plan.remove("transitions")),
        "function-errors": (failing, nothing),
        "throttled-throttles": (throttled, unthrottled),
        "function-duration": (slow, nothing),
        "table-read-throttles": read,
        "table-write-throttles": write,
        "table-system-errors": system,
        "rule-failed-invocations": (undeliverable, nothing),
    }


def test_each_kind_fires_notifies_and_recovers(
    aws: Callable, watched: dict, localstack_endpoint: str
) -> None:
    alarms, inbox = watched["alarms"], watched["inbox"]
    faults_of = proofs(aws, watched, Faults(localstack_endpoint))
    try:
        with ThreadPoolExecutor(max_workers=len(faults_of)) as pool:
            running = {
                key: pool.submit(prove_alarm, aws, inbox, alarms[key], inject=inject, clear=clear)
                for key, (inject, clear) in faults_of.items()
            }
            failed = {}
            for key, future in running.items():
                try:
                    future.result()
                except Exception as error:  # every proof's outcome, not the first failure
                    failed[key] = f"{type(error).__name__}: {error}"
    finally:
        faults.clear(localstack_endpoint)
    # One line per failed proof (a dict's repr is cut short in pytest's report).
    assert not failed, f"{len(failed)} of {len(faults_of)} proofs failed:\n" + "\n".join(
        f"{key}: {error}" for key, error in failed.items()
    )
