"""Helpers of the denial and consumer-policy tests: roles, sessions, revocations.

These tests take a grant away from a deployed module (an inline policy's action, a
function policy's statement), see the pattern fail the way AWS reports it, and put the
grant back in a ``finally`` so the rest of the file runs on the module as deployed. Or
they act as a consumer: a role created here with nothing but a policy output, assumed
with ``sts:AssumeRole``, whose session's credentials sign the calls.

Every denial such a test provokes is declared where it is provoked, exactly:
``with expect_denials(denial(role_arn, "states:SendTaskSuccess", "*")):``. The
declaration fails the test when the denial was not recorded, and lets the session's
account (tests/iam_check.py) tell it from a denial nothing asked for, which fails a
whole ``SFNP_IAM=enforce`` run. The helpers that revoke a grant or make a role declare
nothing themselves: a role made with one policy is refused only what the test says.

Both only mean something on a LocalStack that enforces IAM (``SFNP_IAM=enforce``, the
harness's emulation). ``require_enforcement`` asks the LocalStack itself, with a role
that has no policy at all, and fails the test (never skips it) when that role is let
through: a denial test that passes on a LocalStack trusting every caller proves nothing.

Policy changes take effect at once here (the emulation drops its cached role policies
on every IAM write, and reads function policies from Lambda's store on every call);
AWS documents "eventually consistent", usually within seconds. ``wait_denied`` and
``wait_allowed`` retry for a few seconds so the tests hold on either.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sfn_patterns_localstack.clients import session_clients
from sfn_patterns_localstack.roles import account_root_trust
from tests import portable

ACCOUNT = "000000000000"
REGION = "us-east-1"
DENIED_CODES = ("AccessDenied", "AccessDeniedException")
# AWS: IAM changes are eventually consistent, usually visible within seconds.
PROPAGATION_SECONDS = 10.0
USAGE_ENV = "SFNP_IAM_USAGE_FILE"  # tests/iam_check.py points each LocalStack at one

_enforcing: dict[str, bool] = {}


def denial(who: str, action: str, resource: str) -> dict[str, str]:
    """One denial a test means to provoke: ``who`` refused ``action`` on ``resource``.

    ``who`` is a role (its ARN or name: any session of it, in any account) or a service
    principal (``events.amazonaws.com``); ``resource`` may use IAM's ``*`` and ``?``
    wildcards (``*`` alone for the actions that have no resource, such as
    ``states:SendTaskSuccess``). Pass it to ``expect_denials``.
    """
    if who.endswith(".amazonaws.com"):
        principal = who
    else:
        principal = f"arn:aws:sts::*:assumed-role/{role_name(who)}/*"
    return {"principal": principal, "action": action.lower(), "resource": resource}


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(
        "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    )


def matches(expected: dict[str, str], row: dict[str, Any]) -> bool:
    """True when the recorded denial ``row`` (build/iam-usage.json) is the ``expected`` one."""
    return (
        row["action"].lower() == expected["action"]
        and _glob(expected["principal"]).fullmatch(row["principal"]) is not None
        and _glob(expected["resource"]).fullmatch(str(row["resource"])) is not None
    )


def _usage_files() -> list[Path] | None:
    """The usage files of the LocalStacks this process started (None: none records here).

    Each LocalStack writes ``<SFNP_IAM_USAGE_FILE's stem>.<its pid>.json`` (the IAM
    emulation's handler), so a test that starts a LocalStack of its own keeps its counts
    apart. An external LocalStack (``LOCALSTACK_ENDPOINT``) writes no file here, and
    ``SFNP_IAM=off`` records nothing.
    """
    from sfn_patterns_localstack.server import ENVIRONMENT

    usage_file = os.environ.get(USAGE_ENV)
    if not usage_file or os.environ.get("LOCALSTACK_ENDPOINT") or ENVIRONMENT["SFNP_IAM"] == "off":
        return None
    path = Path(usage_file)
    return sorted(path.parent.glob(f"{path.stem}.*{path.suffix}"))


def _denied_rows(files: list[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in files:
        try:
            rows += json.loads(path.read_text()).get("denied", [])
        except (OSError, ValueError):  # written atomically; absent until the first flush
            continue
    return rows


def allowed_calls(role_arn: str, statement_sid: str, action: str) -> int | None:
    """Calls of ``role_arn`` that its statement ``statement_sid`` allowed ``action`` so far.

    Read from this process's LocalStacks' usage files (flushed every two seconds), summed
    over resources; None where nothing records (``_usage_files``).
    """
    files = _usage_files()
    if files is None:
        return None
    calls = 0
    for path in files:
        try:
            rows = json.loads(path.read_text()).get("allowed", [])
        except (OSError, ValueError):  # written atomically; absent until the first flush
            continue
        calls += sum(
            int(row["calls"])
            for row in rows
            if row["role"] == role_name(role_arn)
            and row["statement"].endswith(f"#{statement_sid}")
            and row["action"].lower() == action.lower()
        )
    return calls


def _calls(expected: dict[str, str], rows: list[dict[str, Any]]) -> int:
    return sum(int(row["calls"]) for row in rows if matches(expected, row))


@contextmanager
def expect_denials(*expected: dict[str, str], timeout: float = 30.0) -> Iterator[None]:
    """The body provokes each ``expected`` denial (``denial(...)``) at least once.

    Declares them to the session's IAM account (tests/iam_check.py), which counts them
    apart from the denials nothing asked for (those fail a full run under
    ``SFNP_IAM=enforce``), and, when the body returns, fails the test unless every one
    of them was recorded meanwhile by this process's LocalStack(s): a declaration is a
    claim that the call was refused, checked on the emulation's record, and never a
    licence for a denial that did not happen. The record is flushed every few seconds,
    so the check waits up to ``timeout`` for it. Not checked where nothing records
    (``_usage_files``); the test's own oracles (the AccessDenied error) still hold there.
    """
    portable.require("iam")
    if not expected:
        raise ValueError("expect_denials needs at least one denial(...)")
    usage_file = os.environ.get(USAGE_ENV)
    if usage_file:
        declared = Path(usage_file).with_name(f"expected-{os.getpid()}.jsonl")
        with declared.open("a") as stream:
            stream.writelines(json.dumps(entry) + "\n" for entry in expected)
    files = _usage_files()
    before = _denied_rows(files) if files is not None else []
    yield
    if files is None:
        return
    deadline = time.monotonic() + timeout
    while True:
        rows = _denied_rows(_usage_files() or [])
        missing = [e for e in expected if _calls(e, rows) <= _calls(e, before)]
        if not missing:
            return
        if time.monotonic() > deadline:
            seen = [r for r in rows if r not in before]
            raise AssertionError(
                f"declared denials that did not happen: {missing}; denials recorded meanwhile: "
                f"{seen}"
            )
        time.sleep(0.5)


def session_credentials(endpoint: str, role_arn: str, session_name: str = "consumer") -> dict:
    """The session credentials of ``role_arn`` as environment variables (for pynamodb)."""
    admin_sts = boto3.client(
        "sts",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    creds = admin_sts.assume_role(RoleArn=role_arn, RoleSessionName=session_name)["Credentials"]
    return {
        "AWS_ACCESS_KEY_ID": creds["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": creds["SecretAccessKey"],
        "AWS_SESSION_TOKEN": creds["SessionToken"],
    }


@contextmanager
def temporary_role(
    aws: Callable[[str], Any],
    tag: str,
    policy: str | dict | None = None,
    trust: dict | None = None,
    *,
    module_output: bool = False,
) -> Iterator[str]:
    """A role with ``policy`` as its only (inline) policy, or none; deleted afterwards.

    ``module_output``: the policy is a module's output that callers attach (a producer's,
    a reader's, an embedder's). Its inline policy is then named ``<role>-inline``, as
    the modules name their own, so the session's IAM account (tests/iam_check.py) holds
    it to the same rule: each of its statements' actions allowed a call in the run, or
    docs/harness.md says why it cannot on LocalStack.
    """
    iam = aws("iam")
    name = f"{tag}-{uuid.uuid4().hex[:8]}"
    arn = iam.create_role(
        RoleName=name, AssumeRolePolicyDocument=json.dumps(trust or account_root_trust())
    )["Role"]["Arn"]
    if policy is not None:
        document = policy if isinstance(policy, str) else json.dumps(policy)
        policy_name = f"{name}-inline" if module_output else "only"
        iam.put_role_policy(RoleName=name, PolicyName=policy_name, PolicyDocument=document)
    try:
        yield arn
    finally:
        for policy_name in iam.list_role_policies(RoleName=name)["PolicyNames"]:
            iam.delete_role_policy(RoleName=name, PolicyName=policy_name)
        iam.delete_role(RoleName=name)


def require_enforcement(aws: Callable[[str], Any], endpoint: str) -> None:
    """Fail (not skip) unless this LocalStack denies a role session that has no policy."""
    portable.require("iam")
    if endpoint not in _enforcing:
        with (
            temporary_role(aws, "enforcement-probe") as role,
            expect_denials(denial(role, "dynamodb:ListTables", "*")),
        ):
            try:
                session_clients(endpoint, role, "probe")("dynamodb").list_tables()
                _enforcing[endpoint] = False
            except ClientError as error:
                _enforcing[endpoint] = error.response["Error"]["Code"] in DENIED_CODES
            # Inside the block: a LocalStack that let the probe through fails here, with
            # this message, before the check that its refusal was recorded.
            _fail_unless_enforcing(endpoint)
    _fail_unless_enforcing(endpoint)


def _fail_unless_enforcing(endpoint: str) -> None:
    if not _enforcing[endpoint]:
        pytest.fail(
            f"the LocalStack at {endpoint} does not enforce IAM: a role with no policy listed "
            "DynamoDB tables. This test needs SFNP_IAM=enforce (the harness's IAM emulation); "
            "on any other LocalStack it would prove nothing."
        )


def role_name(role_arn: str) -> str:
    """The name of a role from its ARN."""
    return role_arn.rsplit("/", 1)[-1]


def _actions(statement: dict) -> list[str]:
    listed = statement.get("Action", [])
    return [listed] if isinstance(listed, str) else list(listed)


def _document(text: Any) -> dict:
    return json.loads(text) if isinstance(text, str) else text


@contextmanager
def revised_policies(
    aws: Callable[[str], Any], role_arn: str, revise: Callable[[dict], dict | None]
) -> Iterator[None]:
    """The role's inline policies with each statement passed through ``revise``; restored after.

    ``revise`` returns the statement to keep (changed or not) or None to drop it; a
    policy left with no statement is deleted. The originals are put back in
    ``finally``, so the file's later tests see the module as deployed.
    """
    iam = aws("iam")
    name = role_name(role_arn)
    originals = {
        policy: _document(iam.get_role_policy(RoleName=name, PolicyName=policy)["PolicyDocument"])
        for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]
    }
    try:
        for policy, document in originals.items():
            statements = [s for s in map(revise, document["Statement"]) if s is not None]
            if statements == document["Statement"]:
                continue
            if statements:
                iam.put_role_policy(
                    RoleName=name,
                    PolicyName=policy,
                    PolicyDocument=json.dumps({**document, "Statement": statements}),
                )
            else:
                iam.delete_role_policy(RoleName=name, PolicyName=policy)
        yield
    finally:
        for policy, document in originals.items():
            iam.put_role_policy(
                RoleName=name, PolicyName=policy, PolicyDocument=json.dumps(document)
            )


@contextmanager
def without_actions(aws: Callable[[str], Any], role_arn: str, *actions: str) -> Iterator[None]:
    """The role's inline policies minus ``actions`` (case-insensitive); restored afterwards."""
    removed = {a.lower() for a in actions}
    found: set[str] = set()

    def revise(statement: dict) -> dict | None:
        listed = _actions(statement)
        found.update(a.lower() for a in listed if a.lower() in removed)
        kept = [a for a in listed if a.lower() not in removed]
        return {**statement, "Action": kept} if kept else None

    with revised_policies(aws, role_arn, revise):
        assert found == removed, f"{role_arn} grants {found}, not all of {removed}"
        yield


