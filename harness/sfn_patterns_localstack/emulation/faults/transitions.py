"""Step Functions' state-transition throttling: a state entered late (LocalStack 4.14.0).

AWS meters an account's state transitions with a token bucket per Region (Standard
workflows: "StateTransition" in the Step Functions quotas). Over it, a transition is
not refused and the execution does not fail: it waits for the bucket to refill, and
CloudWatch counts it in ``AWS/States`` ``ExecutionThrottled`` ("the number of
StateEntered events and retries that have been throttled"). LocalStack 4.14.0 never
throttles one (its ``stepfunctions`` service has no transition quota at all).

The patch wraps ``CommonStateField._eval_body``, where every state of every execution
is entered (its ``StateEntered`` event is the body's first line): with a
``transition_throttle`` fault in the plan, the injector decides for service
``stepfunctions``, operation ``StateTransition``, resource = the state machine's ARN;
a throttled transition sleeps ``seconds`` before the state is entered and each
listener is told (the metrics emulation publishes ``ExecutionThrottled``). A fault
package that published metrics itself would tie the two emulations together; the
listener keeps the metrics on their side.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from sfn_patterns_localstack.emulation.faults.injector import INJECTOR, Call
from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
STAGE = "transition"
# Called with (state machine ARN, the execution's account, its region) once per
# throttled transition; exceptions are logged, never raised into the execution.
LISTENERS: list[Callable[[str, str, str], None]] = []


def apply() -> bool:
    """Wrap 4.14.0's ``CommonStateField._eval_body`` once; False on another version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.asl.component.state.state import CommonStateField
    except ImportError:
        return False
    original = getattr(CommonStateField, "_eval_body", None)
    if version.__version__ != LOCALSTACK_VERSION or original is None:
        LOG.warning("sfn-patterns: transition throttling not available (localstack %s)",
                    version.__version__)  # fmt: skip
        return False
    if getattr(original, "_sfnp_faults", False):
        return True

    @functools.wraps(original)
    def _eval_body(self: Any, env: Any) -> None:
        if INJECTOR.active(STAGE):
            throttle(env)
        original(self, env)

    _eval_body._sfnp_faults = True  # type: ignore[attr-defined]
    CommonStateField._eval_body = _eval_body
    return True


def throttle(env: Any, sleep: Callable[[float], None] = time.sleep) -> float:
    """Hold a transition the plan throttles; the seconds it waited (0: not throttled)."""
    machine = state_machine_arn(env)
    if machine is None:
        return 0.0
    fired = INJECTOR.decide(STAGE, Call("stepfunctions", "StateTransition", resource=machine))
    waited = sum(fault.seconds or 0.0 for fault in fired)
    if not fired:
        return 0.0
    parts = machine.split(":")
    account, region = (parts[4], parts[3]) if len(parts) > 5 else ("000000000000", "us-east-1")
    for listener in list(LISTENERS):
        try:
            listener(machine, account, region)
        except Exception:  # a listener never breaks an execution
            LOG.exception("transition throttle listener failed")
    sleep(waited)
    return waited


def state_machine_arn(env: Any) -> str | None:
    """The ARN of the state machine an execution's environment runs, or None."""
    try:
        machine = env.states.context_object.context_object_data["StateMachine"]["Id"]
    except (AttributeError, KeyError, TypeError):
        return None
    return machine if isinstance(machine, str) else None
