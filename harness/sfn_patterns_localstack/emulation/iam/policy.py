"""The IAM policy evaluator: one request against a set of policies, decided as AWS decides.

AWS's policy evaluation logic for a principal in its own account, without SCPs or
permission boundaries: an explicit ``Deny`` in any policy wins; otherwise some
``Allow`` must match; otherwise the request is implicitly denied. A statement matches
when its action, resource, principal (resource and trust policies only) and every
condition match. Actions are compared case-insensitively, ARNs case-sensitively, and
``*``/``?`` are wildcards in both. Policy variables (``${aws:username}``) are substituted
where AWS substitutes them: in the resource part of a ``Resource`` ARN (after the fifth
colon) and in String and ARN condition values; their values, and ``${*}``, ``${?}``,
``${$}``, are matched as literal characters.

This module is pure (no LocalStack, no I/O): the enforcement handler calls it per
request and a static check of rendered policies calls it offline, so both decide the
same way. Wildcard patterns compile once (``lru_cache``), so a request costs a few
regex matches.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

PolicyDocument = Mapping[str, Any]
ContextValue = str | bool | int | float | Sequence[str] | None


@dataclass(frozen=True)
class NamedPolicy:
    """A policy document with the name that reports cite (inline name or managed ARN)."""

    name: str
    document: PolicyDocument


@dataclass(frozen=True)
class Principal:
    """Who makes a request, as resource and trust policies name it.

    ``aws``: the identifiers an ``{"AWS": ...}`` principal may use for this caller (a
    session ARN, its role ARN, the account root ARN and the bare account id).
    ``service``: a service principal such as ``events.amazonaws.com``.
    """

    aws: frozenset[str] = frozenset()
    service: str | None = None


@dataclass(frozen=True)
class Request:
    """One authorization question: may ``action`` be done on ``resource`` in ``context``.

    ``context`` maps condition keys (any case) to values; a list is a multivalued key.
    ``principal`` is only consulted by statements with ``Principal``/``NotPrincipal``.
    """

    action: str
    resource: str
    context: Mapping[str, ContextValue] = field(default_factory=dict)
    principal: Principal | None = None


@dataclass(frozen=True)
class StatementRef:
    """Which statement decided: the policy's name, the statement's Sid or index."""

    policy: str
    index: int
    sid: str | None
    effect: str
    action_pattern: str
    resource_pattern: str

    @property
    def label(self) -> str:
        """``policy#Sid``, or ``policy#[index]`` for a statement without a Sid."""
        return f"{self.policy}#{self.sid}" if self.sid else f"{self.policy}#[{self.index}]"


@dataclass(frozen=True)
class Decision:
    """The outcome: allowed or not, whether a statement said so, and which one."""

    allowed: bool
    explicit: bool
    statement: StatementRef | None = None

    @property
    def kind(self) -> str:
        """``allow``, ``explicit-deny`` or ``implicit-deny``."""
        if self.allowed:
            return "allow"
        return "explicit-deny" if self.explicit else "implicit-deny"


def evaluate(policies: Sequence[NamedPolicy], request: Request) -> Decision:
    """Decide ``request`` against ``policies``: explicit deny, else allow, else implicit deny."""
    context = _lower_keys(request.context)
    allow: StatementRef | None = None
    for policy in policies:
        for index, statement in enumerate(_statements(policy.document)):
            matched = _match(statement, request, context)
            if matched is None:
                continue
            action_pattern, resource_pattern = matched
            effect = str(statement.get("Effect", ""))
            ref = StatementRef(
                policy=policy.name,
                index=index,
                sid=statement.get("Sid") or None,
                effect=effect,
                action_pattern=action_pattern,
                resource_pattern=resource_pattern,
            )
            if effect == "Deny":
                return Decision(allowed=False, explicit=True, statement=ref)
            if effect == "Allow" and allow is None:
                allow = ref
    if allow is not None:
        return Decision(allowed=True, explicit=True, statement=allow)
    return Decision(allowed=False, explicit=False)


# -- statements ------------------------------------------------------------------------
def _statements(document: PolicyDocument) -> list[Mapping[str, Any]]:
    statement = document.get("Statement", [])
    if isinstance(statement, Mapping):
        return [statement]
    return list(statement)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


