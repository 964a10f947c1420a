"""The leftover check finds every kind of resource the examples create, on every page."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import pytest

from sfn_patterns_localstack.terraform.leftovers import (
    CHECKERS,
    Created,
    UncheckedTypeError,
    created_resources,
    still_there,
)

pytestmark = pytest.mark.integration

TRUST = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "states.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
)


def test_present_resources_are_reported_and_deleted_ones_are_not(aws: Callable) -> None:
    tag = f"lo-{uuid.uuid4().hex[:6]}"
    iam, sfn, sqs, s3, logs, events, ddb, sns = (
        aws(s) for s in ("iam", "stepfunctions", "sqs", "s3", "logs", "events", "dynamodb", "sns")
    )
    # Enough roles and tables that the listings need more than one page.
    for i in range(105):
        iam.create_role(RoleName=f"{tag}-filler-{i:03d}", AssumeRolePolicyDocument=TRUST)
    role_arn = iam.create_role(RoleName=f"{tag}-role", AssumeRolePolicyDocument=TRUST)["Role"][
        "Arn"
    ]
    iam.put_role_policy(
        RoleName=f"{tag}-role",
        PolicyName="inline",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}],
            }
        ),
    )
    policy = iam.create_policy(
        PolicyName=f"{tag}-boundary",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
            }
        ),
    )["Policy"]["Arn"]
    machine = sfn.create_state_machine(
        name=f"{tag}-sm",
        roleArn=role_arn,
        definition=json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}),
    )["stateMachineArn"]
    queue = sqs.create_queue(QueueName=f"{tag}-q")["QueueUrl"]
    topic = sns.create_topic(Name=f"{tag}-topic")["TopicArn"]
    s3.create_bucket(Bucket=f"{tag}-bucket")
    s3.put_object(Bucket=f"{tag}-bucket", Key="k/obj", Body=b"x")
    logs.create_log_group(logGroupName=f"/aws/lambda/{tag}")
    events.put_rule(Name=f"{tag}-rule", ScheduleExpression="rate(1 day)")
    events.put_targets(
        Rule=f"{tag}-rule", Targets=[{"Id": "t1", "Arn": machine, "RoleArn": role_arn}]
    )
    ddb.create_table(
        TableName=f"{tag}-table",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    created = [
        Created("aws_iam_role", "r", {"name": f"{tag}-role"}),
        Created("aws_iam_role_policy", "rp", {"role": f"{tag}-role", "name": "inline"}),
        Created("aws_iam_policy", "p", {"arn": policy, "name": f"{tag}-boundary"}),
        Created("aws_sfn_state_machine", "sm", {"arn": machine}),
        Created("aws_sqs_queue", "q", {"name": f"{tag}-q", "url": queue}),
        Created("aws_sns_topic", "tp", {"arn": topic, "name": f"{tag}-topic"}),
        Created("aws_s3_bucket", "b", {"bucket": f"{tag}-bucket"}),
        Created("aws_s3_object", "o", {"bucket": f"{tag}-bucket", "key": "k/obj"}),
        Created("aws_cloudwatch_log_group", "lg", {"name": f"/aws/lambda/{tag}"}),
        Created("aws_cloudwatch_event_rule", "er", {"name": f"{tag}-rule"}),
        Created("aws_cloudwatch_event_target", "et", {"rule": f"{tag}-rule", "target_id": "t1"}),
        Created("aws_dynamodb_table", "t", {"name": f"{tag}-table"}),
        Created("aws_dynamodb_table_item", "ti", {"table_name": f"{tag}-table"}),
    ]
    try:
        assert sorted(still_there(aws, created)) == sorted(
            f"{c.address} ({c.type})" for c in created
        )
    finally:
        iam.delete_role_policy(RoleName=f"{tag}-role", PolicyName="inline")
        for i in range(105):
            iam.delete_role(RoleName=f"{tag}-filler-{i:03d}")
        iam.delete_role(RoleName=f"{tag}-role")
        iam.delete_policy(PolicyArn=policy)
        sfn.delete_state_machine(stateMachineArn=machine)
        sqs.delete_queue(QueueUrl=queue)
        sns.delete_topic(TopicArn=topic)
        s3.delete_object(Bucket=f"{tag}-bucket", Key="k/obj")
        s3.delete_bucket(Bucket=f"{tag}-bucket")
        logs.delete_log_group(logGroupName=f"/aws/lambda/{tag}")
        events.remove_targets(Rule=f"{tag}-rule", Ids=["t1"])
        events.delete_rule(Name=f"{tag}-rule")
        ddb.delete_table(TableName=f"{tag}-table")
    assert still_there(aws, created) == []


def test_a_type_without_a_checker_is_an_error(aws: Callable) -> None:
    assert "aws_sfn_activity" not in CHECKERS
    with pytest.raises(UncheckedTypeError, match="aws_sfn_activity"):
        still_there(aws, [Created("aws_sfn_activity", "a", {"name": "x"})])


def test_every_type_the_terraform_creates_has_a_checker() -> None:
    """Every resource type in the repository's *.tf files can be checked after a destroy."""
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    types = set()
    for path in repo.rglob("*.tf"):
        if ".terraform" in path.parts or ".venv" in path.parts:
            continue
        types.update(re.findall(r'^\s*resource\s+"(aws_[a-z0-9_]+)"', path.read_text(), re.M))
    assert types - set(CHECKERS) == set()


def test_created_resources_reads_every_managed_instance_of_a_state_file() -> None:
    """Addresses as Terraform writes them: module path, count and for_each keys; no data."""
    state = {
        "version": 4,
        "resources": [
            {
                "mode": "data",
                "type": "aws_partition",
                "name": "current",
                "instances": [{"attributes": {"partition": "aws"}}],
            },
            {
                "mode": "managed",
                "type": "aws_sqs_queue",
                "name": "jobs",
                "instances": [{"attributes": {"name": "q1"}}],
            },
            {
                "module": 'module.poller.module.fn["check"]',
                "mode": "managed",
                "type": "aws_iam_role",
                "name": "this",
                "instances": [
                    {"index_key": 0, "attributes": {"name": "r0"}},
                    {"index_key": 1, "attributes": {"name": "r1"}},
                ],
            },
            {
                "mode": "managed",
                "type": "aws_s3_object",
                "name": "sql",
                "instances": [{"index_key": "a.sql", "attributes": {"key": "a.sql"}}],
            },
        ],
    }
    assert created_resources(state) == [
        Created("aws_sqs_queue", "aws_sqs_queue.jobs", {"name": "q1"}),
        Created(
            "aws_iam_role",
            'module.poller.module.fn["check"].aws_iam_role.this[0]',
            {"name": "r0"},
        ),
        Created(
            "aws_iam_role",
            'module.poller.module.fn["check"].aws_iam_role.this[1]',
            {"name": "r1"},
        ),
        Created("aws_s3_object", 'aws_s3_object.sql["a.sql"]', {"key": "a.sql"}),
    ]
    assert created_resources({}) == []
