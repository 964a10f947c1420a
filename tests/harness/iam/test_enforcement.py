"""IAM enforcement on a real LocalStack: role sessions, Step Functions tasks, EventBridge, trust.

Each test grants too little, sees the call fail as AWS fails it, then grants what AWS
requires and sees it succeed; the oracles are the AWS API's own answers (error codes,
execution status, a message that did or did not arrive), never the emulation's records.

The session LocalStack runs with whatever ``SFNP_IAM`` the suite chose; unless that is
``enforce``, this module starts one LocalStack of its own in enforce mode.
"""

from __future__ import annotations

import io
import json
import os
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator

import boto3
import pytest
from botocore.exceptions import ClientError

from sfn_patterns_localstack.clients import client_factory
from tests.iam_denial import denial, expect_denials

pytestmark = pytest.mark.integration

ACCOUNT = "000000000000"
REGION = "us-east-1"


@pytest.fixture(scope="module")
def endpoint(request: pytest.FixtureRequest) -> Iterator[str]:
    """A LocalStack enforcing IAM: the session's when it does, else one of our own."""
    if os.environ.get("LOCALSTACK_ENDPOINT"):
        pytest.skip("an external LocalStack may not run this harness's IAM enforcement")
    from sfn_patterns_localstack import server

    if server.ENVIRONMENT["SFNP_IAM"] == "enforce":  # the suite's default
        yield request.getfixturevalue("localstack_endpoint")
        return
    instance = server.start(extra_env={"SFNP_IAM": "enforce"})
    try:
        yield instance.endpoint
    finally:
        instance.stop()


@pytest.fixture(scope="module")
def admin(endpoint: str) -> Callable:
    """Clients with the account's own credentials: not evaluated, as Terraform's are not."""
    return client_factory(endpoint)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_role(admin: Callable, trust_principal: dict, policy: dict | None = None) -> str:
    name = unique("iam-test")
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": trust_principal, "Action": "sts:AssumeRole"}
        ],
    }
    arn = admin("iam").create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))[
        "Role"
    ]["Arn"]
    if policy is not None:
        put_policy(admin, name, policy)
    return arn


def put_policy(admin: Callable, role_name: str, *statements: dict) -> None:
    document = {"Version": "2012-10-17", "Statement": list(statements)}
    admin("iam").put_role_policy(
        RoleName=role_name, PolicyName="inline", PolicyDocument=json.dumps(document)
    )


def session(endpoint: str, role_arn: str, credentials_from: Callable | None = None) -> Callable:
    """A client factory acting as a session of ``role_arn`` (assumed by ``credentials_from``)."""
    sts = (credentials_from or client_factory(endpoint))("sts")
    creds = sts.assume_role(RoleArn=role_arn, RoleSessionName="tester")["Credentials"]
    boto = boto3.Session(
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name=REGION,
    )
    return lambda service: boto.client(service, endpoint_url=endpoint)


ACCOUNT_ROOT = {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}


def denied(call: Callable[[], object]) -> ClientError:
    with pytest.raises(ClientError) as raised:
        call()
    return raised.value


# -- DynamoDB: a Query on an index is checked on the index ARN ------------------------------
def test_query_on_index_needs_a_grant_on_the_index(endpoint, admin):
    table = unique("jobs")
    admin("dynamodb").create_table(
        TableName=table,
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "status", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-status",
                "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    table_arn = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}"
    grant = {"Sid": "Table", "Effect": "Allow", "Action": "dynamodb:Query", "Resource": table_arn}
    role_arn = make_role(admin, ACCOUNT_ROOT)
    role_name = role_arn.rsplit("/", 1)[1]
    put_policy(admin, role_name, grant)
    ddb = session(endpoint, role_arn)("dynamodb")
    by_status = {
        "TableName": table,
        "IndexName": "by-status",
        "KeyConditionExpression": "#s = :s",
        "ExpressionAttributeNames": {"#s": "status"},
        "ExpressionAttributeValues": {":s": {"S": "WAITING"}},
    }
    ddb.query(
        TableName=table,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "a"}},
    )
    index_arn = f"{table_arn}/index/by-status"
    with expect_denials(denial(role_name, "dynamodb:Query", index_arn)):
        error = denied(lambda: ddb.query(**by_status))
    assert error.response["Error"]["Code"] == "AccessDeniedException"
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error.response["Error"]["Message"] == (
        f"User: arn:aws:sts::{ACCOUNT}:assumed-role/{role_name}/tester is not authorized to "
        f"perform: dynamodb:Query on resource: {table_arn}/index/by-status because no "
        "identity-based policy allows the dynamodb:Query action"
    )
    # Terraform adding the index to the policy takes effect at once (no stale cache).
    put_policy(admin, role_name, {**grant, "Resource": [table_arn, f"{table_arn}/index/*"]})
    assert ddb.query(**by_status)["Count"] == 0
    # ...and an explicit Deny wins over that Allow.
    put_policy(
        admin,
        role_name,
        {**grant, "Resource": [table_arn, f"{table_arn}/index/*"]},
        {"Effect": "Deny", "Action": "dynamodb:*", "Resource": f"{table_arn}/index/by-status"},
    )
    with expect_denials(denial(role_name, "dynamodb:Query", index_arn)):
        error = denied(lambda: ddb.query(**by_status))
    assert "with an explicit deny in an identity-based policy" in error.response["Error"]["Message"]


