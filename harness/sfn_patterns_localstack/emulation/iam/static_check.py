"""Static check: each state machine's role allows what its definition's Tasks need.

Why: LocalStack never evaluates a state machine role, and never makes some of the
calls an integration makes on AWS (``.sync``'s managed rule, the Data API's
credential lookup). ``integrations.required_permissions`` lists what AWS documents
for each Task; this module reads the definitions and role policies of a Terraform
plan (``terraform show -json``) and reports each requirement the role does not allow.

``allowed`` is a deliberately small evaluator of identity policies: ``Allow`` and
``Deny`` statements with ``Action``/``NotAction`` and ``Resource``/``NotResource``,
``*`` and ``?`` wildcards (actions case-insensitive), an explicit ``Deny`` winning.
Conditions are assumed to hold: the modules' conditions narrow a grant to the role's
own calls (``aws:userid``, ``aws:SourceAccount``), which the calls checked here are.
The harness's full evaluator (``policy.evaluate``) can replace it: ``missing_permissions``
calls it in one place, ``_decide``.

A requirement's resource may itself be a pattern (``integrations`` module docstring).
With scope ``"all"`` it is allowed only when a statement's pattern covers every
resource it can match, and a ``Deny`` counts when it overlaps any of them
(``allowed``). With scope ``"any"`` one Allow within the pattern suffices, unless a
Deny covers all of it (``allowed_somewhere``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sfn_patterns_localstack.emulation.iam.integrations import (
    Context,
    Requirement,
    required_permissions,
)


@lru_cache(maxsize=4096)
def _regex(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(body, re.IGNORECASE if ignore_case else 0)


def _covers(pattern: str, value: str, ignore_case: bool = False) -> bool:
    """Whether ``pattern`` matches ``value``.

    A ``*`` in ``value`` is matched as a character, so only a wildcard of ``pattern``
    covers it (``value`` being a pattern itself).
    """
    return _regex(pattern, ignore_case).fullmatch(value) is not None


def _overlaps(pattern: str, value: str) -> bool:
    """Some resource matches both patterns (approximation: either covers the other)."""
    return _covers(pattern, value) or _covers(value, pattern)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _statements(document: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    statements = document.get("Statement", [])
    yield from [statements] if isinstance(statements, Mapping) else statements


def _matches_action(statement: Mapping[str, Any], action: str) -> bool:
    if "NotAction" in statement:
        return not any(_covers(p, action, True) for p in _as_list(statement["NotAction"]))
    return any(_covers(p, action, True) for p in _as_list(statement.get("Action")))


def _allow_covers(statement: Mapping[str, Any], resource: str) -> bool:
    if "NotResource" in statement:
        return not any(_overlaps(p, resource) for p in _as_list(statement["NotResource"]))
    return any(_covers(p, resource) for p in _as_list(statement.get("Resource")))


def _deny_touches(statement: Mapping[str, Any], resource: str) -> bool:
    if "NotResource" in statement:
        return not any(_covers(p, resource) for p in _as_list(statement["NotResource"]))
    return any(_overlaps(p, resource) for p in _as_list(statement.get("Resource")))


def allowed(policy_documents: list[dict], action: str, resource: str) -> bool:
    """Whether identity policies allow ``action`` on ``resource`` (an ARN or a pattern).

    An explicit Deny that matches wins; otherwise one matching Allow is needed.
    """
    statements = [s for d in policy_documents for s in _statements(d)]
    denied = any(
        s.get("Effect") == "Deny" and _matches_action(s, action) and _deny_touches(s, resource)
        for s in statements
    )
    return not denied and any(
        s.get("Effect") == "Allow" and _matches_action(s, action) and _allow_covers(s, resource)
        for s in statements
    )


def allowed_somewhere(policy_documents: list[dict], action: str, pattern: str) -> bool:
    """Whether ``action`` is allowed on at least one resource matching ``pattern``.

    For a resource the definition cannot name (computed at run time, or named without
    the ID its ARN holds): an Allow overlapping the pattern is needed, and a Deny
    covering the whole pattern refuses it.
    """
    statements = [s for d in policy_documents for s in _statements(d)]
    denied = any(
        s.get("Effect") == "Deny"
        and _matches_action(s, action)
        and "NotResource" not in s
        and any(_covers(p, pattern) for p in _as_list(s.get("Resource")))
        for s in statements
    )
    return not denied and any(
        s.get("Effect") == "Allow"
        and _matches_action(s, action)
        and ("NotResource" in s or any(_overlaps(p, pattern) for p in _as_list(s.get("Resource"))))
        for s in statements
    )


# --- the plan ------------------------------------------------------------------------


@dataclass(frozen=True)
class Machine:
    """A state machine of a plan, with its role's policies."""

    address: str
    definition: dict[str, Any]
    policies: list[dict[str, Any]]
    context: Context | None


@dataclass(frozen=True)
class Finding:
    """A requirement the role does not allow (or could not be checked)."""

    machine: str
    requirement: Requirement
    problem: str = "not allowed by the role's policies"

    def __str__(self) -> str:
        r = self.requirement
        note = f" ({r.note}; {r.scope} of it)" if r.note else ""
        return (
            f"{self.machine}: {r.state}: {r.action} on {r.resource}{note}: {self.problem} [{r.doc}]"
        )


@dataclass
class Report:
    """What ``check_plan`` found: missing permissions, and what it could not check."""

    machines: list[str] = field(default_factory=list)
    requirements: int = 0
    missing: list[Finding] = field(default_factory=list)
    other_roles: list[Finding] = field(default_factory=list)