def _match(
    statement: Mapping[str, Any], request: Request, context: Mapping[str, ContextValue]
) -> tuple[str, str] | None:
    """The (action, resource) patterns through which ``statement`` applies, or None."""
    action_pattern = _match_element(
        statement, "Action", "NotAction", request.action, regex=_action_regex, context=context
    )
    if action_pattern is None:
        return None
    resource_pattern = _match_element(
        statement,
        "Resource",
        "NotResource",
        request.resource,
        regex=_resource_regex,
        context=context,
    )
    if resource_pattern is None:
        return None
    if ("Principal" in statement or "NotPrincipal" in statement) and not _principal_matches(
        statement, request.principal
    ):
        return None
    if not conditions_match(statement.get("Condition") or {}, context):
        return None
    return action_pattern, resource_pattern


def _match_element(
    statement: Mapping[str, Any],
    positive: str,
    negative: str,
    value: str,
    *,
    regex: Callable[[str, Mapping[str, ContextValue]], re.Pattern[str]],
    context: Mapping[str, ContextValue],
) -> str | None:
    """The pattern of ``positive`` matching ``value``, ``Not...`` when none of it does.

    A statement with neither element (a trust policy has no Resource) matches any value.
    """
    if positive in statement:
        for pattern in _as_list(statement[positive]):
            if regex(str(pattern), context).fullmatch(value):
                return str(pattern)
        return None
    if negative in statement:
        for pattern in _as_list(statement[negative]):
            if regex(str(pattern), context).fullmatch(value):
                return None
        return f"{negative}:" + ",".join(str(p) for p in _as_list(statement[negative]))
    return "*"


# Where a pattern's policy variables are substituted: nowhere, everywhere (String and ARN
# condition values), or only after the fifth colon (a Resource ARN's resource part).
_NOWHERE, _EVERYWHERE, _IN_RESOURCE_PART = 0, 1, 2
# A pattern's tokens: a policy variable, a wildcard, or literal text.
_TOKEN = re.compile(r"\$\{([^}]*)\}|([*?])|([^*?$]+|\$)")
_NOTHING = re.compile(r"(?!)")


@lru_cache(maxsize=4096)
def _compiled(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags | re.DOTALL)


def _pattern_source(
    pattern: str, context: Mapping[str, ContextValue], variables: int, arn: bool
) -> str | None:
    """The regex of a wildcard pattern, or None when one of its variables has no value.

    ``*`` and ``?`` are wildcards, except that in an ARN pattern (``arn``) they do not
    span the colons of the first five fields. A substituted variable's value and the
    special variables ``${*}``, ``${?}``, ``${$}`` are literal text; a variable where it
    is not substituted is the text as written.
    """
    out: list[str] = []
    colons = 0
    for token in _TOKEN.finditer(pattern):
        name, wildcard, _ = token.groups()
        substitute = variables == _EVERYWHERE or (variables == _IN_RESOURCE_PART and colons >= 5)
        if name is not None and substitute:
            value = _variable(name, context)
            if value is None:
                return None  # matches nothing, as AWS does when a variable has no value
            out.append(re.escape(value))
            colons += value.count(":")
        elif wildcard is not None:
            any_text = not arn or colons >= 5
            out.append(
                (".*" if any_text else "[^:]*") if wildcard == "*" else "." if any_text else "[^:]"
            )
        else:
            literal = token.group(0)
            out.append(re.escape(literal))
            colons += literal.count(":")
    if arn and colons < 5:
        return None
    return "".join(out)


@lru_cache(maxsize=4096)
def _static_regex(pattern: str, flags: int, arn: bool) -> re.Pattern[str]:
    """A pattern without variables to substitute, compiled once."""
    source = _pattern_source(pattern, {}, _NOWHERE, arn)
    return _NOTHING if source is None else _compiled(source, flags)


def _pattern_regex(
    pattern: str,
    context: Mapping[str, ContextValue],
    *,
    variables: int,
    arn: bool = False,
) -> re.Pattern[str]:
    """``pattern`` (case-sensitive) as a regex, its variables read from ``context``."""
    if "${" not in pattern:
        return _static_regex(pattern, 0, arn)
    source = _pattern_source(pattern, context, variables, arn)
    return _NOTHING if source is None else _compiled(source, 0)


def _action_regex(pattern: str, context: Mapping[str, ContextValue]) -> re.Pattern[str]:
    """An Action pattern: case-insensitive, no policy variables."""
    return _static_regex(pattern, re.IGNORECASE, False)


