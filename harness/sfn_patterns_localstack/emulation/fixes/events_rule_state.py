"""A disabled EventBridge rule delivers nothing (LocalStack 4.14.0).

LocalStack 4.14.0's DisableRule (``EventsProvider.disable_rule``) only records the
state: an event that matches the rule's pattern is still sent to its targets
(``_process_rules``, now called from the thread ``_process_rules_async`` starts per
PutEvents, checks the pattern only), and a scheduled rule's job still fires
(``JobScheduler.disable_job`` exists but nothing calls it; the job's ``enabled`` flag
is read from the state once, when ``Rule.create_schedule_job`` adds it). In AWS a
disabled rule matches no event and its schedule stops.

The semaphore tests rely on it: they invoke the reconciler themselves and disable its
``rate(5 minutes)`` schedule so a sweep on the wall clock cannot free a slot in the
middle of a test (seen: a CI run where the scheduled sweep released the leaked holder
a moment before the test's own sweep, which then found nothing to release).

The patch checks the rule's state where LocalStack sends to targets: in
``_process_rules`` (pattern rules) and in the function
``_get_scheduled_rule_job_function`` makes for the scheduled job. EnableRule needs
nothing: the checks read the state at delivery time.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
DISABLED = "DISABLED"


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.events.provider import EventsProvider
    except ImportError:
        return False
    if (
        version.__version__ != LOCALSTACK_VERSION
        or not hasattr(EventsProvider, "_process_rules")
        or not hasattr(EventsProvider, "_get_scheduled_rule_job_function")
    ):
        LOG.warning(
            "sfn-patterns rule-state patch not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(EventsProvider._process_rules, "_sfnp_patched", False):
        return True

    original_process = EventsProvider._process_rules
    original_job = EventsProvider._get_scheduled_rule_job_function

    @functools.wraps(original_process)
    def _process_rules(self: Any, rule: Any, *args: Any, **kwargs: Any) -> None:
        if rule.state == DISABLED:
            return
        original_process(self, rule, *args, **kwargs)

    @functools.wraps(original_job)
    def _get_scheduled_rule_job_function(self: Any, account_id: str, region: str, rule: Any) -> Any:
        send = original_job(self, account_id, region, rule)

        @functools.wraps(send)
        def job(*args: Any, **kwargs: Any) -> None:
            if rule.state == DISABLED:
                return
            send(*args, **kwargs)

        return job

    _process_rules._sfnp_patched = True  # type: ignore[attr-defined]
    EventsProvider._process_rules = _process_rules
    EventsProvider._get_scheduled_rule_job_function = _get_scheduled_rule_job_function
    return True
