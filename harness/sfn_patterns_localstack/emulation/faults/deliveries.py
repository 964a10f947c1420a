"""EventBridge delivers at least once: an event sent twice, late, or (rarely) not at all.

LocalStack 4.14.0 sends a matched event to a rule's targets exactly once: PutEvents
starts one worker thread (``EventsProvider._process_rules_async``) that calls
``EventsProvider._process_rules(rule, region, account_id, event_formatted,
trace_header)`` for each rule of the bus, one after another (4.9.2 made the same calls
on the request's thread). The patch wraps ``_process_rules``: when the event matches
the rule (the only case that is a delivery), the injector decides for service
``events``, operation ``PutEvents`` and resource = the rule's name; ``event_drop``
skips the rule's targets, ``event_duplicate`` sends to them twice, ``event_delay``
sends after ``seconds`` on a timer thread.

Events from services (Step Functions' status changes) reach ``_process_rules`` the
same way, so the faults apply to them too.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from typing import Any

from sfn_patterns_localstack.emulation.faults.injector import INJECTOR, Call
from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)


def deliver(original: Any, provider: Any, rule: Any, args: tuple, kwargs: dict) -> None:
    """Send one matched event to ``rule``'s targets the way the plan says."""
    fired = INJECTOR.decide("delivery", Call("events", "PutEvents", resource=rule.name))
    kind = fired[-1].kind if fired else None
    if kind == "event_drop":
        return
    if kind == "event_delay":
        timer = threading.Timer(fired[-1].seconds or 0.0, original, (provider, rule, *args), kwargs)
        timer.daemon = True
        timer.start()
        return
    original(provider, rule, *args, **kwargs)
    if kind == "event_duplicate":
        original(provider, rule, *args, **kwargs)


def apply() -> bool:
    """Wrap 4.14.0's ``_process_rules`` once; False (nothing changed) on another version."""
    try:
        from localstack import version
        from localstack.services.events.provider import EventsProvider
        from localstack.utils.event_matcher import matches_event
    except ImportError:
        return False
    original = getattr(EventsProvider, "_process_rules", None)
    if getattr(original, "_sfnp_faults", False):
        return True
    if (
        version.__version__ != LOCALSTACK_VERSION
        or original is None
        # The event is the third argument after the rule (read below).
        or list(inspect.signature(original).parameters)[:5]
        != ["self", "rule", "region", "account_id", "event_formatted"]
    ):
        LOG.warning(
            "sfn-patterns: EventBridge delivery faults not available (localstack %s)",
            version.__version__,
        )
        return False

    @functools.wraps(original)
    def _process_rules(self: Any, rule: Any, *args: Any, **kwargs: Any) -> None:
        if not INJECTOR.active("delivery") or getattr(rule, "state", None) == "DISABLED":
            original(self, rule, *args, **kwargs)
            return
        event = args[2] if len(args) > 2 else kwargs.get("event_formatted")
        if event is None or not matches_event(rule.event_pattern, event):
            original(self, rule, *args, **kwargs)
            return
        deliver(original, self, rule, args, kwargs)

    _process_rules._sfnp_faults = True  # type: ignore[attr-defined]
    EventsProvider._process_rules = _process_rules
    return True