@contextmanager
def without_resource(aws: Callable[[str], Any], role_arn: str, resource: str) -> Iterator[None]:
    """The role's inline policies with ``resource`` taken out of every statement; restored after."""
    found = []

    def revise(statement: dict) -> dict | None:
        listed = statement.get("Resource", [])
        listed = [listed] if isinstance(listed, str) else list(listed)
        kept = [r for r in listed if r != resource]
        if len(kept) == len(listed):
            return statement
        found.append(statement.get("Sid"))
        return {**statement, "Resource": kept} if kept else None

    with revised_policies(aws, role_arn, revise):
        assert found, f"{role_arn} grants nothing on {resource}"
        yield


@contextmanager
def without_function_permission(
    aws: Callable[[str], Any], function_name: str, statement_id: str
) -> Iterator[dict]:
    """The function policy minus one statement (an ``aws_lambda_permission``); restored after.

    Yields the removed statement. The restore re-adds it with the same principal,
    source ARN and source account, as Terraform created it.
    """
    lam = aws("lambda")
    policy = json.loads(lam.get_policy(FunctionName=function_name)["Policy"])
    (statement,) = [s for s in policy["Statement"] if s["Sid"] == statement_id]
    lam.remove_permission(FunctionName=function_name, StatementId=statement_id)
    try:
        yield statement
    finally:
        condition = statement.get("Condition", {})
        restore: dict[str, Any] = {
            "FunctionName": function_name,
            "StatementId": statement_id,
            "Action": statement["Action"],
            "Principal": statement["Principal"]["Service"],
        }
        source_arn = condition.get("ArnLike", {}).get("AWS:SourceArn")
        if source_arn:
            restore["SourceArn"] = source_arn
        source_account = condition.get("StringEquals", {}).get("AWS:SourceAccount")
        if source_account:
            restore["SourceAccount"] = source_account
        lam.add_permission(**restore)


