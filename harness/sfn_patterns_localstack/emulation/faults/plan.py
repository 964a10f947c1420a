"""A fault plan: its JSON form parsed and checked, with errors that name the field.

A plan is data, not code, so a failing run's plan can be stored next to its log and
replayed (``seed`` included). Parsing rejects anything it does not understand: a
misspelt ``probabilty`` silently ignored would make a test pass for the wrong reason.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Where a kind acts: the gateway before the service runs ("request"), on the service's
# answer ("response"), on EventBridge's delivery to a rule's targets ("delivery"), in
# the Lambda executor ("executor"), or as an execution enters a state ("transition").
# A call is matched only against its stage's faults.
KINDS: dict[str, str] = {
    "throttle": "request",
    "internal_error": "request",
    "unavailable": "request",
    "error": "request",
    "latency": "request",
    "transaction_conflict": "request",
    "stale_list": "response",
    "duplicate_delivery": "response",
    "answer_lost": "response",
    "event_duplicate": "delivery",
    "event_delay": "delivery",
    "event_drop": "delivery",
    "kill": "executor",
    "timeout": "executor",
    "transition_throttle": "transition",
}
# Kinds that only make sense for one service and operation.
ONLY_FOR: dict[str, tuple[str, str]] = {
    "stale_list": ("stepfunctions", "ListExecutions"),
    "duplicate_delivery": ("sqs", "ReceiveMessage"),
    "event_duplicate": ("events", "PutEvents"),
    "event_delay": ("events", "PutEvents"),
    "event_drop": ("events", "PutEvents"),
    "kill": ("lambda", "Invoke"),
    "timeout": ("lambda", "Invoke"),
    "transition_throttle": ("stepfunctions", "StateTransition"),
}
# DynamoDB calls a transaction conflict can refuse: writes of an item a transaction
# holds, and transactions (a plain read is answered from the last committed item).
CONFLICTABLE = frozenset(
    {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "TransactGetItems"}
)
NEEDS_SECONDS = {"latency", "stale_list", "event_delay", "transition_throttle"}
FIELDS = {
    "service",
    "operation",
    "kind",
    "caller_role",
    "resource",
    "probability",
    "first",
    "after_seconds",
    "for_seconds",
    "seconds",
    "code",
    "status",
    "message",
}


class PlanError(ValueError):
    """A plan that cannot be used; the message names the field and what is wrong."""


@dataclass(frozen=True)
class Fault:
    """One fault: which calls it matches, when it applies, and what it does."""

    index: int
    service: str
    operation: str
    kind: str
    caller_role: str | None = None
    resource: str | None = None
    probability: float | None = None
    first: int | None = None
    after_seconds: float = 0.0
    for_seconds: float | None = None
    seconds: float | None = None
    code: str | None = None
    status: int | None = None
    message: str | None = None

    @property
    def stage(self) -> str:
        """Where this fault acts (see KINDS)."""
        return KINDS[self.kind]

    def matches(
        self, service: str, operation: str, caller_role: str | None, resource: str | None
    ) -> bool:
        """Whether a call is one this fault is about (before its when-conditions)."""
        if self.service != service:
            return False
        if self.operation not in ("*", operation):
            return False
        if self.kind == "transaction_conflict" and operation not in CONFLICTABLE:
            return False
        if self.caller_role is not None and (
            caller_role is None or not fnmatch.fnmatchcase(caller_role, self.caller_role)
        ):
            return False
        return self.resource is None or (
            resource is not None and fnmatch.fnmatchcase(resource, self.resource)
        )

    def in_window(self, elapsed: float) -> bool:
        """Whether ``elapsed`` seconds after the plan's load fall in this fault's window."""
        if elapsed < self.after_seconds:
            return False
        return self.for_seconds is None or elapsed < self.after_seconds + self.for_seconds


@dataclass(frozen=True)
class Plan:
    """A seed and the faults, in the order they are tried."""

    seed: int | str
    faults: tuple[Fault, ...] = field(default_factory=tuple)
    document: dict[str, Any] = field(default_factory=dict, compare=False)


def _number(where: str, value: Any, minimum: float, maximum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PlanError(f"{where}: must be a number, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
        raise PlanError(f"{where}: must be {bound}, got {value!r}")
    return float(value)


def _string(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise PlanError(f"{where}: must be a non-empty string, got {value!r}")
    return value


def _optional_string(where: str, value: Any) -> str | None:
    return None if value is None else _string(where, value)


def _target(where: str, raw: dict[str, Any]) -> dict[str, Any]:
    """service, operation, kind, caller_role, resource: which calls, and what happens."""
    for required in ("service", "operation", "kind"):
        if required not in raw:
            raise PlanError(f"{where}.{required}: required")
    service = _string(f"{where}.service", raw["service"])
    operation = _string(f"{where}.operation", raw["operation"])
    kind = _string(f"{where}.kind", raw["kind"])
    if kind not in KINDS:
        raise PlanError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    if kind in ONLY_FOR and (service, operation) != ONLY_FOR[kind]:
        wanted = ONLY_FOR[kind]
        raise PlanError(
            f"{where}.kind: {kind!r} applies only to service {wanted[0]!r} "
            f"operation {wanted[1]!r}, not {service!r} {operation!r}"
        )
    if kind == "transaction_conflict" and (
        service != "dynamodb" or operation not in ("*", *sorted(CONFLICTABLE))
    ):
        raise PlanError(
            f"{where}.kind: 'transaction_conflict' applies only to service 'dynamodb' "
            f"operations {', '.join(sorted(CONFLICTABLE))} or '*', not {service!r} "
            f"{operation!r}"
        )
    if not re.fullmatch(r"[a-z0-9-]+", service):
        raise PlanError(f"{where}.service: {service!r} is not a service name such as 'dynamodb'")
    if operation != "*" and not re.fullmatch(r"[A-Z][A-Za-z0-9]+", operation):
        raise PlanError(
            f"{where}.operation: {operation!r} is not an operation such as 'PutItem' or '*'"
        )
    caller_role = _optional_string(f"{where}.caller_role", raw.get("caller_role"))
    if caller_role is not None and KINDS[kind] not in ("request", "response"):
        raise PlanError(
            f"{where}.caller_role: kind {kind!r} acts on a delivery or an invocation, "
            "which has no calling role; match it by 'resource'"
        )
    return {
        "service": service,
        "operation": operation,
        "kind": kind,
        "caller_role": caller_role,
        "resource": _optional_string(f"{where}.resource", raw.get("resource")),
    }


def _when(where: str, raw: dict[str, Any]) -> dict[str, Any]:
    """probability, first, after_seconds, for_seconds: which matching calls it hits."""
    probability = raw.get("probability")
    if probability is not None:
        probability = _number(f"{where}.probability", probability, 0.0, 1.0)
    first = raw.get("first")
    if first is not None and (isinstance(first, bool) or not isinstance(first, int) or first < 1):
        raise PlanError(f"{where}.first: must be an integer >= 1, got {first!r}")
    for_seconds = raw.get("for_seconds")
    if for_seconds is not None:
        for_seconds = _number(f"{where}.for_seconds", for_seconds, 0.0)
    return {
        "probability": probability,
        "first": first,
        "after_seconds": _number(f"{where}.after_seconds", raw.get("after_seconds", 0), 0.0),
        "for_seconds": for_seconds,
    }


def _effect(where: str, kind: str, raw: dict[str, Any]) -> dict[str, Any]:
    """seconds, code, status, message: the kind's parameters."""
    seconds = raw.get("seconds")
    if kind in NEEDS_SECONDS and seconds is None:
        raise PlanError(f"{where}.seconds: required for kind {kind!r}")
    if seconds is not None:
        seconds = _number(f"{where}.seconds", seconds, 0.0, 900.0)
    code, status = raw.get("code"), raw.get("status")
    if kind == "error" and (code is None or status is None):
        raise PlanError(f"{where}: kind 'error' needs 'code' and 'status'")
    if kind != "error" and (code is not None or status is not None):
        raise PlanError(f"{where}.code: only kind 'error' takes 'code' and 'status'")
    if status is not None and (
        isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599
    ):
        raise PlanError(f"{where}.status: must be an HTTP error status (400-599), got {status!r}")
    return {
        "seconds": seconds,
        "code": _optional_string(f"{where}.code", code),
        "status": status,
        "message": _optional_string(f"{where}.message", raw.get("message")),
    }


