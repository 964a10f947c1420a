"""events_rule_state (providers.py): a disabled EventBridge rule delivers nothing.

Plain LocalStack 4.14.0 keeps sending a disabled rule's matching events and keeps
firing its schedule. The pattern case runs against the harness's LocalStack; the
schedule case calls the provider's own job function (a real schedule fires at most
once a minute).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from sfn_patterns_localstack.emulation.fixes import events_rule_state
from sfn_patterns_localstack.roles import events_to_queue_policy


def test_it_applies_to_the_pinned_version() -> None:
    assert events_rule_state.apply() is True


class _Sender:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def process_event(self, event: dict[str, Any], trace_header: Any) -> None:
        self.events.append(event)


@pytest.mark.parametrize("state, sent", [("DISABLED", 0), ("ENABLED", 1)])
def test_a_scheduled_rule_fires_only_while_enabled(state: str, sent: int) -> None:
    assert events_rule_state.apply()
    sender = _Sender()
    rule = SimpleNamespace(
        state=state, arn="arn:aws:events:us-east-1:000000000000:rule/r", targets={"t": {"Id": "t"}}
    )
    provider = SimpleNamespace(_target_sender_store={f"{rule.arn}-t": sender})
    from localstack.services.events.provider import EventsProvider

    job = EventsProvider._get_scheduled_rule_job_function(
        provider, "000000000000", "us-east-1", rule
    )
    job()
    assert len(sender.events) == sent
    assert all(e["detail-type"] == "Scheduled Event" for e in sender.events)


def _received(sqs: Any, queue_url: str, wait: int) -> list[dict[str, Any]]:
    return sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=wait).get("Messages", [])


@pytest.mark.integration
def test_a_disabled_pattern_rule_sends_no_event_until_enabled_again(aws: Callable) -> None:
    tag = uuid.uuid4().hex[:8]
    sqs, events = aws("sqs"), aws("events")
    queue_url = sqs.create_queue(QueueName=f"rule-state-{tag}")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    rule = f"rule-state-{tag}"
    source = f"sfnp.test.{tag}"
    rule_arn = events.put_rule(Name=rule, EventPattern=json.dumps({"source": [source]}))["RuleArn"]
    sqs.set_queue_attributes(
        QueueUrl=queue_url, Attributes={"Policy": events_to_queue_policy(queue_arn, [rule_arn])}
    )
    events.put_targets(Rule=rule, Targets=[{"Id": "queue", "Arn": queue_arn}])

    def put(marker: str) -> None:
        events.put_events(
            Entries=[{"Source": source, "DetailType": "t", "Detail": json.dumps({"m": marker})}]
        )

    try:
        events.disable_rule(Name=rule)
        put("while-disabled")
        time.sleep(1)
        assert _received(sqs, queue_url, wait=2) == []

        events.enable_rule(Name=rule)
        put("enabled")
        messages = _received(sqs, queue_url, wait=10)
        assert [json.loads(m["Body"])["detail"]["m"] for m in messages] == ["enabled"]
    finally:
        events.remove_targets(Rule=rule, Ids=["queue"])
        events.delete_rule(Name=rule)
        sqs.delete_queue(QueueUrl=queue_url)
