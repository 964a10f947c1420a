"""Unit tests: execution names and producer messages (no AWS)."""

from __future__ import annotations

import json
import re

import pytest

from sfn_patterns.sqs_throttle import build_message, execution_arn, execution_name
from sfn_patterns.sqs_throttle.starter import request_id_of

# Runtime-library tests: also run on Python 3.9 and 3.13 (tests/tooling/test_python_versions.py).
pytestmark = pytest.mark.runtime

# Step Functions' rule: 1-80 characters, none of whitespace, brackets, wildcards,
# " # % \ ^ | ~ ` $ & , ; : / or control characters.
FORBIDDEN = re.compile(r"[\s<>{}\[\]?*\"#%\\^|~`$&,;:/\x00-\x1f\x7f-\x9f]")


@pytest.mark.parametrize(
    "request_id",
    ["order-7", "a b/c:d#e", "é" * 300, "x" * 1024, "---", "tenant/42;drop", "日本"],
)
def test_execution_name_is_valid_and_stable(request_id: str) -> None:
    name = execution_name(request_id)
    assert 1 <= len(name) <= 80
    assert not FORBIDDEN.search(name)
    assert execution_name(request_id) == name


def test_ids_that_sanitize_alike_get_different_names() -> None:
    names = {execution_name(r) for r in ["a b", "a/b", "a_b", "a:b", "A b"]}
    assert len(names) == 5
    assert execution_name("order-7").startswith("order-7-")


def test_execution_name_rejects_empty() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        execution_name("")


def test_execution_arn_of_a_standard_machine() -> None:
    arn = "arn:aws:states:us-east-1:123456789012:stateMachine:target"
    assert execution_arn(arn, "n1") == "arn:aws:states:us-east-1:123456789012:execution:target:n1"
    with pytest.raises(ValueError, match="not a state machine ARN"):
        execution_arn("arn:aws:states:us-east-1:123456789012:activity:x", "n1")


def test_build_message_defaults_and_request_id() -> None:
    first = build_message({"b": 1, "a": [1, 2]})
    again = build_message({"a": [1, 2], "b": 1})
    assert first == again  # canonical JSON: same payload, same dedup id
    assert json.loads(first["MessageBody"]) == {"a": [1, 2], "b": 1}
    assert first["MessageGroupId"] == "default"
    assert (
        first["MessageAttributes"]["request_id"]["StringValue"] == first["MessageDeduplicationId"]
    )

    # An explicit request id is also the default SQS deduplication id (hashed when
    # SQS would refuse it), so two requests with one payload are two messages.
    one = build_message({"x": 1}, request_id="r-1")
    two = build_message({"x": 1}, request_id="r-2")
    assert one["MessageDeduplicationId"] == "r-1"
    assert two["MessageDeduplicationId"] == "r-2"
    spaced = build_message({"x": 1}, request_id="has a space")
    assert len(spaced["MessageDeduplicationId"]) == 64
    assert spaced["MessageAttributes"]["request_id"]["StringValue"] == "has a space"

    explicit = build_message({"x": 1}, dedup_id="d-1", group_id="g", request_id="r-1")
    assert explicit["MessageDeduplicationId"] == "d-1"
    assert explicit["MessageAttributes"]["request_id"]["StringValue"] == "r-1"
    # The starter reads the attribute first, then falls back to the dedup id.
    message = {
        "MessageAttributes": explicit["MessageAttributes"],
        "Attributes": {"MessageDeduplicationId": "d-1"},
    }
    assert request_id_of(message) == "r-1"
    assert request_id_of({"Attributes": {"MessageDeduplicationId": "d-1"}}) == "d-1"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dedup_id": "has space"}, "dedup_id"),
        ({"group_id": ""}, "group_id"),
        ({"dedup_id": "x" * 129}, "dedup_id"),
        ({"request_id": "r" * 1025}, "request_id"),
    ],
)
def test_build_message_rejects_invalid_ids(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build_message({"x": 1}, **kwargs)


def test_build_message_rejects_oversized_payload() -> None:
    with pytest.raises(ValueError, match="larger than"):
        build_message({"blob": "x" * (256 * 1024)})