def _fault(index: int, raw: Any) -> Fault:
    where = f"faults[{index}]"
    if not isinstance(raw, dict):
        raise PlanError(f"{where}: must be an object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise PlanError(f"{where}.{unknown[0]}: unknown field (known: {', '.join(sorted(FIELDS))})")
    target = _target(where, raw)
    return Fault(
        index=index,
        **target,
        **_when(where, raw),
        **_effect(where, target["kind"], raw),
    )


def parse(document: Any) -> Plan:
    """Check a plan document (already decoded JSON) and build the Plan."""
    if not isinstance(document, dict):
        raise PlanError(f"plan: must be a JSON object, got {type(document).__name__}")
    unknown = sorted(set(document) - {"seed", "faults"})
    if unknown:
        raise PlanError(f"{unknown[0]}: unknown field (a plan has 'seed' and 'faults')")
    if "seed" not in document:
        raise PlanError("seed: required (an integer or string; it makes the plan reproducible)")
    seed = document["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise PlanError(f"seed: must be an integer or a string, got {seed!r}")
    faults = document.get("faults")
    if not isinstance(faults, list):
        raise PlanError(f"faults: must be a list, got {type(faults).__name__}")
    return Plan(seed, tuple(_fault(i, raw) for i, raw in enumerate(faults)), document)


def load(path: str | Path) -> Plan:
    """Read and check a plan file."""
    text = Path(path).read_text()
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise PlanError(f"{path}: not JSON ({error})") from error
    try:
        return parse(document)
    except PlanError as error:
        raise PlanError(f"{path}: {error}") from error