# -- Step Functions: executions are named by their own ARN ---------------------------------
PASS_MACHINE = {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 30, "End": True}}}


def test_describe_execution_needs_the_execution_arn_not_the_machine(endpoint, admin):
    sfn = admin("stepfunctions")
    machine_role = make_role(admin, {"Service": "states.amazonaws.com"})
    name = unique("machine")
    machine = sfn.create_state_machine(
        name=name, definition=json.dumps(PASS_MACHINE), roleArn=machine_role
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine)["executionArn"]
    caller = make_role(admin, ACCOUNT_ROOT)
    caller_name = caller.rsplit("/", 1)[1]
    put_policy(
        admin,
        caller_name,
        {
            "Effect": "Allow",
            "Action": ["states:DescribeExecution", "states:StopExecution"],
            "Resource": machine,
        },
    )
    states = session(endpoint, caller)("stepfunctions")
    with expect_denials(denial(caller, "states:DescribeExecution", execution)):
        error = denied(lambda: states.describe_execution(executionArn=execution))
    assert error.response["Error"]["Code"] == "AccessDeniedException"
    assert f"on resource: {execution} because" in error.response["Error"]["Message"]
    executions = f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{name}:*"
    put_policy(
        admin,
        caller_name,
        {
            "Effect": "Allow",
            "Action": ["states:DescribeExecution", "states:StopExecution"],
            "Resource": executions,
        },
    )
    assert states.describe_execution(executionArn=execution)["status"] == "RUNNING"
    states.stop_execution(executionArn=execution)
    assert sfn.describe_execution(executionArn=execution)["status"] == "ABORTED"


def test_a_task_runs_with_the_state_machine_roles_permissions(endpoint, admin):
    """Step Functions' task call is made by the machine's role session and fails as in AWS."""
    table = unique("items")
    admin("dynamodb").create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    admin("dynamodb").put_item(TableName=table, Item={"pk": {"S": "a"}, "v": {"S": "found"}})
    machine_role = make_role(admin, {"Service": "states.amazonaws.com"})
    definition = {
        "StartAt": "Get",
        "States": {
            "Get": {
                "Type": "Task",
                "Resource": "arn:aws:states:::dynamodb:getItem",
                "Parameters": {"TableName": table, "Key": {"pk": {"S": "a"}}},
                "End": True,
            }
        },
    }
    sfn = admin("stepfunctions")
    machine = sfn.create_state_machine(
        name=unique("task"), definition=json.dumps(definition), roleArn=machine_role
    )["stateMachineArn"]

    def run() -> dict:
        execution = sfn.start_execution(stateMachineArn=machine)["executionArn"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            described = sfn.describe_execution(executionArn=execution)
            if described["status"] != "RUNNING":
                return described
            time.sleep(0.3)
        raise AssertionError(f"{execution} still running after 60 s")

    with expect_denials(denial(machine_role, "dynamodb:GetItem", f"*:table/{table}")):
        failed = run()
    assert failed["status"] == "FAILED"
    assert "AccessDenied" in failed.get("error", "") + failed.get("cause", "")
    assert "dynamodb:GetItem" in failed.get("cause", "")
    put_policy(
        admin,
        machine_role.rsplit("/", 1)[1],
        {
            "Effect": "Allow",
            "Action": "dynamodb:GetItem",
            "Resource": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}",
        },
    )
    succeeded = run()
    assert succeeded["status"] == "SUCCEEDED", succeeded
    assert json.loads(succeeded["output"])["Item"]["v"]["S"] == "found"


# -- EventBridge invoking a Lambda function: the function policy decides --------------------
FORWARDER = """
import json, os, boto3
def handler(event, context):
    print("forwarding", event["detail"]["m"])
    sqs = boto3.client("sqs")
    sqs.send_message(QueueUrl=os.environ["QUEUE_URL"], MessageBody=json.dumps(event["detail"]))
"""


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", source)
    return buffer.getvalue()