def _resource_regex(pattern: str, context: Mapping[str, ContextValue]) -> re.Pattern[str]:
    """A Resource pattern: variables only in the ARN's resource part."""
    return _pattern_regex(pattern, context, variables=_IN_RESOURCE_PART)


# The special variables: the characters that would otherwise be wildcards or start a variable.
_LITERALS = {"*": "*", "?": "?", "$": "$"}


def _variable(name: str, context: Mapping[str, ContextValue]) -> str | None:
    """The value of ``${name}``: the key's single value, else its default, else None.

    A multivalued key has no value as a variable.
    """
    if name in _LITERALS:
        return _LITERALS[name]
    key, _, default = name.partition(",")
    found = context.get(key.strip().lower())
    if isinstance(found, str):
        return found
    if default:
        return default.strip().strip("'")
    return None


def _substitute(text: str, context: Mapping[str, ContextValue]) -> str | None:
    """``text`` with its variables replaced (the exact String operators), or None.

    None when a variable has no value: the condition value then matches nothing.
    """
    if "${" not in text:
        return text
    out = []
    for token in _TOKEN.finditer(text):
        if token.group(1) is None:
            out.append(token.group(0))
            continue
        value = _variable(token.group(1), context)
        if value is None:
            return None
        out.append(value)
    return "".join(out)


def _principal_matches(statement: Mapping[str, Any], principal: Principal | None) -> bool:
    if principal is None:
        return False
    if "Principal" in statement:
        return _names_principal(statement["Principal"], principal)
    return not _names_principal(statement["NotPrincipal"], principal)


def _names_principal(element: Any, principal: Principal) -> bool:
    if element == "*":
        return True
    if not isinstance(element, Mapping):
        return False
    for kind, values in element.items():
        for value in _as_list(values):
            if kind == "AWS" and (value == "*" or value in principal.aws):
                return True
            if kind == "Service" and principal.service and value == principal.service:
                return True
    return False


# -- conditions ------------------------------------------------------------------------
def _lower_keys(context: Mapping[str, ContextValue]) -> dict[str, ContextValue]:
    return {key.lower(): value for key, value in context.items()}


def conditions_match(condition: Mapping[str, Any], context: Mapping[str, ContextValue]) -> bool:
    """True when every operator block and every key in it matches (AND of ANDs).

    ``context`` keys must be lower-case (``evaluate`` lower-cases them): condition key
    names are case-insensitive in AWS, their values are not (except ``...IgnoreCase``).
    """
    for operator, block in condition.items():
        if not isinstance(block, Mapping):
            return False
        for key, values in block.items():
            if not _key_matches(operator, key.lower(), _as_list(values), context):
                return False
    return True


def _key_matches(
    operator: str, key: str, wanted: list[Any], context: Mapping[str, ContextValue]
) -> bool:
    qualifier, _, name = operator.rpartition(":")
    if_exists = name.endswith("IfExists")
    name = name.removesuffix("IfExists")
    present = key in context and context[key] is not None
    if name == "Null":
        # {"Null": {"k": "true"}}: the key is absent; "false": it is present.
        return any(str(w).lower() == ("false" if present else "true") for w in wanted)
    test = _OPERATORS.get(name)
    if test is None:
        return False  # an operator this evaluator does not know never grants
    negated = name in _NEGATED
    actual = context.get(key)
    values = [str(v) for v in _as_list(actual)] if present else []
    if qualifier == "ForAllValues":
        return all(_one_matches(test, negated, v, wanted, context) for v in values)
    if qualifier == "ForAnyValue":
        return any(_one_matches(test, negated, v, wanted, context) for v in values)
    if not present or isinstance(actual, list | tuple):
        # Absent key: false, except IfExists (true) and negated operators (true). A
        # multivalued key needs ForAnyValue/ForAllValues ("Single-valued vs. multivalued
        # context keys"): without one, no operator matches it.
        return not present and (if_exists or negated)
    return _one_matches(test, negated, values[0], wanted, context)


Test = Callable[[str, str, Mapping[str, ContextValue]], bool | None]


def _one_matches(
    test: Test,
    negated: bool,
    value: str,
    wanted: list[Any],
    context: Mapping[str, ContextValue],
) -> bool:
    """A positive operator: the value matches any wanted; a negated one: it matches none.

    A test answers None when the two cannot be compared (a value that is not a number,
    date, address or boolean, such as an unsubstituted ``${...}``): that decides nothing,
    so a negated operator is not met either.
    """
    hits = [test(value, str(w), context) for w in wanted]
    return all(hit is False for hit in hits) if negated else any(hits)