def _decide(policies: list[dict], requirement: Requirement) -> bool:
    """The one call of the evaluator: swap in the harness's full evaluator here."""
    if requirement.scope == "any":
        return allowed_somewhere(policies, requirement.action, requirement.resource)
    return allowed(policies, requirement.action, requirement.resource)


def missing_permissions(machine: Machine) -> tuple[list[Finding], list[Finding]]:
    """(requirements the machine's role lacks, requirements of roles assumed via Credentials)."""
    missing, other = [], []
    for requirement in required_permissions(machine.definition, machine.context):
        if requirement.role_arn is not None:
            other.append(Finding(machine.address, requirement, f"needed by {requirement.role_arn}"))
        elif not _decide(machine.policies, requirement):
            missing.append(Finding(machine.address, requirement))
    return missing, other


def _modules(module: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield module
    for child in module.get("child_modules", []):
        yield from _modules(child)


def _contexts(plan: Mapping[str, Any]) -> dict[str, Context]:
    """Partition, region and account read by each module's data sources."""
    out = {}
    root = plan.get("prior_state", {}).get("values", {}).get("root_module", {})
    for module in _modules(root):
        values = {
            r["type"]: r["values"] for r in module.get("resources", []) if r["mode"] == "data"
        }
        try:
            out[module.get("address", "")] = Context(
                partition=values["aws_partition"]["partition"],
                region=values["aws_region"]["region"],
                account=values["aws_caller_identity"]["account_id"],
            )
        except KeyError:
            continue
    return out


def machines_in_plan(plan: Mapping[str, Any]) -> list[Machine]:
    """Every aws_sfn_state_machine of a plan with the inline policies of its module's role.

    Raises ValueError when a definition or policy is not known at plan time, or when a
    module holds more than one role: the check must not pass by seeing nothing.
    """
    contexts = _contexts(plan)
    machines = []
    for module in _modules(plan["planned_values"]["root_module"]):
        resources = module.get("resources", [])
        for resource in resources:
            if resource["type"] != "aws_sfn_state_machine" or resource["mode"] != "managed":
                continue
            address = resource["address"]
            definition = resource["values"].get("definition")
            roles = [r for r in resources if r["type"] == "aws_iam_role"]
            policies = [
                r["values"].get("policy") for r in resources if r["type"] == "aws_iam_role_policy"
            ]
            if definition is None or None in policies or len(roles) != 1 or not policies:
                raise ValueError(
                    f"{address}: definition, role or inline policy unknown at plan time "
                    f"(roles {len(roles)}, policies {len(policies)})"
                )
            machines.append(
                Machine(
                    address=address,
                    definition=json.loads(definition),
                    policies=[json.loads(p) for p in policies],
                    context=contexts.get(module.get("address", "")),
                )
            )
    return machines


def check_plan(plans: Iterable[Mapping[str, Any]]) -> Report:
    """Run the check over every state machine of ``plans``."""
    report = Report()
    for plan in plans:
        for machine in machines_in_plan(plan):
            report.machines.append(machine.address)
            missing, other = missing_permissions(machine)
            report.requirements += len(required_permissions(machine.definition, machine.context))
            report.missing.extend(missing)
            report.other_roles.extend(other)
    return report


# --- every policy a plan renders -----------------------------------------------------


def _module_context(contexts: Mapping[str, Context], address: str) -> Context | None:
    """The context of ``address``'s module, or of the nearest module above it with one."""
    while True:
        if address in contexts:
            return contexts[address]
        if ".module." not in address:
            return contexts.get("")
        address = address.rsplit(".module.", 1)[0]


def rendered_policies(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Every IAM role of a plan with its trust policy and inline policies, as JSON data.

    Why: tests/harness/iam/test_differential.py decides requests against every policy
    the modules render, and needs no Terraform to do it; this is its input, taken from
    the iam_static plan. Each role carries its module's partition, region and account.
    ``unknown`` lists the inline policies not known at plan time (left out).
    """
    contexts = _contexts(plan)
    roles: dict[tuple[str, str], dict[str, Any]] = {}
    policies: list[tuple[str, Mapping[str, Any]]] = []
    unknown: list[str] = []
    for module in _modules(plan["planned_values"]["root_module"]):
        address = module.get("address", "")
        for resource in module.get("resources", []):
            values = resource["values"]
            if resource["type"] == "aws_iam_role" and resource["mode"] == "managed":
                context = _module_context(contexts, address)
                roles[(address, values.get("name") or "")] = {
                    "role": resource["address"],
                    "name": values.get("name"),
                    "context": vars(context) if context else None,
                    "trust": json.loads(values["assume_role_policy"]),
                    "identity": [],
                }
            elif resource["type"] == "aws_iam_role_policy":
                if values.get("policy") is None:
                    unknown.append(resource["address"])
                else:
                    policies.append((address, resource))
    for address, resource in policies:
        name = resource["values"].get("role")
        candidates = [r for (m, n), r in roles.items() if (n == name if name else m == address)]
        if len(candidates) != 1:
            raise ValueError(f"{resource['address']}: its role is not one role of the plan")
        candidates[0]["identity"].append(
            {"policy": resource["address"], "document": json.loads(resource["values"]["policy"])}
        )
    ordered = sorted(roles.values(), key=lambda role: role["role"])
    return {"roles": ordered, "unknown": sorted(unknown)}
