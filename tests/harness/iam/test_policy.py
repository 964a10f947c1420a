"""The evaluator on the cases of AWS's documented policy evaluation logic.

Each case names the rule of "Policy evaluation logic" / "IAM JSON policy elements" it
checks; the expected outcome is AWS's documented behaviour, not the code's.
"""

from __future__ import annotations

import pytest

from sfn_patterns_localstack.emulation.iam.policy import (
    NamedPolicy,
    Principal,
    Request,
    conditions_match,
    evaluate,
)

TABLE = "arn:aws:dynamodb:us-east-1:111122223333:table/jobs"


def policy(*statements: dict, name: str = "p") -> NamedPolicy:
    return NamedPolicy(name, {"Version": "2012-10-17", "Statement": list(statements)})


def allow(action, resource, **extra) -> dict:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def deny(action, resource, **extra) -> dict:
    return {"Effect": "Deny", "Action": action, "Resource": resource, **extra}


def test_no_statement_matches_is_an_implicit_deny():
    decision = evaluate(
        [policy(allow("dynamodb:GetItem", TABLE))], Request("dynamodb:PutItem", TABLE)
    )
    assert (decision.allowed, decision.explicit, decision.kind) == (False, False, "implicit-deny")
    assert decision.statement is None


def test_no_policies_at_all_is_an_implicit_deny():
    assert evaluate([], Request("dynamodb:GetItem", TABLE)).kind == "implicit-deny"


def test_allow_names_the_policy_and_sid_that_allowed():
    decision = evaluate(
        [policy(allow("dynamodb:GetItem", TABLE, Sid="Read"), name="role/inline")],
        Request("dynamodb:GetItem", TABLE),
    )
    assert decision.allowed and decision.explicit
    assert decision.statement.label == "role/inline#Read"
    assert decision.statement.resource_pattern == TABLE


def test_statement_without_sid_is_named_by_index():
    decision = evaluate(
        [policy(allow("s3:GetObject", "*"), allow("dynamodb:GetItem", TABLE))],
        Request("dynamodb:GetItem", TABLE),
    )
    assert decision.statement.label == "p#[1]"


def test_explicit_deny_wins_over_allow_in_another_policy():
    decision = evaluate(
        [
            policy(allow("dynamodb:*", "*"), name="broad"),
            policy(deny("dynamodb:DeleteItem", TABLE, Sid="NoDelete"), name="guard"),
        ],
        Request("dynamodb:DeleteItem", TABLE),
    )
    assert decision.kind == "explicit-deny"
    assert decision.statement.label == "guard#NoDelete"


def test_statement_may_be_a_single_object():
    document = {"Version": "2012-10-17", "Statement": allow("states:SendTaskSuccess", "*")}
    assert evaluate([NamedPolicy("p", document)], Request("states:SendTaskSuccess", "*")).allowed


def test_actions_are_case_insensitive():
    assert evaluate(
        [policy(allow("DynamoDB:getitem", TABLE))], Request("dynamodb:GetItem", TABLE)
    ).allowed


def test_resources_are_case_sensitive():
    upper = TABLE.replace("jobs", "Jobs")
    assert not evaluate(
        [policy(allow("dynamodb:GetItem", upper))], Request("dynamodb:GetItem", TABLE)
    ).allowed


@pytest.mark.parametrize(
    ("pattern", "resource", "expected"),
    [
        ("arn:aws:dynamodb:*:*:table/jobs", TABLE, True),
        ("arn:aws:dynamodb:us-east-1:111122223333:table/job?", TABLE, True),
        ("arn:aws:dynamodb:us-east-1:111122223333:table/jo?", TABLE, False),
        # A grant on the table does not cover its index.
        ("arn:aws:dynamodb:us-east-1:111122223333:table/jobs", TABLE + "/index/status", False),
        (
            "arn:aws:dynamodb:us-east-1:111122223333:table/jobs/index/*",
            TABLE + "/index/status",
            True,
        ),
        ("*", TABLE, True),
    ],
)
def test_resource_wildcards(pattern, resource, expected):
    decision = evaluate(
        [policy(allow("dynamodb:Query", pattern))], Request("dynamodb:Query", resource)
    )
    assert decision.allowed is expected


