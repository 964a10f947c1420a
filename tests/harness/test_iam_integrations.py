"""Unit tests of the static IAM check: what each integration requires, and ``allowed``.

The expected permissions are written from AWS's pages ("IAM policies for integrated
services" of the Step Functions guide, the Service Authorization Reference), not
read back from the code: each case names its page.
"""

from __future__ import annotations

import json

import pytest

from sfn_patterns_localstack.emulation.iam.integrations import (
    Context,
    UnmappedIntegration,
    required_permissions,
)
from sfn_patterns_localstack.emulation.iam.static_check import (
    Machine,
    allowed,
    allowed_somewhere,
    missing_permissions,
    rendered_policies,
)

CTX = Context("aws-cn", "cn-north-1", "123456789012")
P = "arn:aws-cn"


def _machine(*states: tuple[str, dict]) -> dict:
    return {"StartAt": states[0][0], "States": dict(states)}


def _task(resource: str, **parameters: object) -> dict:
    return {"Type": "Task", "Resource": resource, "Parameters": parameters, "End": True}


def _pairs(definition: dict, context: Context | None = CTX) -> set[tuple[str, str]]:
    return {(r.action, r.resource) for r in required_permissions(definition, context)}


# --- integrations --------------------------------------------------------------------


def test_lambda_invoke_and_wait_for_task_token_need_invoke_function() -> None:
    # lambda-iam.html: lambda:InvokeFunction on the function; a qualified call is
    # authorized on the qualified ARN (policies grant NAME and NAME:*).
    definition = _machine(
        ("A", _task(f"{P}:states:::lambda:invoke", FunctionName="f1")),
        (
            "B",
            _task(
                f"{P}:states:::lambda:invoke.waitForTaskToken",
                FunctionName=f"{P}:lambda:cn-north-1:111111111111:function:f2:live",
            ),
        ),
        ("C", _task(f"{P}:states:::lambda:invoke", FunctionName="f3", Qualifier="7")),
    )
    assert _pairs(definition) == {
        ("lambda:InvokeFunction", f"{P}:lambda:cn-north-1:123456789012:function:f1"),
        ("lambda:InvokeFunction", f"{P}:lambda:cn-north-1:111111111111:function:f2:live"),
        ("lambda:InvokeFunction", f"{P}:lambda:cn-north-1:123456789012:function:f3:7"),
    }


def test_start_execution_sync_needs_follow_stop_and_the_managed_rule() -> None:
    # stepfunctions-iam.html, "Synchronous" (.sync and .sync:2).
    machine = f"{P}:states:cn-north-1:123456789012:stateMachine:child"
    definition = _machine(
        ("S", _task(f"{P}:states:::states:startExecution.sync:2", StateMachineArn=machine))
    )
    rule_name = "StepFunctionsGetEventsForStepFunctionsExecutionRule"
    rule = f"{P}:events:cn-north-1:123456789012:rule/{rule_name}"
    executions = f"{P}:states:cn-north-1:123456789012:execution:child:*"
    assert _pairs(definition) == {
        ("states:StartExecution", machine),
        ("states:DescribeExecution", executions),
        ("states:StopExecution", executions),
        ("events:PutTargets", rule),
        ("events:PutRule", rule),
        ("events:DescribeRule", rule),
    }
    # Fire and forget (no .sync): StartExecution only.
    plain = _machine(("S", _task(f"{P}:states:::states:startExecution", StateMachineArn=machine)))
    assert _pairs(plain) == {("states:StartExecution", machine)}


def test_dynamodb_optimized_and_sdk_calls_need_their_own_action_on_the_table() -> None:
    table = f"{P}:dynamodb:cn-north-1:123456789012:table/locks"
    definition = _machine(
        ("U", _task(f"{P}:states:::dynamodb:updateItem", TableName="locks")),
        ("G", _task(f"{P}:states:::dynamodb:getItem", TableName="locks")),
        (
            "Q",
            _task(f"{P}:states:::aws-sdk:dynamodb:query", TableName="locks", IndexName="by_status"),
        ),
        (
            "T",
            _task(
                f"{P}:states:::aws-sdk:dynamodb:transactWriteItems",
                TransactItems=[
                    {"Put": {"TableName": "runs"}},
                    {"ConditionCheck": {"TableName": "locks"}},
                ],
            ),
        ),
    )
    assert _pairs(definition) == {
        ("dynamodb:UpdateItem", table),
        ("dynamodb:GetItem", table),
        ("dynamodb:Query", f"{table}/index/by_status"),
        ("dynamodb:PutItem", f"{P}:dynamodb:cn-north-1:123456789012:table/runs"),
        ("dynamodb:ConditionCheckItem", table),
    }


