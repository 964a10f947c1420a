"""What the throttle guarantees, checked from the executions the run created and the queue.

Why from the history: the checker must not trust the code it checks, and the starter's
own view (its count, its ledger, its run report) is exactly what could be wrong. It reads
only what the run recorded and the world the code acted on: each execution the Step
Functions stand-in created (a write of a new ``sfn:<ARN>`` item, attributed to the actor
that sent the ``StartExecution``) and its input, the executions' statuses in the stand-in,
and, at the end, the messages left in the queue. Which request an execution serves is
read from its input (the request's message body, ``{"request": ...}``), not from its
name, which the code derives.

The invariants (modules/sqs-throttle/README.md, "Guarantees"):

``at-most-max``
    Never more than MAX executions run at once: after every step, the stand-in's
    executions that are ``RUNNING`` are at most MAX.
``exactly-once``
    Each request is admitted once: no second execution is ever created for a request
    (checked as it is created), and at quiescence every request has its execution, or a
    message of it is still in the queue for a later run (possible only once every
    schedule crashed). A request with neither was lost.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sfn_patterns_localstack.interleavings import sfn, sqs
from sfn_patterns_localstack.interleavings.protocol import Checker, RunView
from sfn_patterns_localstack.interleavings.scheduler import Event, Write


@dataclass(frozen=True)
class Admission:
    """An execution the run created: its name, the request it serves, who started it."""

    name: str
    request: str
    actor: int


def request_of(body: object) -> str:
    """The request a message body (an execution's input) carries; "?" if it carries none."""
    try:
        payload = json.loads(str(body))
    except ValueError:
        return "?"
    return str(payload.get("request", "?")) if isinstance(payload, dict) else "?"


class ThrottleChecker(Checker):
    """The throttle's invariants over one run.

    Args:
        requests: The request ids the queue started with.
        max_concurrent: MAX.

    """

    def __init__(self, requests: Sequence[str], max_concurrent: int) -> None:
        self.requests = list(requests)
        self.max_concurrent = max_concurrent
        self.admitted: dict[str, Admission] = {}  # request -> its first execution
        self.by_arn: dict[str, Admission] = {}
        self._seen = 0

    def after_step(self, view: RunView) -> list[str]:
        """Account for each new execution; the invariants broken now."""
        assert view.sfn is not None, "the throttle runs with the Step Functions stand-in"
        broken: list[str] = []
        events: Sequence[Event] = view.events
        for event in events[self._seen :]:
            if isinstance(event, Write) and event.actor is not None:
                broken += self._created(event, view)
        self._seen = len(events)
        running = [e.arn for e in view.sfn.executions() if e.status == sfn.RUNNING]
        if len(running) > self.max_concurrent:
            who = ", ".join(self._who(arn) for arn in running)
            broken.append(
                f"at-most-max: {len(running)} executions running at once with MAX "
                f"{self.max_concurrent}: {who}"
            )
        return broken

    def at_quiescence(self, view: RunView) -> list[str]:
        """Every request has its execution, or a message still queued."""
        assert view.queue is not None, "the throttle runs with its queue"
        queued = {request_of(m["body"]) for m in view.queue.snapshot().values()}
        return [
            f"exactly-once: request {request} was lost: no execution was started for it and "
            "no message of it is left in the queue"
            for request in self.requests
            if request not in self.admitted and request not in queued
        ]

    def _who(self, arn: str) -> str:
        admission = self.by_arn.get(arn)
        return f"{admission.request} (actor {admission.actor})" if admission else arn

    def _created(self, write: Write, view: RunView) -> list[str]:
        assert write.actor is not None and view.sfn is not None
        broken = []
        for key, old in write.before.items():
            new = write.after.get(key)
            if not key.startswith(sfn.KEY_PREFIX) or old is not None or new is None:
                continue
            arn = key[len(sfn.KEY_PREFIX) :]
            given = view.sfn.execution(arn).input
            admission = Admission(str(new["name"]), request_of(given), write.actor)
            self.by_arn[arn] = admission
            earlier = self.admitted.get(admission.request)
            if admission.request not in self.requests:
                broken.append(
                    f"exactly-once: actor {write.actor} started {admission.name} for no request "
                    f"of the queue (input {given!r})"
                )
            elif earlier is not None:
                broken.append(
                    f"exactly-once: request {admission.request} admitted twice: {earlier.name} "
                    f"(actor {earlier.actor}) and {admission.name} (actor {write.actor})"
                )
            self.admitted.setdefault(admission.request, admission)
        return broken


def describe_write(write: Write) -> str:
    """One trace line for a write to the ledger, the queue or the executions."""
    parts = []
    for key, old in write.before.items():
        new = write.after.get(key)
        parts.append(_change(key, old, new))
    who = "setup" if write.actor is None else f"actor {write.actor}"
    return f"{who} {write.operation} landed: {'; '.join(parts)}"


def _change(key: str, old: Mapping | None, new: Mapping | None) -> str:
    if key.startswith(sfn.KEY_PREFIX):
        name = key.rsplit(":", 1)[-1]
        before, after = (item.get("status") if item else "absent" for item in (old, new))
        return f"execution {name}: {before} -> {after}"
    if key.startswith(sqs.KEY_PREFIX):
        return _message_change(key[len(sqs.KEY_PREFIX) :], old, new)
    if new is None:
        return f"ledger {key} deleted"
    if "owner" in new:
        until = datetime.fromtimestamp(float(new["until"]), UTC).strftime("%H:%M:%S")
        return f"lease: {new['owner']} until {until}"
    return f"ledger {key} recorded"


def _message_change(message: str, old: Mapping | None, new: Mapping | None) -> str:
    if new is None:
        return f"message {message} deleted"
    if old is None:
        return f"message {message} sent"
    visible = datetime.fromtimestamp(new["visible_at"] / 1000, UTC).strftime("%H:%M:%S")
    return f"message {message}: received {new['receives']}x, hidden until {visible}"
