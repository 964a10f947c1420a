"""Step a rendered semaphore fragment one state at a time against (moto) DynamoDB.

The FIFO acquire is pure ASL: its races are between the DynamoDB writes of
several executions, and the decisions between them are Choice rules. To test an
interleaving without LocalStack's timing, this runs the *rendered templates*
(the same text Terraform deploys) state by state: the DynamoDB Tasks call the
real expressions on moto, the Choice rules and intrinsics are evaluated here.
Only what the semaphore templates use is supported (dotted paths, the intrinsics
``States.Format/Hash/MathAdd/MathRandom/StringToJson/JsonToString``, the Choice
operators of ``fifo_acquire``); anything else raises, so a template change that
needs more fails loudly instead of being mis-simulated.

A scheduler (``Scenario``) picks which execution takes its next *DynamoDB* step;
the local states after it (Pass, Choice, Wait) run at once, since they touch no
shared state and so commute with every other execution's steps.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from sfn_patterns_cli.templating import render_tftpl

TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "semaphore"
PREFIX = "Semaphore: "
ACQUIRED = "Critical section"
RELEASED = "Done"


def render(template: str, **variables: Any) -> dict[str, Any]:
    """A semaphore fragment rendered as the module renders it."""
    return json.loads(_render(template, tuple(sorted(variables.items()))))


# The retriers the module passes (modules/semaphore/main.tf, from templates/retry/policy.json):
# the steps below never throw a retried error, but the templates need the placeholders.
_POLICY = json.loads((TEMPLATES.parent / "retry" / "policy.json").read_text())
_RETRY = {"IntervalSeconds": 1, "MaxAttempts": 6, "BackoffRate": 2, "JitterStrategy": "FULL"}
RETRIERS = {
    "lambda_retriers": json.dumps({**_RETRY, "ErrorEquals": _POLICY["lambda"]}),
    "lambda_release_retriers": json.dumps({**_RETRY, "ErrorEquals": _POLICY["lambda"]}),
    "dynamodb_retriers": json.dumps({**_RETRY, "ErrorEquals": _POLICY["throttling"]["dynamodb"]}),
    "release_retriers": json.dumps({**_RETRY, "ErrorEquals": _POLICY["throttling"]["dynamodb"]}),
}


@functools.cache
def _render(template: str, variables: tuple[tuple[str, Any], ...]) -> str:
    return render_tftpl(TEMPLATES / template, {"prefix": PREFIX, **RETRIERS, **dict(variables)})


# --- paths and intrinsics ----------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^'\\]|\\.)*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<path>\$\$?[\w.]*)|"
    r"(?P<name>States\.\w+)|(?P<punct>[(),]))"
)


def read_path(path: str, data: Any, context: dict[str, Any]) -> Any:
    """A dotted reference path (``$``, ``$.a.b``, ``$$.Execution.Id``)."""
    root, rest = (context, path[2:]) if path.startswith("$$") else (data, path[1:])
    value = root
    for key in filter(None, rest.split(".")):
        if not isinstance(value, dict) or key not in value:
            raise KeyError(f"States.Runtime: path {path} not found")
        value = value[key]
    return value


def _tokens(text: str) -> list[tuple[str, str]]:
    found, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise ValueError(f"cannot parse intrinsic {text!r} at {position}")
        kind = match.lastgroup or ""
        found.append((kind, match.group(kind)))
        position = match.end()
    return found


def evaluate(expression: str, data: Any, context: dict[str, Any], rng: random.Random) -> Any:
    """A ``.$`` value: a path or an intrinsic function call."""
    tokens = _tokens(expression)
    value, rest = _call(tokens, data, context, rng)
    if rest:
        raise ValueError(f"trailing tokens in {expression!r}")
    return value


def _call(tokens: list[tuple[str, str]], data: Any, context: dict, rng: random.Random) -> Any:
    kind, text = tokens[0]
    if kind == "str":
        return text[1:-1].replace("\\'", "'"), tokens[1:]
    if kind == "num":
        return (float(text) if "." in text else int(text)), tokens[1:]
    if kind == "path":
        return read_path(text, data, context), tokens[1:]
    if kind != "name" or tokens[1] != ("punct", "("):
        raise ValueError(f"unexpected {text!r}")
    args, rest = [], tokens[2:]
    while rest[0] != ("punct", ")"):
        arg, rest = _call(rest, data, context, rng)
        args.append(arg)
        if rest[0] == ("punct", ","):
            rest = rest[1:]
    return _INTRINSICS[text](rng, *args), rest[1:]


def _format(_: random.Random, template: str, *args: Any) -> str:
    parts = template.split("{}")
    if len(parts) != len(args) + 1:
        raise ValueError("States.Format: argument count")
    out = parts[0]
    for arg, part in zip(args, parts[1:], strict=True):
        out += (json.dumps(arg) if not isinstance(arg, str) else arg) + part
    return out


_INTRINSICS: dict[str, Callable[..., Any]] = {
    "States.Format": _format,
    "States.Hash": lambda _, text, algorithm: hashlib.new(
        algorithm.lower(), text.encode()
    ).hexdigest(),
    "States.MathAdd": lambda _, a, b: a + b,
    "States.MathRandom": lambda rng, low, high: rng.randint(low, high),
    "States.StringToJson": lambda _, text: json.loads(text),
    # Step Functions serialises compactly, as this does.
    "States.JsonToString": lambda _, value: json.dumps(value, separators=(",", ":")),
}


def resolve(template: Any, data: Any, context: dict[str, Any], rng: random.Random) -> Any:
    """Parameters / ResultSelector: ``key.$`` values are evaluated, the rest copied."""
    if isinstance(template, dict):
        out = {}
        for key, value in template.items():
            if key.endswith(".$"):
                out[key[:-2]] = evaluate(value, data, context, rng)
            else:
                out[key] = resolve(value, data, context, rng)
        return out
    if isinstance(template, list):
        return [resolve(value, data, context, rng) for value in template]
    return template


def put_path(data: Any, path: str | None, value: Any) -> Any:
    """ResultPath: null keeps the input, ``$`` replaces it, ``$.a.b`` sets a field."""
    if path is None:
        return data
    if path == "$":
        return value
    out = copy.deepcopy(data)
    target = out
    keys = path[2:].split(".")
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value
    return out


# --- Choice rules ------------------------------------------------------------


def _operand(rule: dict, data: Any, context: dict, op: str) -> Any:
    if op.endswith("Path"):
        return read_path(rule[op], data, context)
    return rule[op]


def _string_matches(value: str, pattern: str) -> bool:
    # ASL: only '*' is a wildcard ('\\*' a literal star); nothing else is special.
    regex = "".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern))
    return re.fullmatch(regex, value, flags=re.DOTALL) is not None


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "NumericEquals": lambda a, b: a == b,
    "NumericLessThan": lambda a, b: a < b,
    "NumericGreaterThanEquals": lambda a, b: a >= b,
    "StringMatches": _string_matches,
}


def rule_holds(rule: dict, data: Any, context: dict[str, Any]) -> bool:
    if "And" in rule:
        return all(rule_holds(r, data, context) for r in rule["And"])
    if "Or" in rule:
        return any(rule_holds(r, data, context) for r in rule["Or"])
    if "Not" in rule:
        return not rule_holds(rule["Not"], data, context)
    value = read_path(rule["Variable"], data, context)
    for op in rule:
        if op in ("Variable", "Next"):
            continue
        base = op[:-4] if op.endswith("Path") else op
        if base not in _COMPARE:
            raise ValueError(f"Choice operator {op} is not simulated")
        return _COMPARE[base](value, _operand(rule, data, context, op))
    raise ValueError(f"empty Choice rule {rule}")


# --- one execution -----------------------------------------------------------


def _clock() -> Iterator[str]:
    second = 0
    while True:
        second += 1
        yield f"2030-01-01T00:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


DYNAMODB = {"dynamodb:updateItem": "update_item", "dynamodb:getItem": "get_item"}


@dataclass
class Execution:
    """One execution running the acquire fragment, a critical section, the release."""

    name: str
    arn: str
    states: dict[str, Any]
    dynamodb: Any
    rng: random.Random
    state: str = PREFIX + "Prepare"
    data: Any = field(default_factory=dict)
    entered: list[str] = field(default_factory=list)
    waits: int = 0
    # Fault injection: the next write of this state lands but its response is lost.
    lose_response_of: set[str] = field(default_factory=set)
    clock: Iterator[str] = field(default_factory=_clock)

    @property
    def done(self) -> bool:
        return self.state == RELEASED or self.failed is not None

    failed: str | None = None
    # The last Task's outcome: "ok", or the error it caught.
    outcome: str = ""

    @property
    def in_critical_section(self) -> bool:
        return self.state == PREFIX + "Release"

    def context(self) -> dict[str, Any]:
        return {"Execution": {"Id": self.arn}, "State": {"EnteredTime": next(self.clock)}}

    def at_dynamodb_step(self) -> bool:
        state = self.states.get(self.state, {})
        return state.get("Type") == "Task"

    def run_local(self) -> None:
        """Run Pass, Choice, Wait and Fail states up to the next Task (or the end)."""
        while not self.done and not self.at_dynamodb_step():
            if self.state == ACQUIRED:
                # The critical section itself is a no-op; the release is the next step.
                self.entered.append(ACQUIRED)
                self.state = PREFIX + "Release"
                return
            self._step()

    def step(self) -> str:
        """Run the next Task state and the local states after it; return the Task's name."""
        if not self.at_dynamodb_step():
            raise RuntimeError(f"{self.name} is not at a Task (at {self.state})")
        name = self.state
        self._step()
        self.run_local()
        return name

    def _step(self) -> None:
        name, state = self.state, self.states[self.state]
        self.entered.append(name)
        context = self.context()
        kind = state["Type"]
        if kind == "Pass":
            result = (
                resolve(state["Parameters"], self.data, context, self.rng)
                if "Parameters" in state
                else self.data
            )
            self.data = put_path(self.data, state.get("ResultPath", "$"), result)
            self._next(state)
        elif kind == "Choice":
            target = next(
                (c["Next"] for c in state["Choices"] if rule_holds(c, self.data, context)),
                state.get("Default"),
            )
            if target is None:
                raise RuntimeError(f"States.NoChoiceMatched in {name}")
            self.state = target
        elif kind == "Wait":
            self.waits += 1
            self._next(state)
        elif kind == "Fail":
            self.failed = state["Error"]
        elif kind == "Task":
            self._task(name, state, context)
        else:
            raise ValueError(f"state type {kind} is not simulated")

    def _next(self, state: dict[str, Any]) -> None:
        self.state = RELEASED if state.get("End") else state["Next"]

    def _task(self, name: str, state: dict[str, Any], context: dict[str, Any]) -> None:
        resource = state["Resource"].split(":::")[-1]
        method = getattr(self.dynamodb, DYNAMODB[resource])
        parameters = resolve(state["Parameters"], self.data, context, self.rng)
        try:
            response = method(**parameters)
            self.outcome = "ok"
            if name in self.lose_response_of:
                self.lose_response_of.discard(name)
                # The write landed; Step Functions saw a 500 and retries the state.
                return
        except ClientError as error:
            code = "DynamoDB." + error.response["Error"]["Code"]
            self.outcome = code
            for catcher in state.get("Catch", []):
                if code in catcher["ErrorEquals"] or "States.ALL" in catcher["ErrorEquals"]:
                    self.data = put_path(self.data, catcher.get("ResultPath", "$"), {"Error": code})
                    self.state = catcher["Next"]
                    return
            self.failed = code
            return
        response.pop("ResponseMetadata", None)
        if "ResultSelector" in state:
            response = resolve(state["ResultSelector"], response, context, self.rng)
        self.data = put_path(self.data, state.get("ResultPath", "$"), response)
        self._next(state)