def test_redshift_data_needs_the_statement_action_and_the_credential_action() -> None:
    # data-api-access.html: the statement on the workgroup, GetCredentials (or the secret).
    definition = _machine(
        (
            "E",
            _task(
                f"{P}:states:::aws-sdk:redshiftdata:batchExecuteStatement",
                WorkgroupName="wg",
                Database="dev",
            ),
        ),
        (
            "S",
            _task(
                f"{P}:states:::aws-sdk:redshiftdata:executeStatement",
                ClusterIdentifier="c1",
                Database="dev",
                SecretArn=f"{P}:secretsmanager:cn-north-1:123456789012:secret:s-AbC",
            ),
        ),
        ("D", _task(f"{P}:states:::aws-sdk:redshiftdata:describeStatement", **{"Id.$": "$.id"})),
        (
            "U",
            _task(
                f"{P}:states:::aws-sdk:redshiftdata:executeStatement",
                ClusterIdentifier="c2",
                Database="dev",
                DbUser="etl",
            ),
        ),
    )
    workgroup = f"{P}:redshift-serverless:cn-north-1:123456789012:workgroup/*"
    assert _pairs(definition) == {
        ("redshift-data:BatchExecuteStatement", workgroup),
        ("redshift-serverless:GetCredentials", workgroup),
        ("redshift-data:ExecuteStatement", f"{P}:redshift:cn-north-1:123456789012:cluster:c1"),
        (
            "secretsmanager:GetSecretValue",
            f"{P}:secretsmanager:cn-north-1:123456789012:secret:s-AbC",
        ),
        ("redshift-data:DescribeStatement", "*"),
        ("redshift-data:ExecuteStatement", f"{P}:redshift:cn-north-1:123456789012:cluster:c2"),
        ("redshift:GetClusterCredentials", f"{P}:redshift:cn-north-1:123456789012:dbuser:c2/etl"),
        ("redshift:GetClusterCredentials", f"{P}:redshift:cn-north-1:123456789012:dbname:c2/dev"),
    }


def test_events_put_events_and_sqs_send_message() -> None:
    definition = _machine(
        (
            "E",
            _task(
                f"{P}:states:::events:putEvents", Entries=[{"Source": "x"}, {"EventBusName": "ops"}]
            ),
        ),
        (
            "Q",
            _task(
                f"{P}:states:::sqs:sendMessage.waitForTaskToken",
                QueueUrl="https://sqs.cn-north-1.amazonaws.com.cn/123456789012/jobs",
            ),
        ),
    )
    assert _pairs(definition) == {
        ("events:PutEvents", f"{P}:events:cn-north-1:123456789012:event-bus/default"),
        ("events:PutEvents", f"{P}:events:cn-north-1:123456789012:event-bus/ops"),
        ("sqs:SendMessage", f"{P}:sqs:cn-north-1:123456789012:jobs"),
    }


def test_map_and_parallel_states_are_recursed() -> None:
    inner = _machine(("I", _task(f"{P}:states:::lambda:invoke", FunctionName="in_map")))
    branch = _machine(("B", _task(f"{P}:states:::lambda:invoke", FunctionName="in_branch")))
    definition = _machine(
        ("M", {"Type": "Map", "ItemProcessor": inner, "End": True}),
        ("Old", {"Type": "Map", "Iterator": branch, "End": True}),
        (
            "P",
            {
                "Type": "Parallel",
                "Branches": [_machine(("X", {"Type": "Map", "ItemProcessor": branch}))],
            },
        ),
    )
    found = {(r.state, r.resource.rsplit(":", 1)[1]) for r in required_permissions(definition, CTX)}
    assert found == {("M/I", "in_map"), ("Old/B", "in_branch"), ("P/branch 0/X/B", "in_branch")}


def test_computed_resources_become_patterns_with_a_note() -> None:
    definition = _machine(
        ("D", _task(f"{P}:states:::aws-sdk:sfn:describeExecution", **{"ExecutionArn.$": "$.arn"})),
        ("L", _task(f"{P}:states:::lambda:invoke", **{"FunctionName.$": "$.fn"})),
        (
            "J",
            {
                "Type": "Task",
                "Resource": f"{P}:states:::dynamodb:getItem",
                "QueryLanguage": "JSONata",
                "Arguments": {"TableName": "{% $table %}"},
                "End": True,
            },
        ),
    )
    requirements = required_permissions(definition, CTX)
    assert [(r.resource, bool(r.note), r.scope) for r in requirements] == [
        (f"{P}:states:*:*:execution:*", True, "any"),
        (f"{P}:lambda:*:*:function:*", True, "any"),
        (f"{P}:dynamodb:cn-north-1:123456789012:table/*", True, "any"),
    ]
    # A static ARN, the executions of a .sync child and "*" must be allowed whole.
    machine = f"{P}:states:cn-north-1:123456789012:stateMachine:child"
    sync = _machine(
        ("S", _task(f"{P}:states:::states:startExecution.sync", StateMachineArn=machine))
    )
    assert {r.scope for r in required_permissions(sync, CTX)} == {"all"}