@pytest.mark.parametrize(
    ("pattern", "action", "expected"),
    [
        ("states:*", "states:DescribeExecution", True),
        ("states:Describe*", "states:DescribeExecution", True),
        ("states:Describe*", "states:StopExecution", False),
        ("states:SendTask?uccess", "states:SendTaskSuccess", True),
        ("*", "lambda:InvokeFunction", True),
        ("lambda:Invoke", "lambda:InvokeFunction", False),
    ],
)
def test_action_wildcards(pattern, action, expected):
    assert evaluate([policy(allow(pattern, "*"))], Request(action, "*")).allowed is expected


def test_not_action_allows_everything_else():
    document = policy({"Effect": "Allow", "NotAction": "dynamodb:DeleteItem", "Resource": TABLE})
    assert evaluate([document], Request("dynamodb:PutItem", TABLE)).allowed
    assert not evaluate([document], Request("dynamodb:DeleteItem", TABLE)).allowed


def test_deny_with_not_action_denies_all_but_the_listed_actions():
    policies = [
        policy(allow("*", "*")),
        policy({"Effect": "Deny", "NotAction": ["sts:*", "iam:Get*"], "Resource": "*"}, name="d"),
    ]
    assert evaluate(policies, Request("sts:AssumeRole", "*")).allowed
    assert evaluate(policies, Request("s3:GetObject", "*")).kind == "explicit-deny"


def test_not_resource_matches_every_other_resource():
    document = policy({"Effect": "Allow", "Action": "dynamodb:*", "NotResource": TABLE})
    other = TABLE.replace("jobs", "other")
    assert evaluate([document], Request("dynamodb:GetItem", other)).allowed
    # moto treats NotResource without Resource as matching everything; AWS does not.
    assert not evaluate([document], Request("dynamodb:GetItem", TABLE)).allowed


def test_execution_arn_is_not_the_state_machine_arn():
    machine = "arn:aws:states:us-east-1:111122223333:stateMachine:m"
    execution = "arn:aws:states:us-east-1:111122223333:execution:m:run-1"
    grant = [policy(allow("states:DescribeExecution", machine))]
    assert not evaluate(grant, Request("states:DescribeExecution", execution)).allowed
    grant = [
        policy(
            allow("states:DescribeExecution", "arn:aws:states:us-east-1:111122223333:execution:m:*")
        )
    ]
    assert evaluate(grant, Request("states:DescribeExecution", execution)).allowed


# -- conditions --------------------------------------------------------------------------
FUNCTION = "arn:aws:lambda:us-east-1:111122223333:function:f"
RULE = "arn:aws:events:us-east-1:111122223333:rule/cleanup"


def function_policy(condition: dict) -> NamedPolicy:
    return policy(
        {
            "Effect": "Allow",
            "Principal": {"Service": "events.amazonaws.com"},
            "Action": "lambda:InvokeFunction",
            "Resource": FUNCTION,
            "Condition": condition,
        }
    )


def invoke(context: dict, service: str = "events.amazonaws.com") -> Request:
    return Request("lambda:InvokeFunction", FUNCTION, context, Principal(service=service))


def test_resource_policy_checks_principal_and_source_arn():
    grant = [function_policy({"ArnLike": {"AWS:SourceArn": RULE}})]
    assert evaluate(grant, invoke({"aws:SourceArn": RULE})).allowed
    # The wrong rule (a source_arn naming another rule) is denied.
    assert not evaluate(grant, invoke({"aws:SourceArn": RULE + "-other"})).allowed
    # Another service is not the principal the statement names.
    assert not evaluate(grant, invoke({"aws:SourceArn": RULE}, "sqs.amazonaws.com")).allowed
    # Without a principal (an identity-policy evaluation) a Principal statement never applies.
    assert not evaluate(
        grant, Request("lambda:InvokeFunction", FUNCTION, {"aws:SourceArn": RULE})
    ).allowed


def test_condition_key_names_are_case_insensitive_values_are_not():
    assert conditions_match(
        {"StringEquals": {"AWS:SourceAccount": "111122223333"}},
        {"aws:sourceaccount": "111122223333"},
    )
    assert not conditions_match({"StringEquals": {"aws:username": "Bob"}}, {"aws:username": "bob"})
    assert conditions_match(
        {"StringEqualsIgnoreCase": {"aws:username": "Bob"}}, {"aws:username": "bob"}
    )


