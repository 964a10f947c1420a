"""``AWS/Events`` ``Invocations`` and ``FailedInvocations`` per rule (LocalStack 4.14.0).

LocalStack's EventBridge delivers a matched event to each target of a rule through
the target's ``TargetSender.process_event`` and only logs a failure
(``TargetDeliveryFailure``): it publishes no metric. AWS publishes, by ``RuleName``:

* ``Invocations``: a target was invoked for the rule;
* ``FailedInvocations``: an invocation that failed permanently (a target that no
  longer exists, a role that may not call it).

The patch wraps ``process_event`` and counts each: a datum per delivery, through
the sink. LocalStack retries nothing, so every failed delivery is a permanent one
here; on AWS a retryable failure (the target throttled) is retried under the
target's retry policy first and counted only once that gives up.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

from .sink import SINK, Datum, dimensions

LOG = logging.getLogger(__name__)
NAMESPACE = "AWS/Events"


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.events.target import TargetSender
    except ImportError:
        return False
    original = getattr(TargetSender, "process_event", None)
    if version.__version__ != LOCALSTACK_VERSION or original is None:
        LOG.warning(
            "sfn-patterns EventBridge metrics not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.wraps(original)
    def process_event(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            result = original(self, *args, **kwargs)
        except Exception:
            SINK.put(self.account_id, self.region, delivery_data(self.rule_name, failed=True))
            raise
        SINK.put(self.account_id, self.region, delivery_data(self.rule_name, failed=False))
        return result

    process_event._sfnp_patched = True
    TargetSender.process_event = process_event
    return True


def delivery_data(rule_name: str, *, failed: bool) -> list[Datum]:
    """The data of one delivery to one target of ``rule_name``."""
    per_rule = dimensions(RuleName=rule_name)
    data = [Datum(NAMESPACE, "Invocations", 1, per_rule, "Count")]
    if failed:
        data.append(Datum(NAMESPACE, "FailedInvocations", 1, per_rule, "Count"))
    return data