# String and ARN operators read policy variables in their values; the others compare the
# value as written ("IAM policy elements: Variables and tags", "Where you can use policy
# variables").
def _string_equals(compare: Callable[[str, str], bool]) -> Test:
    def test(value: str, wanted: str, context: Mapping[str, ContextValue]) -> bool:
        text = _substitute(wanted, context)
        return text is not None and compare(value, text)

    return test


def _string_like(value: str, pattern: str, context: Mapping[str, ContextValue]) -> bool:
    return bool(_pattern_regex(pattern, context, variables=_EVERYWHERE).fullmatch(value))


def _arn_like(value: str, pattern: str, context: Mapping[str, ContextValue]) -> bool:
    """ARNs match component by component: a wildcard never spans the first five colons."""
    regex = _pattern_regex(pattern, context, variables=_EVERYWHERE, arn=True)
    return bool(regex.fullmatch(value))


def _literal(compare: Callable[[str, str], bool | None]) -> Test:
    def test(value: str, wanted: str, context: Mapping[str, ContextValue]) -> bool | None:
        return compare(value, wanted)

    return test


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _numeric(compare: Callable[[float, float], bool]) -> Test:
    def test(value: str, wanted: str) -> bool | None:
        a, b = _number(value), _number(wanted)
        return None if a is None or b is None else compare(a, b)

    return _literal(test)


def _date(text: str) -> float | None:
    number = _number(text)
    if number is not None:
        return number
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def _dates(compare: Callable[[float, float], bool]) -> Test:
    def test(value: str, wanted: str) -> bool | None:
        a, b = _date(value), _date(wanted)
        return None if a is None or b is None else compare(a, b)

    return _literal(test)


def _ip(value: str, network: str) -> bool | None:
    try:
        return ipaddress.ip_address(value) in ipaddress.ip_network(network, strict=False)
    except ValueError:
        return None


def _bool(value: str, wanted: str) -> bool | None:
    booleans = ("true", "false")
    if value.lower() not in booleans or wanted.lower() not in booleans:
        return None
    return value.lower() == wanted.lower()


def _equal(value: str, wanted: str) -> bool:
    return value == wanted


def _equal_ignore_case(value: str, wanted: str) -> bool:
    return value.lower() == wanted.lower()


# Negated operators are stored with their positive test; _one_matches inverts them.
_OPERATORS: dict[str, Test] = {
    "StringEquals": _string_equals(_equal),
    "StringNotEquals": _string_equals(_equal),
    "StringEqualsIgnoreCase": _string_equals(_equal_ignore_case),
    "StringNotEqualsIgnoreCase": _string_equals(_equal_ignore_case),
    "StringLike": _string_like,
    "StringNotLike": _string_like,
    "ArnEquals": _arn_like,
    "ArnLike": _arn_like,
    "ArnNotEquals": _arn_like,
    "ArnNotLike": _arn_like,
    "NumericEquals": _numeric(lambda a, b: a == b),
    "NumericNotEquals": _numeric(lambda a, b: a == b),
    "NumericLessThan": _numeric(lambda a, b: a < b),
    "NumericLessThanEquals": _numeric(lambda a, b: a <= b),
    "NumericGreaterThan": _numeric(lambda a, b: a > b),
    "NumericGreaterThanEquals": _numeric(lambda a, b: a >= b),
    "DateEquals": _dates(lambda a, b: a == b),
    "DateNotEquals": _dates(lambda a, b: a == b),
    "DateLessThan": _dates(lambda a, b: a < b),
    "DateLessThanEquals": _dates(lambda a, b: a <= b),
    "DateGreaterThan": _dates(lambda a, b: a > b),
    "DateGreaterThanEquals": _dates(lambda a, b: a >= b),
    "Bool": _literal(_bool),
    "IpAddress": _literal(_ip),
    "NotIpAddress": _literal(_ip),
}
_NEGATED = frozenset(
    {
        "StringNotEquals",
        "StringNotEqualsIgnoreCase",
        "StringNotLike",
        "ArnNotEquals",
        "ArnNotLike",
        "NumericNotEquals",
        "DateNotEquals",
        "NotIpAddress",
    }
)