def test_missing_key_fails_positive_operators_and_passes_negated_ones():
    assert not conditions_match({"StringEquals": {"aws:SourceAccount": "1"}}, {})
    assert not conditions_match({"ArnLike": {"aws:SourceArn": "*"}}, {})
    assert conditions_match({"StringNotEquals": {"aws:SourceAccount": "1"}}, {})
    assert conditions_match({"ArnNotLike": {"aws:SourceArn": RULE}}, {})


def test_if_exists_passes_a_missing_key_and_checks_a_present_one():
    condition = {"StringEqualsIfExists": {"iam:PassedToService": "states.amazonaws.com"}}
    assert conditions_match(condition, {})
    assert conditions_match(condition, {"iam:passedtoservice": "states.amazonaws.com"})
    assert not conditions_match(condition, {"iam:passedtoservice": "lambda.amazonaws.com"})


def test_null_checks_presence():
    assert conditions_match({"Null": {"aws:SourceArn": "true"}}, {})
    assert not conditions_match({"Null": {"aws:SourceArn": "true"}}, {"aws:sourcearn": RULE})
    assert conditions_match({"Null": {"aws:SourceArn": "false"}}, {"aws:sourcearn": RULE})


def test_values_are_or_keys_and_operators_and_negated_values_nor():
    context = {"aws:sourceaccount": "1", "aws:sourcearn": RULE}
    assert conditions_match({"StringEquals": {"aws:SourceAccount": ["2", "1"]}}, context)
    assert not conditions_match(
        {
            "StringEquals": {"aws:SourceAccount": "1"},
            "ArnLike": {"aws:SourceArn": "arn:aws:events:*:*:rule/x"},
        },
        context,
    )
    assert not conditions_match({"StringNotEquals": {"aws:SourceAccount": ["2", "1"]}}, context)
    assert conditions_match({"StringNotEquals": {"aws:SourceAccount": ["2", "3"]}}, context)


def test_arn_like_matches_component_by_component():
    assert conditions_match(
        {"ArnLike": {"aws:SourceArn": "arn:aws:events:*:*:rule/*"}}, {"aws:sourcearn": RULE}
    )
    # A wildcard does not span the colons between the ARN's fields.
    assert not conditions_match(
        {"ArnLike": {"aws:SourceArn": "arn:aws:*"}}, {"aws:sourcearn": RULE}
    )
    assert conditions_match({"ArnEquals": {"aws:SourceArn": RULE}}, {"aws:sourcearn": RULE})


def test_numeric_bool_date_and_ip_operators():
    assert conditions_match({"NumericLessThanEquals": {"s3:max-keys": "10"}}, {"s3:max-keys": "7"})
    assert not conditions_match({"NumericGreaterThan": {"s3:max-keys": "10"}}, {"s3:max-keys": "7"})
    assert not conditions_match({"NumericEquals": {"s3:max-keys": "10"}}, {"s3:max-keys": "ten"})
    assert conditions_match(
        {"Bool": {"aws:SecureTransport": "false"}}, {"aws:securetransport": False}
    )
    assert conditions_match(
        {"DateLessThan": {"aws:CurrentTime": "2030-01-01T00:00:00Z"}},
        {"aws:currenttime": "2026-11-25T21:00:00Z"},
    )
    assert conditions_match(
        {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}, {"aws:sourceip": "10.1.2.3"}
    )
    assert conditions_match(
        {"NotIpAddress": {"aws:SourceIp": "10.0.0.0/8"}}, {"aws:sourceip": "192.168.0.1"}
    )


def test_set_operators_on_multivalued_keys():
    tags = {"aws:tagkeys": ["team", "env"]}
    assert conditions_match(
        {"ForAllValues:StringEquals": {"aws:TagKeys": ["team", "env", "cost"]}}, tags
    )
    assert not conditions_match({"ForAllValues:StringEquals": {"aws:TagKeys": ["team"]}}, tags)
    assert conditions_match({"ForAnyValue:StringEquals": {"aws:TagKeys": ["env"]}}, tags)
    assert not conditions_match({"ForAnyValue:StringEquals": {"aws:TagKeys": ["cost"]}}, tags)
    # ForAllValues is true on an absent key, ForAnyValue false (AWS documents both).
    assert conditions_match({"ForAllValues:StringEquals": {"aws:TagKeys": ["team"]}}, {})
    assert not conditions_match({"ForAnyValue:StringEquals": {"aws:TagKeys": ["team"]}}, {})


def test_unknown_operator_never_grants():
    assert not conditions_match({"StringSortaEquals": {"aws:username": "a"}}, {"aws:username": "a"})