# --- several executions on one lock item ----------------------------------------

TABLE = "demo-semaphore"
KEY = "semaphore"
MACHINE = "arn:aws:states:us-east-1:123456789012:execution:demo:"


def holders(item: dict[str, Any]) -> dict[str, str]:
    """holder attribute -> execution ARN."""
    return {k: v["M"]["execution_arn"]["S"] for k, v in item.items() if k.startswith("h_")}


def tickets(item: dict[str, Any]) -> dict[int, str]:
    """registered ticket -> execution ARN."""
    return {int(k[2:]): v["M"]["execution_arn"]["S"] for k, v in item.items() if k.startswith("t_")}


@dataclass
class Event:
    step: int
    execution: str
    state: str


class Scenario:
    """A FIFO semaphore (limit ``limit``) and executions stepped by a chosen schedule.

    After every step it checks what must hold at every instant: the count equals
    the leases, never exceeds the limit, and every execution in its critical
    section holds a lease. ``log`` keeps every Task step with the step number, the
    independent clock the fairness checks use.
    """

    def __init__(self, dynamodb: Any, limit: int, *, seed: int = 0, **variables: Any) -> None:
        self.dynamodb, self.limit = dynamodb, limit
        self.rng = random.Random(seed)
        settings = {
            "partition": "aws",
            "table_name": TABLE,
            "lock_key": KEY,
            "limit": limit,
            "lease_seconds": 3600,
            "wait_min_seconds": 1,
            "wait_max_seconds": 3,
            "acquire_timeout_seconds": 100000,
            **variables,
        }
        release = render(
            "release.states.json.tftpl",
            release_next=RELEASED,
            **{k: settings[k] for k in ("partition", "table_name", "lock_key")},
        )
        # fairness -> the machine an execution runs; "none" is an execution started
        # before fairness was switched on (it keeps the definition it started with).
        self.machines = {
            fairness: {**render(template, acquired_next=ACQUIRED, **settings), **release}
            for fairness, template in (
                ("fifo", "fifo_acquire.states.json.tftpl"),
                ("none", "acquire.states.json.tftpl"),
            )
        }
        dynamodb.put_item(
            TableName=TABLE,
            Item={
                "pk": {"S": KEY},
                "holder_count": {"N": "0"},
                "next_ticket": {"N": "0"},
                "served": {"N": "0"},
            },
        )
        self.executions: dict[str, Execution] = {}
        self.log: list[Event] = []
        self.admitted: list[str] = []
        # Fairness bookkeeping, from the steps themselves (not from the tickets):
        self.registered: dict[str, int] = {}  # waiting now: step of its registration
        self.first_ticket: dict[str, int] = {}  # step of its first Take ticket
        self.queued_admissions: list[tuple[str, int]] = []  # (name, registration step)
        self.unfair: set[str] = set()

    def start(self, name: str, fairness: str = "fifo") -> Execution:
        if fairness != "fifo":
            self.unfair.add(name)  # may overtake: it never looks at the queue
        execution = Execution(
            name=name,
            arn=MACHINE + name,
            states=self.machines[fairness],
            dynamodb=self.dynamodb,
            rng=self.rng,
        )
        execution.run_local()
        self.executions[name] = execution
        return execution

    def item(self) -> dict[str, Any]:
        return self.dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": KEY}}, ConsistentRead=True)[
            "Item"
        ]

    def step(self, name: str) -> str:
        execution = self.executions[name]
        was_inside = execution.in_critical_section
        state = execution.step()
        now = len(self.log)
        self.log.append(Event(now, name, state))
        ok = execution.outcome == "ok"
        if state == PREFIX + "Take ticket" and ok:
            self.first_ticket.setdefault(name, now)
            self.registered.pop(name, None)
        if state == PREFIX + "Join queue" and ok:
            self.registered[name] = now
        if state == PREFIX + "Leave queue, timed out":
            self.registered.pop(name, None)
        if execution.in_critical_section and not was_inside:
            self.admitted.append(name)
            registration = self.registered.pop(name, None)
            if state == PREFIX + "Acquire" and name not in self.unfair:
                assert not self.registered, (
                    f"{name} took a slot on the fast path past waiting {sorted(self.registered)}"
                )
            elif registration is not None:
                self.queued_admissions.append((name, registration))
        if ok and state not in self.READS:
            self.check()
        return state

    # Steps that change nothing: no need to re-check the invariants after them.
    READS = frozenset({PREFIX + "Read queue"})

    def check_order(self) -> None:
        """An execution registered before another drew its first ticket is admitted first."""
        position = {name: i for i, (name, _) in enumerate(self.queued_admissions)}
        for a, registered_at in self.queued_admissions:
            for b in self.first_ticket:
                if b != a and registered_at < self.first_ticket[b] and b in self.admitted:
                    assert b in position and position[a] < position[b], (
                        f"{b} (first ticket at step {self.first_ticket[b]}) overtook {a} "
                        f"(registered at step {registered_at}): admissions {self.admitted}"
                    )

    def run(self, name: str, until: Callable[[Execution], bool], limit: int = 200) -> None:
        """Step one execution until ``until`` holds (at most ``limit`` steps)."""
        execution = self.executions[name]
        for _ in range(limit):
            if until(execution):
                return
            self.step(name)
        raise AssertionError(f"{name} did not get there in {limit} steps: at {execution.state}")

    def runnable(self) -> list[str]:
        return [name for name, e in self.executions.items() if not e.done]

    def finish(self, max_steps: int = 2000) -> None:
        """Round-robin every execution to its end; fail if one never gets a slot."""
        for _ in range(max_steps):
            names = self.runnable()
            if not names:
                return
            # Holders first: a waiter's poll before a release only repeats itself.
            names.sort(key=lambda name: not self.executions[name].in_critical_section)
            for name in names:
                self.step(name)
        stuck = {n: self.executions[n].state for n in self.runnable()}
        raise AssertionError(f"executions never finished (starved or livelocked): {stuck}")

    def check(self) -> None:
        item = self.item()
        leases = holders(item)
        count = int(item["holder_count"]["N"])
        assert count == len(leases), f"holder_count {count} but leases {leases}"
        assert count <= self.limit, f"{count} holders at limit {self.limit}: {leases}"
        inside = {e.arn for e in self.executions.values() if e.in_critical_section}
        assert inside <= set(leases.values()), (
            f"in the critical section without a lease: {inside - set(leases.values())}"
        )
        assert int(item["served"]["N"]) <= int(item["next_ticket"]["N"]), item