def denied(call: Callable[[], Any]) -> ClientError:
    """The AccessDenied error ``call`` raises (fails when it succeeds or fails otherwise)."""
    portable.require("iam")
    try:
        call()
    except ClientError as error:
        code = error.response["Error"]["Code"]
        assert code in DENIED_CODES, f"expected AccessDenied, got {code}: {error}"
        return error
    raise AssertionError("the call was allowed; expected AccessDenied")


def wait_denied(call: Callable[[], Any], timeout: float = PROPAGATION_SECONDS) -> ClientError:
    """``denied(call)``, retried while a revocation may still be propagating."""
    portable.require("iam")
    deadline = time.monotonic() + timeout
    while True:
        try:
            return denied(call)
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def assert_denial_text(
    text: str, role_arn: str, action: str, resource: str | None = None, code: str | None = None
) -> None:
    """``text`` carries AWS's AccessDenied sentence for a session of ``role_arn`` doing ``action``.

    AWS: ``User: arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION is not authorized to
    perform: ACTION on resource: RESOURCE because no identity-based policy allows ...``.
    """
    account = role_arn.split(":")[4]
    principal = f"arn:aws:sts::{account}:assumed-role/{role_name(role_arn)}/"
    assert principal in text, f"principal {principal} not in: {text}"
    assert f"is not authorized to perform: {action}" in text, f"action {action} not in: {text}"
    if resource is not None:
        assert f"on resource: {resource}" in text, f"resource {resource} not in: {text}"
    if code is not None:
        assert code in text, f"error code {code} not in: {text}"