def test_policy_variables_in_conditions_and_resources():
    # The dag-aggregate module's FollowOwnStatements statement.
    statement = allow(
        "redshift-data:DescribeStatement",
        "*",
        Condition={"StringEquals": {"redshift-data:statement-owner-iam-userid": "${aws:userid}"}},
    )
    mine = {"aws:userid": "AROA1:s1", "redshift-data:statement-owner-iam-userid": "AROA1:s1"}
    theirs = {"aws:userid": "AROA1:s1", "redshift-data:statement-owner-iam-userid": "AROA2:s9"}
    assert evaluate(
        [policy(statement)], Request("redshift-data:DescribeStatement", "*", mine)
    ).allowed
    assert not evaluate(
        [policy(statement)], Request("redshift-data:DescribeStatement", "*", theirs)
    ).allowed
    home = allow("s3:GetObject", "arn:aws:s3:::bucket/${aws:username}/*")
    request = Request("s3:GetObject", "arn:aws:s3:::bucket/alice/x", {"aws:username": "alice"})
    assert evaluate([policy(home)], request).allowed
    assert not evaluate(
        [policy(home)], Request("s3:GetObject", "arn:aws:s3:::bucket/alice/x")
    ).allowed


def test_trust_policy_names_the_caller():
    trust = policy(
        {
            "Effect": "Allow",
            "Principal": {"AWS": "arn:aws:iam::111122223333:role/caller"},
            "Action": "sts:AssumeRole",
        }
    )
    target = "arn:aws:iam::111122223333:role/target"
    caller = Principal(aws=frozenset({"arn:aws:iam::111122223333:role/caller"}))
    stranger = Principal(aws=frozenset({"arn:aws:iam::111122223333:role/other"}))
    assert evaluate([trust], Request("sts:AssumeRole", target, principal=caller)).allowed
    assert not evaluate([trust], Request("sts:AssumeRole", target, principal=stranger)).allowed


def test_not_principal_excludes_the_named_principal():
    document = policy(
        {
            "Effect": "Deny",
            "NotPrincipal": {"Service": "events.amazonaws.com"},
            "Action": "*",
            "Resource": "*",
        },
        allow("*", "*", Principal="*"),
    )
    assert evaluate([document], invoke({}, "events.amazonaws.com")).allowed
    assert evaluate([document], invoke({}, "sqs.amazonaws.com")).kind == "explicit-deny"


# -- edge cases of policy variables and multivalued keys -----------------------------------
# "IAM policy elements: Variables and tags" and "Single-valued vs. multivalued context keys"
# (IAM User Guide); each case is AWS's documented rule, quoted in its test.


@pytest.mark.parametrize(
    ("element", "literal", "other"),
    [("${*}", "*", "x"), ("${?}", "?", "x"), ("${$}", "$", "x")],
)
def test_special_character_variables_are_the_characters_not_wildcards(element, literal, other):
    # "Special characters": ${*} is "use where you need an * (asterisk) character", likewise
    # ${?} and ${$}; the character is matched as itself, never as a wildcard.
    bucket = "arn:aws:s3:::bucket/"
    grant = [policy(allow("s3:GetObject", f"{bucket}a{element}b"))]
    assert evaluate(grant, Request("s3:GetObject", f"{bucket}a{literal}b")).allowed
    assert not evaluate(grant, Request("s3:GetObject", f"{bucket}a{other}b")).allowed
    like = {"StringLike": {"s3:prefix": f"home{element}"}}
    assert conditions_match(like, {"s3:prefix": f"home{literal}"})
    assert not conditions_match(like, {"s3:prefix": f"home{other}"})
    arn = {"ArnLike": {"aws:SourceArn": f"arn:aws:events:us-east-1:1:rule/r{element}"}}
    assert conditions_match(arn, {"aws:sourcearn": f"arn:aws:events:us-east-1:1:rule/r{literal}"})
    assert not conditions_match(arn, {"aws:sourcearn": f"arn:aws:events:us-east-1:1:rule/r{other}"})


def test_a_variables_value_is_matched_literally():
    # A value holding * or ? is the request's text, not a pattern of the policy.
    grant = [policy(allow("s3:GetObject", "arn:aws:s3:::bucket/${aws:username}/*"))]
    context = {"aws:username": "a*"}
    assert evaluate(grant, Request("s3:GetObject", "arn:aws:s3:::bucket/a*/x", context)).allowed
    assert not evaluate(grant, Request("s3:GetObject", "arn:aws:s3:::bucket/ab/x", context)).allowed