def test_eventbridge_invokes_a_function_only_with_its_permission(endpoint, admin):
    sqs = admin("sqs")
    queue_url = sqs.create_queue(QueueName=unique("arrivals"))["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    function_role = make_role(admin, {"Service": "lambda.amazonaws.com"})
    lam = admin("lambda")
    function = unique("forwarder")
    # The group Terraform makes; the role may write streams in it, as the modules grant.
    group = f"/aws/lambda/{function}"
    admin("logs").create_log_group(logGroupName=group)
    group_arn = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:{group}"
    put_policy(
        admin,
        function_role.rsplit("/", 1)[1],
        {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": queue_arn},
        {
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": f"{group_arn}:*",
        },
    )
    lam.create_function(
        FunctionName=function,
        Runtime="python3.11",
        Role=function_role,
        Handler="app.handler",
        Code={"ZipFile": _zip(FORWARDER)},
        Environment={"Variables": {"QUEUE_URL": queue_url}},
        Timeout=30,
    )
    lam.get_waiter("function_active_v2").wait(FunctionName=function)
    function_arn = lam.get_function(FunctionName=function)["Configuration"]["FunctionArn"]
    events = admin("events")
    source = unique("test.iam")
    rule = unique("forward")
    rule_arn = events.put_rule(Name=rule, EventPattern=json.dumps({"source": [source]}))["RuleArn"]
    events.put_targets(Rule=rule, Targets=[{"Id": "fn", "Arn": function_arn}])

    def send(marker: str) -> None:
        events.put_events(
            Entries=[{"Source": source, "DetailType": "t", "Detail": json.dumps({"m": marker})}]
        )

    # EventBridge's invocations are asynchronous: each refusal is awaited in the record
    # (expect_denials), so the next step starts after it.
    with expect_denials(denial("events.amazonaws.com", "lambda:InvokeFunction", function_arn)):
        send("before-permission")
    # The permission aws_lambda_permission writes, naming another rule: still denied.
    lam.add_permission(
        FunctionName=function,
        StatementId="other-rule",
        Action="lambda:InvokeFunction",
        Principal="events.amazonaws.com",
        SourceArn=rule_arn + "-other",
    )
    with expect_denials(denial("events.amazonaws.com", "lambda:InvokeFunction", function_arn)):
        send("wrong-source-arn")
    lam.add_permission(
        FunctionName=function,
        StatementId="this-rule",
        Action="lambda:InvokeFunction",
        Principal="events.amazonaws.com",
        SourceArn=rule_arn,
    )
    send("with-permission")
    arrived: list[str] = []
    # An asynchronous invocation whose first attempt fails is retried, on AWS after about
    # a minute: a loaded CI run once saw no handler run within 60 s of an allowed invoke
    # (its cold start, a runtime not used before on that LocalStack, is the suspect), so
    # the wait covers one retry; on success it ends at the message's arrival.
    deadline = time.monotonic() + 150
    while "with-permission" not in arrived and time.monotonic() < deadline:
        for message in sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=2).get(
            "Messages", []
        ):
            arrived.append(json.loads(message["Body"])["m"])
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    assert arrived == ["with-permission"]
    # Its log reached the group without logs:CreateLogGroup, as in AWS.
    logs = admin("logs")
    printed: list[str] = []
    deadline = time.monotonic() + 30
    while not printed and time.monotonic() < deadline:
        found = logs.filter_log_events(logGroupName=group, filterPattern="forwarding")
        printed = [e["message"] for e in found["events"]]
        time.sleep(0.5)
    assert any("forwarding with-permission" in line for line in printed), printed


# -- sts:AssumeRole from a role session needs the target's trust ----------------------------
def test_assume_role_without_the_targets_trust_is_denied(endpoint, admin):
    caller = make_role(admin, ACCOUNT_ROOT)
    put_policy(
        admin,
        caller.rsplit("/", 1)[1],
        {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"},
    )
    target = make_role(admin, {"Service": "lambda.amazonaws.com"})
    as_caller = session(endpoint, caller)
    with expect_denials(denial(caller, "sts:AssumeRole", target)):
        error = denied(lambda: as_caller("sts").assume_role(RoleArn=target, RoleSessionName="hop"))
    assert error.response["Error"]["Code"] == "AccessDenied"
    assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert error.response["Error"]["Message"] == (
        f"User: arn:aws:sts::{ACCOUNT}:assumed-role/{caller.rsplit('/', 1)[1]}/tester is not "
        f"authorized to perform: sts:AssumeRole on resource: {target}"
    )
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": caller}, "Action": "sts:AssumeRole"}
        ],
    }
    admin("iam").update_assume_role_policy(
        RoleName=target.rsplit("/", 1)[1], PolicyDocument=json.dumps(trust)
    )
    hop = session(endpoint, target, credentials_from=as_caller)
    # The hop's own session has no identity policy at all: implicit deny, on its own name.
    with expect_denials(denial(target, "sqs:ListQueues", "*")):
        error = denied(lambda: hop("sqs").list_queues())
    assert (
        "/tester is not authorized to perform: sqs:ListQueues" in error.response["Error"]["Message"]
    )
    assert f"assumed-role/{target.rsplit('/', 1)[1]}/" in error.response["Error"]["Message"]