def test_credentials_move_the_task_to_the_assumed_role() -> None:
    role = f"{P}:iam::111111111111:role/jobs"
    task = _task(
        f"{P}:states:::aws-sdk:sfn:startExecution",
        StateMachineArn=f"{P}:states:cn-north-1:111111111111:stateMachine:x",
    )
    definition = _machine(("R", {**task, "Credentials": {"RoleArn": role}}))
    requirements = required_permissions(definition, CTX)
    assert [(r.action, r.resource, r.role_arn) for r in requirements] == [
        ("sts:AssumeRole", role, None),
        ("states:StartExecution", f"{P}:states:cn-north-1:111111111111:stateMachine:x", role),
    ]
    # Across accounts, .sync polls the child instead of using the managed rule
    # (concepts-access-cross-acct-resources.html): no events permission.
    machine = f"{P}:states:cn-north-1:111111111111:stateMachine:x"
    sync = _task(f"{P}:states:::states:startExecution.sync:2", StateMachineArn=machine)
    cross = _machine(("S", {**sync, "Credentials": {"RoleArn": role}}))
    assert {r.action for r in required_permissions(cross, CTX)} == {
        "sts:AssumeRole",
        "states:StartExecution",
        "states:DescribeExecution",
        "states:StopExecution",
    }


@pytest.mark.parametrize(
    "resource",
    [
        "arn:aws:states:::glue:startJobRun.sync",
        "arn:aws:states:::aws-sdk:s3:getObject",
        "arn:aws:states:::http:invoke",
    ],
)
def test_an_unmapped_integration_is_an_error_not_a_pass(resource: str) -> None:
    with pytest.raises(UnmappedIntegration, match="not mapped"):
        required_permissions(_machine(("X", _task(resource, JobName="j", Bucket="b"))), CTX)


def test_activities_need_nothing_from_the_role() -> None:
    activity = {
        "Type": "Task",
        "Resource": f"{P}:states:cn-north-1:123456789012:activity:a",
        "End": True,
    }
    assert required_permissions(_machine(("A", activity)), CTX) == []


# --- allowed -------------------------------------------------------------------------

FN = "arn:aws:lambda:eu-west-1:123456789012:function:f"


def _doc(*statements: dict) -> dict:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def test_allowed_needs_a_matching_allow_and_loses_to_an_explicit_deny() -> None:
    allow = {"Effect": "Allow", "Action": "lambda:invokefunction", "Resource": [FN, f"{FN}:*"]}
    assert allowed([_doc(allow)], "lambda:InvokeFunction", FN)  # actions: case-insensitive
    assert allowed([_doc(allow)], "lambda:InvokeFunction", f"{FN}:live")
    assert not allowed([_doc(allow)], "lambda:InvokeFunction", f"{FN}2")
    assert not allowed([_doc(allow)], "lambda:GetFunction", FN)
    deny = {"Effect": "Deny", "Action": "lambda:*", "Resource": "*"}
    assert not allowed([_doc(allow), _doc(deny)], "lambda:InvokeFunction", FN)
    assert not allowed([], "lambda:InvokeFunction", FN)


def test_allowed_handles_not_action_not_resource_and_question_marks() -> None:
    not_action = {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}
    assert allowed([_doc(not_action)], "lambda:InvokeFunction", FN)
    assert not allowed([_doc(not_action)], "iam:PassRole", "*")
    not_resource = {
        "Effect": "Allow",
        "Action": "lambda:InvokeFunction",
        "NotResource": f"{FN}-secret",
    }
    assert allowed([_doc(not_resource)], "lambda:InvokeFunction", FN)
    assert not allowed([_doc(not_resource)], "lambda:InvokeFunction", f"{FN}-secret")
    question = {"Effect": "Allow", "Action": "lambda:Invoke?unction", "Resource": f"{FN[:-1]}?"}
    assert allowed([_doc(question)], "lambda:InvokeFunction", FN)


def test_a_pattern_resource_needs_a_grant_covering_all_of_it() -> None:
    executions = "arn:aws:states:*:*:execution:*"
    narrow = {
        "Effect": "Allow",
        "Action": "states:DescribeExecution",
        "Resource": "arn:aws:states:eu-west-1:123456789012:execution:child:*",
    }
    wide = {**narrow, "Resource": "*"}
    assert not allowed([_doc(narrow)], "states:DescribeExecution", executions)
    assert allowed([_doc(wide)], "states:DescribeExecution", executions)
    # A Deny on part of the pattern touches it.
    deny_one = {
        "Effect": "Deny",
        "Action": "states:*",
        "Resource": "arn:aws:states:eu-west-1:1:execution:x:y",
    }
    assert not allowed([_doc(wide, deny_one)], "states:DescribeExecution", executions)