def test_resource_variables_are_substituted_only_after_the_fifth_colon():
    # "You can use a policy variable in the Resource element, but only in the resource
    # portion of the ARN. This portion of the ARN appears after the fifth colon (:). You
    # can't use a variable to replace parts of the ARN before the fifth colon, such as the
    # service or account."
    context = {"aws:principalaccount": "111122223333", "aws:username": "jobs"}
    in_account = allow("dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:${aws:PrincipalAccount}:*")
    assert not evaluate([policy(in_account)], Request("dynamodb:GetItem", TABLE, context)).allowed
    in_resource = allow("dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:*:table/${aws:username}")
    assert evaluate([policy(in_resource)], Request("dynamodb:GetItem", TABLE, context)).allowed
    # Not in the Action element either: variables go in Resource and Condition only.
    by_action = allow("dynamodb:${aws:username}", "*")
    assert not evaluate(
        [policy(by_action)], Request("dynamodb:GetItem", "*", {"aws:username": "GetItem"})
    ).allowed


@pytest.mark.parametrize(
    ("operator", "key", "value"),
    [
        ("NumericEquals", "s3:max-keys", "10"),
        ("DateEquals", "aws:CurrentTime", "2026-11-25T21:00:00Z"),
        ("Bool", "aws:SecureTransport", "true"),
        ("IpAddress", "aws:SourceIp", "10.1.2.3"),
    ],
)
def test_variables_are_not_substituted_in_non_string_conditions(operator, key, value):
    # "You can use a policy variable for Condition values in any condition that involves
    # the string operators or the ARN operators ... You can't use a policy variable with
    # other operators, such as Numeric, Date, Boolean, Binary, IP Address, or Null
    # operators." The text stays as written: not a number, date, boolean or address, so
    # it matches no value, even the one the variable would have named.
    context = {key.lower(): value, "aws:username": value}
    assert not conditions_match({operator: {key: "${aws:username}"}}, context)
    assert conditions_match({operator: {key: value}}, context)


@pytest.mark.parametrize(
    ("operator", "key", "value", "other"),
    [
        ("NumericNotEquals", "s3:max-keys", "10", "0"),
        ("DateNotEquals", "aws:CurrentTime", "2026-11-25T21:00:00Z", "1999-01-01T00:00:00Z"),
        ("NotIpAddress", "aws:SourceIp", "10.1.2.3", "192.168.0.0/16"),
    ],
)
def test_a_value_that_cannot_be_compared_meets_no_negated_operator(operator, key, value, other):
    # The unsubstituted text is no number, date or address: nothing was compared, so the
    # negated operator is not met either (an Allow never grants through it).
    context = {key.lower(): value, "aws:username": value}
    assert not conditions_match({operator: {key: "${aws:username}"}}, context)
    assert not conditions_match({operator: {key: value}}, context)
    assert conditions_match({operator: {key: other}}, context)


@pytest.mark.parametrize(
    "operator",
    ["StringEquals", "StringLike", "StringNotEquals", "StringNotLike", "StringEqualsIfExists"],
)
def test_single_valued_operator_on_a_multivalued_key_does_not_match(operator):
    # "Multivalued condition context keys can have multiple values in the request context
    # ... Multivalued context keys require a condition set operator." Without
    # ForAnyValue/ForAllValues the condition is not met, whatever the operator.
    context = {"aws:tagkeys": ["team", "env"]}
    assert not conditions_match({operator: {"aws:TagKeys": "team"}}, context)
    assert not conditions_match({operator: {"aws:TagKeys": "cost"}}, context)
    # With a set operator the same key is compared value by value ("team" is one of them,
    # "env" is not "team").
    assert conditions_match({f"ForAnyValue:{operator}": {"aws:TagKeys": "team"}}, context)
    # A single-valued key with the same operator is compared as before.
    positive = "Not" not in operator
    assert (
        conditions_match({operator: {"aws:RequestTag/team": "a"}}, {"aws:requesttag/team": "a"})
        is positive
    )


def test_null_checks_a_multivalued_key_by_presence():
    # Null tests presence alone (a multivalued key is present).
    assert conditions_match({"Null": {"aws:TagKeys": "false"}}, {"aws:tagkeys": ["team"]})