def test_a_resource_the_definition_cannot_name_needs_a_grant_of_its_kind() -> None:
    # ExecutionArn.$ computed at run time: a grant on some execution is enough
    # statically; a grant on the state machine's ARN instead is the classic mistake.
    executions = "arn:aws:states:*:*:execution:*"
    on_executions = {
        "Effect": "Allow",
        "Action": "states:DescribeExecution",
        "Resource": "arn:aws:states:eu-west-1:123456789012:execution:child:*",
    }
    on_machine = {**on_executions, "Resource": "arn:aws:states:eu-west-1:1:stateMachine:child"}
    assert allowed_somewhere([_doc(on_executions)], "states:DescribeExecution", executions)
    assert not allowed_somewhere([_doc(on_machine)], "states:DescribeExecution", executions)
    assert not allowed_somewhere([_doc(on_executions)], "states:StopExecution", executions)
    deny_all = {"Effect": "Deny", "Action": "states:*", "Resource": "*"}
    assert not allowed_somewhere(
        [_doc(on_executions, deny_all)], "states:DescribeExecution", executions
    )


def test_a_missing_permission_is_reported() -> None:
    # The check fails when the role does not name the invoked function.
    definition = _machine(("Run", _task("arn:aws:states:::lambda:invoke", FunctionName=FN)))
    granted = _doc(
        {"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": f"{FN}-other"}
    )
    missing, other = missing_permissions(Machine("m", definition, [granted], None))
    assert [
        (f.requirement.state, f.requirement.action, f.requirement.resource) for f in missing
    ] == [("Run", "lambda:InvokeFunction", FN)]
    assert "lambda-iam.html" in str(missing[0]) and other == []
    fixed = _doc(
        {"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": [FN, f"{FN}:*"]}
    )
    assert missing_permissions(Machine("m", definition, [fixed], None)) == ([], [])


# --- every policy a plan renders ---------------------------------------------------------


def _resource(kind: str, address: str, **values: object) -> dict:
    return {"type": kind, "mode": "managed", "address": address, "values": values}


def _data(kind: str, **values: object) -> dict:
    return {"type": kind, "mode": "data", "address": f"data.{kind}.current", "values": values}


def test_rendered_policies_pair_each_role_with_its_policies_and_module_context() -> None:
    trust = {"Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole"}]}
    grant = {"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
    role = "module.m.module.fn.aws_iam_role.this"
    child = {
        "address": "module.m.module.fn",
        "resources": [
            _resource("aws_iam_role", role, name="r", assume_role_policy=json.dumps(trust)),
            # Named by the role's name, or (unknown at plan time) by being in its module.
            _resource(
                "aws_iam_role_policy",
                "module.m.module.fn.aws_iam_role_policy.a",
                role="r",
                policy=json.dumps(grant),
            ),
            _resource(
                "aws_iam_role_policy",
                "module.m.module.fn.aws_iam_role_policy.b",
                role=None,
                policy=json.dumps(grant),
            ),
            _resource(
                "aws_iam_role_policy",
                "module.m.module.fn.aws_iam_role_policy.c",
                role="r",
                policy=None,
            ),
        ],
    }
    prior = {
        "address": "module.m",
        "resources": [
            _data("aws_partition", partition="aws-cn"),
            _data("aws_region", region="cn-north-1"),
            _data("aws_caller_identity", account_id="123456789012"),
        ],
    }
    plan = {
        "planned_values": {
            "root_module": {"child_modules": [{"address": "module.m", "child_modules": [child]}]}
        },
        "prior_state": {"values": {"root_module": {"child_modules": [prior]}}},
    }
    rendered = rendered_policies(plan)
    assert rendered["unknown"] == ["module.m.module.fn.aws_iam_role_policy.c"]
    [only] = rendered["roles"]
    assert (only["role"], only["name"], only["trust"]) == (role, "r", trust)
    # The child module has no data sources: the nearest module above it has.
    assert only["context"] == {
        "partition": "aws-cn",
        "region": "cn-north-1",
        "account": "123456789012",
    }
    assert [p["policy"].rsplit(".", 1)[1] for p in only["identity"]] == ["a", "b"]
    # A policy of a role the plan does not hold is an error, not a silent drop.
    child["resources"][1]["values"]["role"] = "elsewhere"
    with pytest.raises(ValueError, match=r"aws_iam_role_policy\.a:"):
        rendered_policies(plan)
